import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { sql } from 'kysely';
import { createTestStore, TEST_DATABASE_URL, type TestStore } from '../helpers/backends.js';
import { runSql } from '../helpers/store-sql.js';

if (!TEST_DATABASE_URL) {
  console.log('# skipped: PostgreSQL connection loss (set GATEHOUSE_TEST_DATABASE_URL to run it)');
} else {
  describe('PostgreSQL connections lost while idle', () => {
    let store: TestStore;
    before(async () => {
      store = await createTestStore('postgres');
    });
    after(async () => {
      await store.cleanup();
    });

    it('are reported and replaced, and the process lives on', async () => {
      const { storage } = store;
      const rows = await runSql(storage, sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`);
      const pid = rows[0]?.pid;
      assert.equal(typeof pid, 'number');
      const reported: Error[] = [];
      const stop = storage.observeConnectionErrors((error) => reported.push(error));
      try {
        // What a PostgreSQL restart or failover does to every idle pooled connection.
        const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
        await admin.connect();
        try {
          await admin.query('SELECT pg_terminate_backend($1)', [pid]);
        } finally {
          await admin.end();
        }
        // Without the pool's listener the failure is an uncaught 'error' event: the process (here,
        // this test file) dies, and nothing is reported.
        for (let waited = 0; reported.length === 0 && waited < 5000; waited += 10) {
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        assert.equal(reported.length, 1);
        assert.match(reported[0]?.message ?? '', /terminat/i);
        // The next statement gets a fresh connection.
        await storage.ping();
        assert.deepEqual(await storage.pendingMigrations(), []);
      } finally {
        stop();
      }
    });
  });
}
