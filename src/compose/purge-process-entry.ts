/**
 * The purge process (started by purge-process.ts): opens the store and runs the automatic purge on
 * it at nice 19, reporting its work to the server once a second.
 */
import { Purger, PurgeScheduler } from '../core/ops/purge.js';
import { systemClock } from '../shared/clock.js';
import { lowerProcessPriority } from '../shared/background-process.js';
import { openStore } from '../storage/open-store.js';
import type { PurgeProcessMessage, PurgeProcessSetup, PurgeReport } from './purge-process.js';

/** How often the process sends what it did. */
const REPORT_INTERVAL_MS = 1000;

function start(setup: PurgeProcessSetup): void {
  const storage = openStore({
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
  storage.observeOperations((event) => pending.statements.push([event.durationMs, event.failed]));
  const observer = {
    purged(kind: string, rows: number) {
      pending.purged[kind] = (pending.purged[kind] ?? 0) + rows;
    },
    failed(error: unknown) {
      pending.failures.push(error instanceof Error ? error.message : String(error));
    },
  };
  const scheduler = new PurgeScheduler(
    new Purger(storage.purge, systemClock, setup.policy, observer),
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
