import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { PurgePolicy } from '../core/ops/purge.js';
import { awaitExitOrKill, forkBackgroundProcess } from '../shared/background-process.js';

const ENTRY = fileURLToPath(new URL('./purge-process-entry.js', import.meta.url));

/** What the purge process needs to open the store and purge it as the server would. */
export interface PurgeProcessSetup {
  databaseUrl: string | undefined;
  dataDir: string;
  sqliteSynchronous: 'FULL' | 'NORMAL';
  intervalSeconds: number;
  policy: PurgePolicy;
}

/** What the purge process did since its last report (about once a second, and once as it stops). */
export interface PurgeReport {
  /** Records deleted, by kind (PurgeStore.kinds). */
  purged: Record<string, number>;
  /** Each purge statement: milliseconds, and whether it failed (the store-latency metric). */
  statements: Array<[millis: number, failed: boolean]>;
  /** Runs that failed (they are retried at the next interval). */
  failures: string[];
}

export interface PurgeProcessMessage {
  report: PurgeReport;
}

export interface PurgeProcessEvents {
  report(report: PurgeReport): void;
  /**
   * The process ended without being stopped (it crashed, was killed, or could not start); another
   * is started in `restartInMs`.
   */
  lost(reason: string, restartInMs: number): void;
}

export interface PurgeProcess {
  /** The running process's id; undefined while one is being restarted. */
  readonly pid: number | undefined;
  /** Ends the purge after its current batch, waits for the process's last report, and for its exit. */
  stop(): Promise<void>;
}

/** When a lost purge process is started again. */
export interface RestartBackoff {
  /** The wait before the first restart, doubled after each loss that follows soon after a start. */
  firstMs: number;
  /** The longest wait. */
  maxMs: number;
  /** A process that ran this long before it was lost counts as healthy: the wait starts over. */
  healthyMs: number;
}

/**
 * A process that dies at once (a bad install, a store it cannot open) is not started in a loop that
 * would take the core from the requests; one killed after running a while (the OOM killer, an
 * operator) is back within a second.
 */
export const PURGE_RESTART_BACKOFF: RestartBackoff = { firstMs: 1000, maxMs: 60_000, healthyMs: 60_000 };

/** How long a stopping purge process may take (a batch, the last report, closing the store). */
const STOP_TIMEOUT_MS = 5000;

/**
 * The automatic purge, in a process of its own (`purge-process-entry.ts`) at nice 19 (see
 * lowerProcessPriority): the one place the timed purge runs once the server listens (docs/decisions.md,
 * decision 5). Run in the server's own process, the purge's code shared the request thread: its
 * statements, its timers and its promises ran between requests, and the requests ran slower for it,
 * on PostgreSQL too where the deletes themselves run in the database. The purge bench measured the
 * token endpoint's p99 at 1.76-1.96 x with the purge in the server, 1.29 x with it here (PostgreSQL,
 * uncapped, 5 s runs; docs/benchmarks.md).
 *
 * The process opens its own connection to the store and runs the same Purger and schedule; it only
 * reports to this one, so that `gatehouse_purged_rows_total` and the store-latency metric still count
 * its work. It ends when stopped, or when this process dies and its channel closes. When it is lost
 * otherwise, another is started after `backoff`.
 */
export function startPurgeProcess(
  setup: PurgeProcessSetup,
  events: PurgeProcessEvents,
  backoff: RestartBackoff = PURGE_RESTART_BACKOFF,
): PurgeProcess {
  let stopping = false;
  let stopped: Promise<void> | undefined;
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let restartTimer: NodeJS.Timeout | undefined;
  /** Losses in a row, each soon after its start. */
  let losses = 0;

  const start = () => {
    restartTimer = undefined;
    const started = performance.now();
    const current = forkBackgroundProcess(ENTRY, []);
    child = current;
    // It must not keep this process alive (a server that closes exits; a CLI never waits for it).
    current.unref();
    current.channel?.unref();
    exited = new Promise<void>((resolve) => current.once('exit', () => resolve()));
    let lost = false;
    const onLost = (reason: string) => {
      if (stopping || lost) return;
      lost = true;
      if (child === current) child = undefined;
      // A process that failed to start may have no exit to come: make sure it is gone.
      if (current.exitCode === null && current.signalCode === null) current.kill('SIGKILL');
      if (performance.now() - started >= backoff.healthyMs) losses = 0;
      const delay = Math.min(backoff.maxMs, backoff.firstMs * 2 ** losses);
      losses += 1;
      events.lost(reason, delay);
      restartTimer = setTimeout(start, delay);
      restartTimer.unref();
    };
    current.on('message', (message: PurgeProcessMessage) => {
      events.report(message.report);
    });
    current.on('error', (error) => onLost(`the purge process failed: ${error.message}`));
    current.on('exit', (code, signal) =>
      onLost(`the purge process ended (${signal ?? `exit code ${code}`})`),
    );
    current.send({ setup });
  };
  start();

  return {
    get pid() {
      return child?.pid;
    },
    stop() {
      if (stopped !== undefined) return stopped;
      stopping = true;
      if (restartTimer !== undefined) clearTimeout(restartTimer);
      const current = child;
      // None running (lost, and not started again yet), or it has just ended: nothing to wait for.
      if (current === undefined || current.exitCode !== null || current.signalCode !== null) {
        return (stopped = Promise.resolve());
      }
      // Waited for: the last report and the exit must arrive even once the server has closed.
      current.ref();
      current.channel?.ref();
      if (current.connected) current.send({ stop: true });
      return (stopped = awaitExitOrKill(current, exited, STOP_TIMEOUT_MS));
    },
  };
}
