import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createSqliteDialect } from '../../src/storage/sql/dialects/sqlite.js';
import { createSqlStorage } from '../../src/storage/sql/index.js';
import { insertDeadThrottleRows } from '../helpers/throttle-rows.js';
import BetterSqlite3 from 'better-sqlite3';
import { threadNiceValues } from '../helpers/threads.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('SQLite checkpoints off the request thread', () => {
  it('checkpoint the WAL from a low-priority thread', async (t) => {
    if (!existsSync('/proc/self/task')) {
      t.skip('needs Linux /proc');
      return;
    }
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-checkpointer-'));
    const filename = join(dir, 'db.sqlite');
    const before = threadNiceValues().filter((nice) => nice === 19).length;
    let completeCheckpoints = 0;
    const { raw, stopCheckpointer } = createSqliteDialect({
      filename,
      onCheckpoint: (complete) => {
        if (complete) completeCheckpoints++;
      },
    });
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
      let niced = 0;
      for (let waited = 0; waited < 5000 && niced <= before; waited += 50) {
        await sleep(50);
        niced = threadNiceValues().filter((nice) => nice === 19).length;
      }
      assert.equal(niced, before + 1, 'one thread at nice 19: the checkpointer');
      assert.equal(threadNiceValues()[0], 0, 'the main thread keeps its priority');
      // The next write after a complete checkpoint starts the WAL over instead of growing it. Wait for
      // the worker to report one of the writes above (at nice 19 it may be late on a busy machine).
      const seen = completeCheckpoints;
      for (let waited = 0; waited < 30_000 && completeCheckpoints <= seen; waited += 50) await sleep(50);
      assert.ok(completeCheckpoints > seen, 'the worker never completed a checkpoint');
      raw.transaction(() => {
        for (let i = 0; i < 10; i++) insert.run('y');
      })();
      const [{ log, checkpointed }] = raw.pragma('wal_checkpoint(PASSIVE)') as [
        { log: number; checkpointed: number },
      ];
      assert.ok(log < 20, `${log} WAL frames after the worker's checkpoint (${checkpointed} copied now)`);
    } finally {
      await stopCheckpointer();
      raw.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the purge process's store", () => {
  it('checkpoints the WAL pages its deletes wrote, at most every 250 ms, without a checkpoint thread', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-purge-checkpoint-'));
    const storage = createSqlStorage({ dataDir: dir, purgeProcessStore: true });
    // Another connection, as the server's beside it, that never checkpoints by itself.
    let server: BetterSqlite3.Database | undefined;
    try {
      await storage.migrate();
      const now = Math.floor(Date.now() / 1000);
      await insertDeadThrottleRows(storage, 'dead:', 3000, now - 60);
      server = new BetterSqlite3(join(dir, 'gatehouse.db'));
      server.pragma('wal_autocheckpoint = 0');
      const cutoffs = { now, revokedAccessTokensExpiredBefore: now, grantsRevokedBefore: now };
      const framesAfterAWrite = () => {
        // After a complete checkpoint the next write starts the WAL over instead of growing it.
        server!.prepare("INSERT INTO throttle (key, count, reset_at) VALUES ('written', 1, 1)").run();
        const [{ log }] = server!.pragma('wal_checkpoint(PASSIVE)') as [{ log: number }];
        return log;
      };
      assert.equal(await storage.purge.purgeBatch('throttle', cutoffs, 100), 100);
      await sleep(300);
      // The first batch after 250 ms checkpoints what the inserts and deletes wrote.
      assert.equal(await storage.purge.purgeBatch('throttle', cutoffs, 100), 100);
      assert.ok(framesAfterAWrite() < 20, 'the purge did not checkpoint');
    } finally {
      server?.close();
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
