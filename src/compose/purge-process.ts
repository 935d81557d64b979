import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { PurgePolicy } from '../core/purge.js';
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
  /** Rows deleted, by table. */
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
  /** The process ended without being stopped (it crashed, or could not start). */
  lost(reason: string): void;
}

export interface PurgeProcess {
  readonly pid: number | undefined;
  /** Ends the purge after its current batch, waits for the process's last report, and for its exit. */
  stop(): Promise<void>;
}

/** How long a stopping purge process may take (a batch, the last report, closing the store). */
const STOP_TIMEOUT_MS = 5000;

/**
 * The automatic purge, in a process of its own (`purge-process-entry.ts`) at nice 19 (see
 * lowerProcessPriority). Run in the server's own process, the purge's code shared the request thread:
 * its statements, its timers and its promises ran between requests, and the requests ran slower for
 * it, on PostgreSQL too where the deletes themselves run in the database. The purge bench measured
 * the token endpoint's p99 at 1.76-1.96 x with the purge in the server, 1.29 x with it here
 * (PostgreSQL, uncapped, 5 s runs; docs/benchmarks.md).
 *
 * The process opens its own connection to the store and runs the same Purger and schedule; it only
 * reports to this one, so that `gatehouse_purged_rows_total` and the store-latency metric still count
 * its work. It ends when stopped, or when this process dies and its channel closes.
 */
export function startPurgeProcess(setup: PurgeProcessSetup, events: PurgeProcessEvents): PurgeProcess {
  let stopping = false;
  const child: ChildProcess = forkBackgroundProcess(ENTRY, []);
  // It must not keep this process alive (a server that closes exits; a CLI never waits for it).
  child.unref();
  child.channel?.unref();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.on('message', (message: PurgeProcessMessage) => {
    events.report(message.report);
  });
  child.on('error', (error) => {
    if (!stopping) events.lost(`the purge process failed: ${error.message}`);
  });
  child.on('exit', (code, signal) => {
    if (!stopping) events.lost(`the purge process ended (${signal ?? `exit code ${code}`})`);
  });
  child.send({ setup });

  return {
    get pid() {
      return child.pid;
    },
    async stop() {
      if (stopping) return exited;
      stopping = true;
      if (child.exitCode !== null || child.signalCode !== null) return;
      // Waited for: the last report and the exit must arrive even once the server has closed.
      child.ref();
      child.channel?.ref();
      if (child.connected) child.send({ stop: true });
      await awaitExitOrKill(child, exited, STOP_TIMEOUT_MS);
    },
  };
}
