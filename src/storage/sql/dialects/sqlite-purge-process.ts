import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { awaitExitOrKill, forkBackgroundProcess } from '../../../shared/background-process.js';
import type { SqliteSynchronous } from './sqlite-connection.js';

const ENTRY = fileURLToPath(new URL('./sqlite-purge-process-entry.js', import.meta.url));

/**
 * How often a purge process checkpoints the WAL pages its deletes wrote, at most, while it works. Left
 * to the server's checkpoint thread, they are copied inside the server's process, beside the request
 * thread and sharing its SQLite locks and memory map. Not after every batch: a checkpoint copies the
 * last version of each page once, so one after a hundred 100-row batches costs 1.4-2 us a row, one after
 * each batch 10 us (random keys, measured with better-sqlite3).
 */
export const PURGE_CHECKPOINT_INTERVAL_MS = 250;

export interface PurgeProcessRequest {
  id: number;
  sql: string;
  parameters: readonly unknown[];
}

export type PurgeProcessReply =
  { id: number; changes: number; millis: number; checkpointMillis: number } | { id: number; error: string };

/** What a statement run in the purge process did. */
export interface PurgeProcessRun {
  changes: number;
  /** The statement's CPU time there (not the wait for the process, nor its preemption by requests). */
  millis: number;
  /** CPU time of the WAL checkpoint the process ran after the previous statement. */
  checkpointMillis: number;
}

export interface SqlitePurgeProcess {
  /**
   * Runs one write statement in the purge process, starting it on first use. Rejects when the
   * statement fails, and when the process is gone (`usable` is then false: run the statement on the
   * request connection instead).
   */
  run(sql: string, parameters: readonly unknown[]): Promise<PurgeProcessRun>;
  readonly usable: boolean;
  /** The process id once started (tests). */
  readonly pid: number | undefined;
  /** Ends the process after the statement in progress. */
  stop(): Promise<void>;
}

/**
 * The purge's deletes, in a process of their own. On the request thread (better-sqlite3 is
 * synchronous) every batch stalls the requests queued behind it: the purge bench's p99 rose 1.93 x. A
 * worker thread is not safe at low priority: its connection shares SQLite's process-wide locks and the
 * memory map with the request thread, and a SCHED_IDLE worker running the purge stalled the event loop
 * for up to a second when it was preempted holding them. This process runs at nice 19, so requests
 * come first but it keeps a share of a busy core (see lowerProcessPriority), and shares no lock with the request thread but
 * SQLite's write lock (a request that writes during a batch waits for it, as for any writer). On one
 * shared core the purge still adds to the request p99 (docs/benchmarks.md, "Purge under load").
 *
 * It is started on the first statement (most stores never purge: a CLI run, a test) and ends when
 * stopped, or when this process dies and its channel closes.
 */
export function createSqlitePurgeProcess(
  filename: string,
  synchronous: SqliteSynchronous,
): SqlitePurgeProcess {
  let child: ChildProcess | undefined;
  let failed = false;
  let stopped = false;
  let nextId = 0;
  const pending = new Map<
    number,
    { resolve: (run: PurgeProcessRun) => void; reject: (error: Error) => void }
  >();

  const rejectAll = (reason: string) => {
    for (const { reject } of pending.values()) reject(new Error(reason));
    pending.clear();
  };

  const start = (): ChildProcess => {
    const started = forkBackgroundProcess(ENTRY, [filename, synchronous]);
    started.on('message', (reply: PurgeProcessReply) => {
      const waiter = pending.get(reply.id);
      if (waiter === undefined) return;
      pending.delete(reply.id);
      if ('error' in reply) waiter.reject(new Error(reply.error));
      else {
        const { changes, millis, checkpointMillis } = reply;
        waiter.resolve({ changes, millis, checkpointMillis });
      }
      if (pending.size === 0) idle(started);
    });
    started.on('error', () => {
      failed = true;
      rejectAll('the SQLite purge process failed');
    });
    started.on('exit', () => {
      if (!stopped) failed = true;
      rejectAll('the SQLite purge process ended');
    });
    return started;
  };

  // Between statements the process must not keep this one alive (a CLI would never exit).
  const idle = (worker: ChildProcess) => {
    worker.unref();
    worker.channel?.unref();
  };

  return {
    get usable() {
      return !failed && !stopped;
    },
    get pid() {
      return child?.pid;
    },
    run(sql, parameters) {
      if (failed || stopped) return Promise.reject(new Error('the SQLite purge process ended'));
      child ??= start();
      const worker = child;
      const id = nextId++;
      return new Promise<PurgeProcessRun>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        worker.ref();
        worker.channel?.ref();
        worker.send({ id, sql, parameters } satisfies PurgeProcessRequest, (error) => {
          if (error === null || !pending.has(id)) return;
          pending.delete(id);
          failed = true;
          reject(error);
        });
      });
    },
    async stop() {
      stopped = true;
      const worker = child;
      if (worker === undefined || worker.exitCode !== null || worker.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      // Closing the channel is the stop signal; a statement in progress finishes first.
      if (worker.connected) worker.disconnect();
      await awaitExitOrKill(worker, exited, 5000);
    },
  };
}
