import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { lowerOwnPrioritySource } from '../../shared/thread-priority.js';

// argon2id is 10-20 ms of pure CPU per login; each thread lowers its own priority (to the nice value
// it is given), so on a core it shares with the event loop, the loop gets the CPU first whenever it has
// requests to serve, instead of an equal share.
const workerSource = (nice: number) => `
const { parentPort, workerData } = require('node:worker_threads');
${lowerOwnPrioritySource(nice)}
const argon2 = require(workerData.argon2);
parentPort.on('message', ({ operation, args }) => {
  try {
    const result = operation === 'hash' ? argon2.hashSync(...args) : argon2.verifySync(...args);
    parentPort.postMessage({ result });
  } catch (error) {
    parentPort.postMessage({ error: String((error && error.message) || error) });
  }
});
`;

export type PasswordOperation = 'hash' | 'verify';

interface Job {
  operation: PasswordOperation;
  args: unknown[];
  resolve: (result: unknown) => void;
  reject: (error: Error) => void;
}

/**
 * A few threads of our own for argon2 (not libuv's pool, whose threads we cannot name or deprioritise),
 * each one computation at a time: at most `size` at once, the rest queued without using CPU.
 */
export class PasswordThreads {
  private readonly idle: Worker[] = [];
  private readonly busy = new Map<Worker, Job>();
  private readonly queue: Job[] = [];
  private readonly argon2 = createRequire(import.meta.url).resolve('@node-rs/argon2');

  constructor(
    private readonly size: number,
    /** The threads' nice value (0-19); 0 leaves them at the process's priority. */
    private readonly nice: number,
  ) {}

  run(operation: PasswordOperation, args: unknown[]): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.queue.push({ operation, args, resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.queue.length > 0 && (this.idle.length > 0 || this.busy.size + this.idle.length < this.size)) {
      const worker = this.idle.pop() ?? this.spawn();
      const job = this.queue.shift() as Job;
      this.busy.set(worker, job);
      // Referenced only while working: an idle pool never keeps a process (the CLI) alive.
      worker.ref();
      worker.postMessage({ operation: job.operation, args: job.args });
    }
  }

  private spawn(): Worker {
    const worker = new Worker(workerSource(this.nice), {
      eval: true,
      workerData: { argon2: this.argon2 },
    });
    worker.on('message', (message: { result?: unknown; error?: string }) => {
      const job = this.busy.get(worker);
      this.busy.delete(worker);
      worker.unref();
      this.idle.push(worker);
      if (message.error !== undefined) job?.reject(new Error(message.error));
      else job?.resolve(message.result);
      this.dispatch();
    });
    const lost = (error: Error) => {
      const job = this.busy.get(worker);
      this.busy.delete(worker);
      const index = this.idle.indexOf(worker);
      if (index >= 0) this.idle.splice(index, 1);
      job?.reject(error);
      this.dispatch();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`password thread exited (${code})`)));
    return worker;
  }
}
