import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type BetterSqlite3 from 'better-sqlite3';
import { lowerOwnPrioritySource } from '../../../shared/thread-priority.js';

// A worker thread with its own connection, for the store's background writes: WAL checkpoints and
// the purge's deletes. better-sqlite3 is synchronous, so on the request thread each of these would
// stall every request queued behind it (a checkpoint copies many pages; a purge batch runs a
// millisecond or more, many times a second through a backlog).
// The worker runs at nice 19: when Gatehouse has one core, it takes the CPU only when the request
// thread does not want it, instead of an equal share in the middle of requests.
// Messages are handled one at a time, in order: a statement never runs beside a checkpoint.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
${lowerOwnPrioritySource(19, { idle: true })}
const Database = require(workerData.driver);
const db = new Database(workerData.filename);
db.pragma('busy_timeout = 5000');
db.pragma('foreign_keys = ON');
db.pragma('synchronous = ' + workerData.synchronous);
const checkpoint = () => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (error) {
    parentPort.postMessage({ checkpointError: String(error && error.message) });
  }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
const statements = new Map();
parentPort.on('message', (message) => {
  if (message === 'stop') {
    clearInterval(timer);
    checkpoint();
    db.close();
    parentPort.close();
    return;
  }
  const started = performance.now();
  try {
    let statement = statements.get(message.sql);
    if (statement === undefined) statements.set(message.sql, (statement = db.prepare(message.sql)));
    const { changes } = statement.run(...message.parameters);
    parentPort.postMessage({ id: message.id, changes, millis: performance.now() - started });
  } catch (error) {
    parentPort.postMessage({ id: message.id, error: String(error && error.message), millis: performance.now() - started });
  }
});
`;

/** What a statement run on the background thread did. */
export interface BackgroundRun {
  changes: number;
  /** How long the statement ran on the background thread (not counting the wait for it). */
  millis: number;
}

export interface SqliteBackground {
  /**
   * Runs one write statement on the background connection. Rejects when the statement fails, and when
   * the thread is gone (`alive` is then false: run the statement on the request connection instead).
   */
  run(sql: string, parameters: readonly unknown[]): Promise<BackgroundRun>;
  readonly alive: boolean;
  /** Takes a last checkpoint and ends the thread (before the request connection closes). */
  stop(): Promise<void>;
}

interface Reply {
  id?: number;
  changes?: number;
  millis?: number;
  error?: string;
  checkpointError?: string;
}

/**
 * Starts the background thread: the request connection stops auto-checkpointing and the thread
 * checkpoints every `intervalMs`. If the thread fails, the request connection checkpoints
 * automatically again, so the WAL never grows without bound.
 */
export function startBackground(
  raw: BetterSqlite3.Database,
  filename: string,
  options: { synchronous: 'FULL' | 'NORMAL'; intervalMs?: number },
): SqliteBackground {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      driver,
      filename,
      intervalMs: options.intervalMs ?? 1000,
      synchronous: options.synchronous,
    },
  });
  worker.unref();
  raw.pragma('wal_autocheckpoint = 0');
  const pending = new Map<
    number,
    { resolve: (run: BackgroundRun) => void; reject: (error: Error) => void }
  >();
  let nextId = 0;
  let alive = true;
  let stopped = false;

  const gone = () => {
    alive = false;
    if (!stopped && raw.open) raw.pragma('wal_autocheckpoint = 1000');
    for (const { reject } of pending.values()) reject(new Error('the SQLite background thread ended'));
    pending.clear();
  };
  worker.on('error', gone);
  worker.on('exit', gone);
  worker.on('message', (reply: Reply) => {
    if (reply.id === undefined) return;
    const waiter = pending.get(reply.id);
    if (waiter === undefined) return;
    pending.delete(reply.id);
    if (reply.error !== undefined) waiter.reject(new Error(reply.error));
    else waiter.resolve({ changes: reply.changes ?? 0, millis: reply.millis ?? 0 });
  });

  return {
    get alive() {
      return alive && !stopped;
    },
    run(sql, parameters) {
      if (!alive || stopped) return Promise.reject(new Error('the SQLite background thread ended'));
      const id = nextId++;
      return new Promise<BackgroundRun>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        // A pending statement keeps the process alive until it is answered, like a request would.
        worker.ref();
        worker.postMessage({ id, sql, parameters });
      }).finally(() => {
        if (pending.size === 0) worker.unref();
      });
    },
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
