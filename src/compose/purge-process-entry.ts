/**
 * The purge process (started by purge-process.ts): opens the store and runs the automatic purge on
 * it at nice 19, reporting its work to the server once a second.
 */
import { sql } from 'kysely';
import { Purger, PurgeScheduler } from '../core/purge.js';
import type { PurgeCutoffs, PurgeStore } from '../core/ports.js';
import { systemClock } from '../shared/clock.js';
import { cpuMillisSince, lowerProcessPriority } from '../shared/background-process.js';
import { PURGE_CHECKPOINT_INTERVAL_MS } from '../storage/sql/dialects/sqlite-purge-process.js';
import { createSqlStorage, type SqlStorage } from '../storage/sql/index.js';
import type { PurgeProcessMessage, PurgeProcessSetup, PurgeReport } from './purge-process.js';

/** How often the process sends what it did. */
const REPORT_INTERVAL_MS = 1000;

/**
 * SQLite's purge store as this process runs it: each batch timed by this process's CPU, not by the
 * clock (at nice 19 the statement is preempted whenever a request wants the core, and that wait
 * costs the requests nothing; timed by the clock, a busy server made every batch look slow and the
 * purger shrank them to 10 rows), and a checkpoint of the WAL pages it wrote after it when one is due
 * (PURGE_CHECKPOINT_INTERVAL_MS), its CPU time reported apart (the purger pauses for it, but does not
 * shrink batches for it).
 */
function sqlitePurgeStore(storage: SqlStorage): PurgeStore {
  let lastCheckpoint = performance.now();
  return {
    tables: storage.purge.tables,
    async purgeBatch(table: string, cutoffs: PurgeCutoffs, limit: number) {
      const cpu = process.cpuUsage();
      const { rows } = await storage.purge.purgeBatch(table, cutoffs, limit);
      const millis = cpuMillisSince(cpu);
      let otherMillis = 0;
      if (rows > 0 && performance.now() - lastCheckpoint >= PURGE_CHECKPOINT_INTERVAL_MS) {
        const checkpointCpu = process.cpuUsage();
        try {
          await sql`PRAGMA wal_checkpoint(PASSIVE)`.execute(storage.db);
        } catch {
          // Busy or failed: SQLite's own checkpoint at 1,000 pages, or the server's thread, still runs.
        }
        otherMillis = cpuMillisSince(checkpointCpu);
        lastCheckpoint = performance.now();
      }
      return { rows, millis, otherMillis };
    },
  };
}

function start(setup: PurgeProcessSetup): void {
  const storage = createSqlStorage({
    databaseUrl: setup.databaseUrl,
    dataDir: setup.dataDir,
    sqliteSynchronous: setup.sqliteSynchronous,
    poolSize: 2,
    purgeProcessStore: true,
  });
  let pending: PurgeReport = { purged: {}, statements: [], failures: [] };
  const send = (message: PurgeProcessMessage) => {
    if (process.connected) process.send?.(message);
  };
  const report = () => {
    const { purged, statements, failures } = pending;
    if (Object.keys(purged).length === 0 && statements.length === 0 && failures.length === 0) return;
    pending = { purged: {}, statements: [], failures: [] };
    send({ report: { purged, statements, failures } });
  };
  storage.observeQueries((event) => pending.statements.push([event.durationMs, event.failed]));
  const observer = {
    purged(table: string, rows: number) {
      pending.purged[table] = (pending.purged[table] ?? 0) + rows;
    },
    failed(error: unknown) {
      pending.failures.push(error instanceof Error ? error.message : String(error));
    },
  };
  const store = storage.dialect === 'sqlite' ? sqlitePurgeStore(storage) : storage.purge;
  const scheduler = new PurgeScheduler(
    new Purger(store, systemClock, setup.policy, observer),
    { intervalSeconds: setup.intervalSeconds },
    observer,
  );
  scheduler.start();
  // The scheduler's and the report's timers are unref'd: the channel keeps this process alive.
  setInterval(report, REPORT_INTERVAL_MS).unref();

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await scheduler.stop();
      report();
      await storage.close();
      if (process.connected) process.disconnect();
      process.exit(0);
    })());
  process.on('message', (message: { stop?: true }) => {
    if (message.stop === true) void stop();
  });
  // The server died (SIGKILL included) or closed the channel: nothing is left to report to.
  process.on('disconnect', () => void stop());
}

lowerProcessPriority();
process.once('message', (message: { setup?: PurgeProcessSetup }) => {
  if (message.setup === undefined) {
    process.stderr.write('purge process: the first message must carry its setup\n');
    process.exit(2);
  }
  start(message.setup);
});
