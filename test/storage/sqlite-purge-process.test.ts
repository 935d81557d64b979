import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { createSqliteDialect } from '../../src/storage/sql/dialects/sqlite.js';
import { createSqlitePurgeProcess } from '../../src/storage/sql/dialects/sqlite-purge-process.js';
import { createSqlStorage } from '../../src/storage/sql/index.js';
import type { QueryEvent } from '../../src/storage/sql/query-observer.js';
import { alive, LINUX, SCHED_OTHER, threadPriorities } from '../helpers/processes.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function tempDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-purge-process-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

describe('SQLite purge process', () => {
  it('runs statements in its own process, with foreign keys enforced, at nice 19, and reports failures', async () => {
    const { dir, remove } = tempDir();
    const filename = join(dir, 'db.sqlite');
    const { raw, stopCheckpointer } = createSqliteDialect({ filename });
    const purgeProcess = createSqlitePurgeProcess(filename, 'NORMAL');
    try {
      raw.exec(`CREATE TABLE parent (id INTEGER PRIMARY KEY);
        CREATE TABLE child (id INTEGER PRIMARY KEY, parent INTEGER NOT NULL REFERENCES parent (id) ON DELETE CASCADE);
        INSERT INTO parent (id) VALUES (1), (2), (3);
        INSERT INTO child (id, parent) VALUES (10, 1), (11, 1), (12, 2);`);
      assert.equal(purgeProcess.pid, undefined, 'started on first use only');
      const run = await purgeProcess.run('DELETE FROM parent WHERE id <= ?', [2]);
      assert.equal(run.changes, 2);
      assert.ok(run.millis >= 0 && run.millis < 1000, `${run.millis} ms`);
      const pid = purgeProcess.pid;
      assert.ok(pid !== undefined && pid !== process.pid, 'another process');
      // This connection sees the committed delete, cascade included.
      assert.deepEqual(raw.prepare('SELECT id FROM parent').pluck().all(), [3]);
      assert.deepEqual(raw.prepare('SELECT id FROM child').pluck().all(), []);

      if (LINUX) {
        const threads = threadPriorities(pid);
        assert.ok(
          threads.every((thread) => thread.nice === 19),
          `nice ${threads.map((x) => x.nice).join(',')}`,
        );
        // SCHED_OTHER, not SCHED_IDLE: a share of a busy core, not only what idle cores leave.
        assert.ok(
          threads.every((thread) => thread.policy === SCHED_OTHER),
          `policies ${threads.map((x) => x.policy).join(',')}`,
        );
        assert.equal(threadPriorities(process.pid)[0]?.nice, 0, 'this process keeps its priority');
      }

      await assert.rejects(purgeProcess.run('DELETE FROM nowhere', []), /no such table: nowhere/);
      assert.equal(purgeProcess.usable, true, 'a failed statement leaves the process running');
      await purgeProcess.stop();
      assert.equal(alive(pid), false, 'stopped');
      assert.equal(purgeProcess.usable, false);
      await assert.rejects(purgeProcess.run('SELECT 1', []), /purge process ended/);
    } finally {
      await purgeProcess.stop();
      await stopCheckpointer();
      raw.close();
      remove();
    }
  });

  it('checkpoints the WAL soon after its own deletes, and reports the checkpoint with the next statement', async () => {
    const { dir, remove } = tempDir();
    const filename = join(dir, 'db.sqlite');
    // A connection that never checkpoints by itself (no checkpoint thread, auto-checkpoint off).
    const raw = new BetterSqlite3(filename);
    raw.pragma('journal_mode = WAL');
    raw.pragma('wal_autocheckpoint = 0');
    const purgeProcess = createSqlitePurgeProcess(filename, 'NORMAL');
    try {
      raw.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
      const insert = raw.prepare('INSERT INTO t (v) VALUES (?)');
      raw.transaction(() => {
        for (let i = 0; i < 2000; i++) insert.run('x'.repeat(200));
      })();
      assert.ok(statSync(`${filename}-wal`).size > 100_000, 'the WAL holds the writes');
      const run = await purgeProcess.run('DELETE FROM t WHERE id <= ?', [100]);
      assert.equal(run.changes, 100);
      await sleep(700);
      // After a complete checkpoint the next write starts the WAL over instead of growing it.
      raw.transaction(() => {
        for (let i = 0; i < 10; i++) insert.run('y');
      })();
      const [{ log }] = raw.pragma('wal_checkpoint(PASSIVE)') as [{ log: number }];
      assert.ok(log < 20, `${log} WAL frames: the purge process did not checkpoint`);
      // The checkpoint's CPU time comes with the next reply, for the purger's pacing.
      assert.equal(run.checkpointMillis, 0, 'nothing checkpointed before the first statement');
      const next = await purgeProcess.run('DELETE FROM t WHERE id <= ?', [200]);
      assert.equal(next.changes, 100);
      assert.ok(next.checkpointMillis > 0, `checkpoint ${next.checkpointMillis} ms`);
    } finally {
      await purgeProcess.stop();
      raw.close();
      remove();
    }
  });

  it("waits for another connection's write lock without holding up the event loop, reports its CPU time, and is counted in the store metrics", async () => {
    const { dir, remove } = tempDir();
    const storage = createSqlStorage({ dataDir: dir });
    const events: QueryEvent[] = [];
    try {
      await storage.migrate();
      const now = Math.floor(Date.now() / 1000);
      await storage.db
        .insertInto('throttle')
        .values(Array.from({ length: 50 }, (_, i) => ({ key: `dead:${i}`, count: 1, reset_at: now - 60 })))
        .execute();
      storage.observeQueries((event) => events.push(event));

      // Another connection (as the CLI beside a running server would) holds the write lock.
      const other = createSqliteDialect({ filename: join(dir, 'gatehouse.db') });
      other.raw.exec('BEGIN IMMEDIATE');
      let settled = false;
      const batch = storage.purge
        .purgeBatch('throttle', { now, revokedAccessTokensExpiredBefore: now, grantsRevokedBefore: now }, 20)
        .finally(() => (settled = true));
      // Timers keep firing while the batch waits: on the request connection, better-sqlite3 would
      // have blocked this thread in SQLite's busy handler until the lock was released.
      let longestTick = 0;
      for (let i = 0; i < 10; i++) {
        const started = performance.now();
        await sleep(50);
        longestTick = Math.max(longestTick, performance.now() - started);
      }
      assert.ok(longestTick < 1000, `a 50 ms timer took ${Math.round(longestTick)} ms`);
      assert.equal(settled, false, 'the batch waits for the lock');
      other.raw.exec('COMMIT');
      await other.stopCheckpointer();
      other.raw.close();

      const result = await batch;
      assert.equal(result.rows, 20);
      // Its cost is its CPU time, not the half second it waited for the lock (nor, under load, the
      // time requests preempted it): the purger sizes and paces batches by it.
      assert.ok(result.millis < 250, `reported ${result.millis} ms`);
      const left = await storage.db
        .selectFrom('throttle')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      assert.equal(Number(left.n), 30);
      const raw = events.filter((event) => event.operation === 'raw');
      assert.equal(raw.length, 1);
      assert.equal(raw[0]?.failed, false);
    } finally {
      await storage.close();
      remove();
    }
  });

  it('ends when the server process dies (SIGKILL), leaving no orphan', async (t) => {
    if (!LINUX) {
      t.skip('needs Linux /proc');
      return;
    }
    const { dir, remove } = tempDir();
    const storageModule = new URL('../../src/storage/sql/index.js', import.meta.url).href;
    const script = `
      const { createSqlStorage } = await import(${JSON.stringify(storageModule)});
      const storage = createSqlStorage({ dataDir: ${JSON.stringify(dir)} });
      await storage.migrate();
      const now = Math.floor(Date.now() / 1000);
      await storage.purge.purgeBatch('throttle', { now, revokedAccessTokensExpiredBefore: now, grantsRevokedBefore: now }, 10);
      const children = require('node:fs').readFileSync('/proc/' + process.pid + '/task/' + process.pid + '/children', 'utf8');
      process.stdout.write(children.trim() + '\\n');
      setInterval(() => {}, 1000);
    `;
    const server = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { createRequire } from 'node:module'; const require = createRequire(import.meta.url); ${script}`,
      ],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let out = '';
        server.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          out += chunk;
          if (out.includes('\n')) resolve(out.trim());
        });
        server.once('exit', (code) => reject(new Error(`the server script exited (${code})`)));
      });
      const children = line
        .split(' ')
        .map(Number)
        .filter((pid) => pid > 0);
      assert.equal(children.length, 1, `children: ${line}`);
      const purgePid = children[0]!;
      assert.equal(alive(purgePid), true);
      server.kill('SIGKILL');
      const deadline = Date.now() + 5000;
      while (alive(purgePid) && Date.now() < deadline) await sleep(50);
      // A zombie would still answer kill(0) until reaped; /proc/<pid>/stat says which.
      const gone = !alive(purgePid) || readFileSync(`/proc/${purgePid}/stat`, 'utf8').includes(') Z ');
      assert.ok(gone, 'the purge process outlived the server');
    } finally {
      server.kill('SIGKILL');
      remove();
    }
  });
});
