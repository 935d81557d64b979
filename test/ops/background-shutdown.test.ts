import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { SqlStorage } from '../../src/storage/sql/index.js';
import { backends, TEST_DATABASE_URL } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { insertDeadThrottleRows, throttleRows } from '../helpers/throttle-rows.js';
import { waitFor } from '../helpers/wait.js';

/**
 * A test server's store is closed and its schema dropped as soon as close() returns, so whatever
 * background work outlived close() (the purge, the rate-counter merges every 250 ms, the key ring's
 * refresh) would run against a store that is gone: in the suite that made it, or in the next one.
 */

/** Enough expired rows that a purge in batches of 10, pausing between them, is still at work when the server closes. */
const DEAD_ROWS = 50_000;
/** Past every interval in play: the purge (1 s plus jitter) and the rate-counter merge (250 ms). */
const QUIET_MS = 1_500;

async function seedDeadThrottleRows(server: TestServer): Promise<void> {
  await insertDeadThrottleRows(server.store.storage, 'dead:', DEAD_ROWS, server.clock.now() - 3600);
}

/** Log lines at warn and above, and unhandled rejections, from now on. */
function watchForTrouble() {
  const logged: string[] = [];
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown) => rejections.push(reason);
  process.on('unhandledRejection', onRejection);
  return {
    logger: {
      level: 'warn',
      stream: new Writable({
        write(chunk: Buffer, _encoding, done) {
          logged.push(chunk.toString('utf8'));
          done();
        },
      }),
    },
    logged,
    rejections,
    stop: () => process.off('unhandledRejection', onRejection),
  };
}

/** Counts statements that reach the store once `closed` is set. */
function watchStatements(storage: SqlStorage) {
  const state = { closed: false, late: 0 };
  const stop = storage.observeQueries(() => {
    if (state.closed) state.late += 1;
  });
  return { state, stop };
}

for (const backend of backends()) {
  describe(`shutdown with background work under way (${backend})`, () => {
    it('close() cuts the purge short, merges the counts, and leaves nothing to run after the schema is dropped', async () => {
      const trouble = watchForTrouble();
      const server = await startTestServer(
        backend,
        { purgeIntervalSeconds: 1, purgeBatchSize: 10, keyRefreshIntervalSeconds: 1 },
        // Listening starts the background work (the purge, the key ring's refresh).
        { logger: trouble.logger, transport: 'https' },
      );
      const statements = watchStatements(server.store.storage);
      try {
        await seedDeadThrottleRows(server);
        await waitFor(
          async () => (await throttleRows(server.store.storage, 'dead:')) < DEAD_ROWS,
          // A failure bound only, for a busy machine.
          60_000,
          'the purge did not start',
        );
        const { client, secret } = await server.client({
          grant_types: ['client_credentials'],
          scopes: ['read'],
        });
        // Due for a key refresh: the token request starts one in the background.
        server.clock.advance(2);
        const res = await server.http.token({ grant_type: 'client_credentials' }, { id: client.id, secret });
        assert.equal(res.status, 200);

        server.http.close();
        const started = performance.now();
        await server.gatehouse.app.close();
        const closeMs = performance.now() - started;
        // Without a stop between batches, close() would wait for the run to work off the backlog.
        assert.ok(closeMs < 5_000, `close() took ${Math.round(closeMs)} ms`);

        const left = await throttleRows(server.store.storage, 'dead:');
        assert.ok(left > 0, 'the purge had a backlog when the server closed');
        // The request's rate-limit counts were merged into the store on the way out.
        assert.ok((await throttleRows(server.store.storage, 'rl:token:')) > 0, 'counts merged');
        await sleep(QUIET_MS);
        assert.equal(await throttleRows(server.store.storage, 'dead:'), left, 'nothing purged after close');

        statements.state.closed = true;
        await server.store.cleanup();
        await sleep(QUIET_MS);
        assert.equal(statements.state.late, 0, 'statements after close()');
        assert.deepEqual(trouble.logged, []);
        assert.deepEqual(trouble.rejections, []);
      } finally {
        statements.stop();
        trouble.stop();
        await server.close();
      }
    });
  });
}

describe(
  'shutdown with a key-ring refresh in flight (postgres)',
  { skip: TEST_DATABASE_URL === undefined },
  () => {
    it('close() returns only once the refresh has finished with the store', async () => {
      const trouble = watchForTrouble();
      const server = await startTestServer(
        'postgres',
        { keyRefreshIntervalSeconds: 1 },
        // Listening starts the background work (the purge, the key ring's refresh).
        { logger: trouble.logger, transport: 'https' },
      );
      const statements = watchStatements(server.store.storage);
      // Holds the refresh's read of the signing keys until released, so it is surely in flight at close.
      const blocker = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await blocker.connect();
      let blocking = false;
      try {
        await blocker.query('BEGIN');
        await blocker.query(`LOCK TABLE ${server.store.schema}.signing_keys IN ACCESS EXCLUSIVE MODE`);
        blocking = true;
        // The key ring's timer (every second) starts a refresh, which waits for the lock.
        await waitFor(
          async () => {
            const { rows } = await blocker.query<{ waiting: number }>(
              `SELECT count(*)::int AS waiting FROM pg_stat_activity
                WHERE wait_event_type = 'Lock' AND query LIKE '%signing_keys%'`,
            );
            return (rows[0]?.waiting ?? 0) > 0;
          },
          15_000,
          'no key-ring refresh waited for the lock',
        );

        server.http.close();
        const closing = server.gatehouse.app.close().then(() => 'closed' as const);
        const early = await Promise.race([closing, sleep(500).then(() => 'pending' as const)]);
        await blocker.query('COMMIT');
        blocking = false;
        await closing;
        statements.state.closed = true;
        assert.equal(early, 'pending', 'close() returned while the key ring was still reading the store');

        await server.store.cleanup();
        await sleep(QUIET_MS);
        assert.equal(statements.state.late, 0, 'statements after close()');
        assert.deepEqual(trouble.logged, []);
        assert.deepEqual(trouble.rejections, []);
      } finally {
        if (blocking) await blocker.query('ROLLBACK').catch(() => undefined);
        await blocker.end();
        statements.stop();
        trouble.stop();
        await server.close();
      }
    });
  },
);
