import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type BetterSqlite3 from 'better-sqlite3';
import { lowerOwnPrioritySource } from '../../../shared/thread-priority.js';

// Runs in a worker thread with its own connection: a checkpoint copies many pages from the WAL into
// the database file, and on the request thread (better-sqlite3 is synchronous) that stalls every
// request queued behind the statement that happened to cross the auto-checkpoint mark.
// The worker runs at nice 19: when Gatehouse has one core, a checkpoint takes the CPU only when the
// request thread does not want it, instead of an equal share in the middle of requests.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
${lowerOwnPrioritySource(19)}
const Database = require(workerData.driver);
const db = new Database(workerData.filename);
db.pragma('busy_timeout = 1000');
const timer = setInterval(() => {
  try {
    const [result] = db.pragma('wal_checkpoint(PASSIVE)');
    if (workerData.report) parentPort.postMessage({ complete: result.busy === 0 && result.log === result.checkpointed });
  } catch (error) {
    parentPort.postMessage({ error: String(error && error.message) });
  }
}, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {}
  db.close();
  parentPort.close();
});
`;

export interface Checkpointer {
  stop(): Promise<void>;
}

/**
 * Takes WAL checkpoints off the request thread: the main connection stops auto-checkpointing and a
 * worker checkpoints every `intervalMs`. If the worker fails, the main connection checkpoints
 * automatically again, so the WAL never grows without bound.
 */
export function startCheckpointer(
  raw: BetterSqlite3.Database,
  filename: string,
  intervalMs = 1000,
  /** Told after each of the worker's checkpoints whether it copied the whole WAL (tests wait on it). */
  onCheckpoint?: (complete: boolean) => void,
): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const report = onCheckpoint !== undefined;
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { driver, filename, intervalMs, report },
  });
  worker.unref();
  if (onCheckpoint !== undefined) {
    worker.on('message', (message: { complete?: boolean }) => {
      if (typeof message.complete === 'boolean') onCheckpoint(message.complete);
    });
  }
  raw.pragma('wal_autocheckpoint = 0');
  let stopped = false;
  const fallBack = () => {
    if (!stopped && raw.open) raw.pragma('wal_autocheckpoint = 1000');
  };
  worker.on('error', fallBack);
  worker.on('exit', fallBack);
  return {
    async stop() {
      stopped = true;
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      worker.postMessage('stop');
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, 2000);
      });
      await Promise.race([exited, timeout]);
      clearTimeout(timer);
      await worker.terminate();
    },
  };
}

/**
 * How often the purge process checkpoints the WAL pages its deletes wrote, at most, while it works.
 * Left to the server's checkpoint thread, they are copied inside the server's process, beside the
 * request thread and sharing its SQLite locks and memory map. Not after every batch: a checkpoint
 * copies the last version of each page once, so one after a hundred 100-row batches costs 1.4-2 us a
 * row, one after each batch 10 us (random keys, measured with better-sqlite3).
 */
const PURGE_CHECKPOINT_INTERVAL_MS = 250;

/**
 * For the purge process's own connection, which has no checkpoint thread (the process is already
 * apart from the requests): a function to call after each batch that deleted rows, which checkpoints
 * the WAL when the last checkpoint is PURGE_CHECKPOINT_INTERVAL_MS old. The purger counts its time
 * in the batch's, and pauses for it.
 */
export function checkpointsAfterPurges(
  raw: BetterSqlite3.Database,
  intervalMs = PURGE_CHECKPOINT_INTERVAL_MS,
): () => void {
  let last = performance.now();
  return () => {
    if (performance.now() - last < intervalMs) return;
    try {
      raw.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // Busy or failed: SQLite's own checkpoint at 1,000 pages, or the server's thread, still runs.
    }
    last = performance.now();
  };
}
