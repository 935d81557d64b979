import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import pg from 'pg';
import { createGatehouse, type Gatehouse } from '../../src/compose/gatehouse.js';
import { loadConfig } from '../../src/config.js';
import { backends, TEST_DATABASE_URL, type Backend } from '../helpers/backends.js';
import { alive, LINUX, SCHED_OTHER, threadPriorities, withSaturatedCores } from '../helpers/processes.js';
import { startTestServer } from '../helpers/server.js';
import { insertDeadThrottleRows, throttleRows } from '../helpers/throttle-rows.js';
import { waitFor } from '../helpers/wait.js';

/** How long each step may take: the purge runs every second (plus jitter), in a process that starts first. */
const WAIT_MS = 20_000;
/**
 * The failure bound with every core busy: at nice 19 the process gets about 1.5 % of a core beside
 * each busy loop, some seconds for its start and the deletes; at SCHED_IDLE it took minutes.
 */
const SATURATED_MS = 90_000;

/**
 * A Gatehouse as `gatehouse serve` makes it (its own store, the system clock), purging every second:
 * on a SQLite file in a temp directory, or on a PostgreSQL database of its own (the purge process
 * opens the store from the same settings, so a test schema would not do).
 */
async function withServedGatehouse(backend: Backend, body: (gatehouse: Gatehouse) => Promise<void>) {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-purge-process-'));
  let databaseUrl: string | undefined;
  const database = `gh_purge_${randomBytes(6).toString('hex')}`;
  if (backend === 'postgres') {
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    await admin.end();
    const url = new URL(TEST_DATABASE_URL!);
    url.pathname = `/${database}`;
    databaseUrl = url.toString();
  }
  try {
    const config = loadConfig(
      {
        dataDir,
        databaseUrl,
        port: 0,
        host: '127.0.0.1',
        issuer: 'https://gatehouse.test',
        secret: Buffer.alloc(32, 7),
        logLevel: 'silent',
        purgeIntervalSeconds: 1,
      },
      {},
    );
    const gatehouse = await createGatehouse(config);
    try {
      await body(gatehouse);
    } finally {
      await gatehouse.close();
    }
  } finally {
    if (backend === 'postgres') {
      const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.end();
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function purgedThrottleRows(gatehouse: Gatehouse): Promise<number> {
  const text = await gatehouse.metrics.registry.metrics();
  const line = text.split('\n').find((l) => l.startsWith('gatehouse_purged_rows_total{table="throttle"}'));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`the purge process (${backend})`, () => {
    it('purges in a process of its own, reported in the metrics, and ends with the server', async (t) => {
      if (!backends().includes(backend)) {
        t.skip('PostgreSQL not configured');
        return;
      }
      let pid: number | undefined;
      await withServedGatehouse(backend, async (gatehouse) => {
        const expired = Math.floor(Date.now() / 1000) - 60;
        await insertDeadThrottleRows(gatehouse.storage, 'dead:', 2000, expired);
        await gatehouse.listen();
        pid = gatehouse.purgeProcessPid;
        assert.ok(pid !== undefined && pid !== process.pid, 'a purge process started');
        if (LINUX) {
          // It lowers itself once started: every thread at nice 19, with the normal policy (not
          // SCHED_IDLE, which starves under full load).
          const lowered = () =>
            threadPriorities(pid!).every((thread) => thread.nice === 19 && thread.policy === SCHED_OTHER);
          await waitFor(
            async () => lowered(),
            WAIT_MS,
            `not lowered: ${JSON.stringify(threadPriorities(pid))}`,
          );
        }
        await waitFor(
          async () => (await throttleRows(gatehouse.storage, 'dead:')) === 0,
          WAIT_MS,
          'rows left',
        );
        // Its reports reach this process's metrics (about once a second).
        await waitFor(
          async () => (await purgedThrottleRows(gatehouse)) >= 2000,
          WAIT_MS,
          'fewer than 2,000 purged rows counted',
        );
        assert.ok(alive(pid), 'it keeps running between purges');
      });
      assert.ok(!alive(pid!), 'it ended when the server closed');
    });

    it('purges in the server itself once the purge process is gone', async (t) => {
      if (!backends().includes(backend)) {
        t.skip('PostgreSQL not configured');
        return;
      }
      await withServedGatehouse(backend, async (gatehouse) => {
        await gatehouse.listen();
        const pid = gatehouse.purgeProcessPid;
        assert.ok(pid !== undefined);
        process.kill(pid, 'SIGKILL');
        await waitFor(async () => gatehouse.purgeProcessPid === undefined, WAIT_MS, 'the loss was not seen');
        await insertDeadThrottleRows(gatehouse.storage, 'later:', 300, Math.floor(Date.now() / 1000) - 60);
        await waitFor(
          async () => (await throttleRows(gatehouse.storage, 'later:')) === 0,
          WAIT_MS,
          'rows left',
        );
        assert.ok(!alive(pid));
      });
    });

    it('keeps deleting while every core is busy', async (t) => {
      if (!backends().includes(backend)) {
        t.skip('PostgreSQL not configured');
        return;
      }
      await withServedGatehouse(backend, async (gatehouse) => {
        await insertDeadThrottleRows(gatehouse.storage, 'dead:', 2000, Math.floor(Date.now() / 1000) - 60);
        await withSaturatedCores(SATURATED_MS, async () => {
          // Started under load: the process loads node and its driver, then purges, beside busy loops
          // that would leave a SCHED_IDLE process next to nothing.
          await gatehouse.listen();
          await waitFor(
            async () => (await throttleRows(gatehouse.storage, 'dead:')) === 0,
            SATURATED_MS - 5000,
            'rows left with every core busy',
          );
        });
      });
    });
  });
}

describe('the SQLite purge statement process (in-server purge)', () => {
  it('keeps deleting while every core is busy', async () => {
    const server = await startTestServer('sqlite', { purgeIntervalSeconds: 1 });
    try {
      await insertDeadThrottleRows(server.store.storage, 'dead:', 2000, server.clock.now() - 60);
      await withSaturatedCores(SATURATED_MS, async () => {
        await waitFor(
          async () => (await throttleRows(server.store.storage, 'dead:')) === 0,
          SATURATED_MS - 5000,
          'rows left with every core busy',
        );
      });
    } finally {
      await server.close();
    }
  });
});
