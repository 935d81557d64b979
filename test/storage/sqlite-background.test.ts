import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createSqliteDialect } from '../../src/storage/sql/dialects/sqlite.js';
import { createSqlStorage } from '../../src/storage/sql/index.js';
import type { QueryEvent } from '../../src/storage/sql/query-observer.js';
import { SCHED_IDLE, threadNiceValues, threadPolicies } from '../helpers/threads.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function tempDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-background-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

describe('SQLite background thread', () => {
  it('checkpoints the WAL from a low-priority thread', async (t) => {
    if (!existsSync('/proc/self/task')) {
      t.skip('needs Linux /proc');
      return;
    }
    const { dir, remove } = tempDir();
    const filename = join(dir, 'db.sqlite');
    const before = threadNiceValues().filter((nice) => nice === 19).length;
    const idleBefore = threadPolicies().filter((policy) => policy === SCHED_IDLE).length;
    const { raw, background } = createSqliteDialect({ filename });
    try {
      raw.exec('CREATE TABLE t (v TEXT)');
      const insert = raw.prepare('INSERT INTO t (v) VALUES (?)');
      raw.transaction(() => {
        for (let i = 0; i < 2000; i++) insert.run('x'.repeat(200));
      })();
      // The request connection never checkpoints by itself: the WAL holds the writes.
      assert.equal(raw.pragma('wal_autocheckpoint', { simple: true }), 0);
      const walBefore = statSync(`${filename}-wal`).size;
      assert.ok(walBefore > 100_000, `WAL ${walBefore} bytes`);
      const hasChrt = spawnSync('chrt', ['--help'], { stdio: 'ignore' }).status === 0;
      const idleThreads = () => threadPolicies().filter((policy) => policy === SCHED_IDLE).length;
      let niced = 0;
      for (let waited = 0; waited < 5000; waited += 50) {
        await sleep(50);
        niced = threadNiceValues().filter((nice) => nice === 19).length;
        if (niced > before && (!hasChrt || idleThreads() > idleBefore)) break;
      }
      assert.equal(niced, before + 1, 'one thread at nice 19: the background thread');
      assert.equal(threadNiceValues()[0], 0, 'the main thread keeps its priority');
      // SCHED_IDLE where util-linux's chrt is there to set it (Linux distributions ship it).
      if (hasChrt) {
        assert.equal(idleThreads(), idleBefore + 1, 'the background thread runs at SCHED_IDLE');
        assert.notEqual(threadPolicies()[0], SCHED_IDLE, 'the main thread keeps its policy');
      } else {
        t.diagnostic('chrt not found: SCHED_IDLE not checked');
      }
      // The next write after a complete checkpoint starts the WAL over instead of growing it.
      await sleep(1500);
      raw.transaction(() => {
        for (let i = 0; i < 10; i++) insert.run('y');
      })();
      const [{ log, checkpointed }] = raw.pragma('wal_checkpoint(PASSIVE)') as [
        { log: number; checkpointed: number },
      ];
      assert.ok(log < 20, `${log} WAL frames after the worker's checkpoint (${checkpointed} copied now)`);
    } finally {
      await background?.stop();
      raw.close();
      remove();
    }
  });

  it('runs statements on its own connection, with foreign keys enforced, and reports failures', async () => {
    const { dir, remove } = tempDir();
    const { raw, background } = createSqliteDialect({ filename: join(dir, 'db.sqlite') });
    assert.ok(background);
    try {
      raw.exec(`CREATE TABLE parent (id INTEGER PRIMARY KEY);
        CREATE TABLE child (id INTEGER PRIMARY KEY, parent INTEGER NOT NULL REFERENCES parent (id) ON DELETE CASCADE);
        INSERT INTO parent (id) VALUES (1), (2), (3);
        INSERT INTO child (id, parent) VALUES (10, 1), (11, 1), (12, 2);`);
      const run = await background.run('DELETE FROM parent WHERE id <= ?', [2]);
      assert.equal(run.changes, 2);
      assert.ok(run.millis >= 0 && run.millis < 1000, `${run.millis} ms`);
      // The request connection sees the committed delete, cascade included.
      assert.deepEqual(raw.prepare('SELECT id FROM parent').pluck().all(), [3]);
      assert.deepEqual(raw.prepare('SELECT id FROM child').pluck().all(), []);

      await assert.rejects(background.run('DELETE FROM nowhere', []), /no such table: nowhere/);
      assert.equal(background.alive, true, 'a failed statement leaves the thread running');
    } finally {
      await background.stop();
      raw.close();
      remove();
    }
    assert.equal(background.alive, false);
    await assert.rejects(background.run('SELECT 1', []), /background thread ended/);
  });

  it("purges on the background thread: a batch waits for another connection's write lock without holding up the event loop", async () => {
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
      for (let i = 0; i < 5; i++) {
        const started = performance.now();
        await sleep(20);
        longestTick = Math.max(longestTick, performance.now() - started);
      }
      assert.ok(longestTick < 1000, `a 20 ms timer took ${Math.round(longestTick)} ms`);
      assert.equal(settled, false, 'the batch waits for the lock');
      other.raw.exec('COMMIT');
      await other.background?.stop();
      other.raw.close();

      const result = await batch;
      assert.equal(result.rows, 20);
      const left = await storage.db
        .selectFrom('throttle')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      assert.equal(Number(left.n), 30);
      // The statement is counted in the store metrics like any other, with its own duration.
      const raw = events.filter((event) => event.operation === 'raw');
      assert.equal(raw.length, 1);
      assert.equal(raw[0]?.failed, false);
    } finally {
      await storage.close();
      remove();
    }
  });
});
