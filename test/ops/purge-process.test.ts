import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import pg from 'pg';
import { createGatehouse, type Gatehouse } from '../../src/compose/gatehouse.js';
import { startPurgeProcess, type RestartBackoff } from '../../src/compose/purge-process.js';
import { loadConfig } from '../../src/config.js';
import { DEFAULT_PURGE_PACING } from '../../src/core/ops/purge.js';
import { backends, TEST_DATABASE_URL, type Backend } from '../helpers/backends.js';
import { alive, LINUX, SCHED_OTHER, threadPriorities, withSaturatedCores } from '../helpers/processes.js';
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

    it('starts another purge process when it is killed, which purges in its turn', async (t) => {
      if (!backends().includes(backend)) {
        t.skip('PostgreSQL not configured');
        return;
      }
      await withServedGatehouse(backend, async (gatehouse) => {
        await gatehouse.listen();
        const pid = gatehouse.purgeProcessPid;
        assert.ok(pid !== undefined);
        process.kill(pid, 'SIGKILL');
        // The restart is reported by the new process's id (the first restart waits a second).
        await waitFor(
          async () => gatehouse.purgeProcessPid !== undefined && gatehouse.purgeProcessPid !== pid,
          WAIT_MS,
          'no purge process was started again',
        );
        const restarted = gatehouse.purgeProcessPid!;
        assert.ok(!alive(pid), 'the killed one is gone');
        assert.ok(alive(restarted));
        await insertDeadThrottleRows(gatehouse.storage, 'later:', 300, Math.floor(Date.now() / 1000) - 60);
        await waitFor(
          async () => (await throttleRows(gatehouse.storage, 'later:')) === 0,
          WAIT_MS,
          'rows left',
        );
        // Its reports reach this process like the first one's did.
        await waitFor(
          async () => (await purgedThrottleRows(gatehouse)) >= 300,
          WAIT_MS,
          'the new process reported nothing',
        );
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

describe('restarting a lost purge process', () => {
  /** Kills the purge process `times` times, each after its successor started; the waits announced. */
  async function killRepeatedly(backoff: RestartBackoff, times: number): Promise<number[]> {
    const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-purge-restart-'));
    const waits: number[] = [];
    const purge = startPurgeProcess(
      {
        databaseUrl: undefined,
        dataDir,
        sqliteSynchronous: 'NORMAL',
        intervalSeconds: 3600,
        policy: { ...DEFAULT_PURGE_PACING, accessTokenTtl: 3600 },
      },
      { report: () => undefined, lost: (_reason, restartInMs) => waits.push(restartInMs) },
      backoff,
    );
    try {
      for (let i = 0; i < times; i++) {
        await waitFor(async () => purge.pid !== undefined, WAIT_MS, 'no purge process');
        const pid = purge.pid!;
        process.kill(pid, 'SIGKILL');
        await waitFor(
          async () => purge.pid !== undefined && purge.pid !== pid,
          WAIT_MS,
          `not restarted after loss ${i + 1}`,
        );
      }
      return waits;
    } finally {
      await purge.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }

  it('waits twice as long after each loss that follows soon after a start, up to the longest wait', async () => {
    const waits = await killRepeatedly({ firstMs: 10, maxMs: 40, healthyMs: 3_600_000 }, 4);
    assert.deepEqual(waits, [10, 20, 40, 40]);
  });

  it('starts over from the first wait after a process that ran healthy', async () => {
    // Every process counts as healthy at once here.
    const waits = await killRepeatedly({ firstMs: 10, maxMs: 40, healthyMs: 0 }, 3);
    assert.deepEqual(waits, [10, 10, 10]);
  });
});
