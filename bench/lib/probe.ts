import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { LoadResult } from './load.js';
import type { OpenLoopSpec } from './open-loop.js';

const PROBE_PROCESS = fileURLToPath(new URL('../probe-process.js', import.meta.url));

interface Reply {
  result?: LoadResult;
  firstSuccess?: string;
  error?: string;
}

let child: ChildProcess | undefined;
let queue: Promise<unknown> = Promise.resolve();

/** The probe process, started on first use; it inherits this process's CPU affinity (the driver's core). */
function probeProcess(): ChildProcess {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) {
    child = fork(PROBE_PROCESS, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.unref();
    child.channel?.unref();
  }
  return child;
}

/**
 * One fixed-rate run (see open-loop.ts) in the probe's own process. Runs are queued: two probes at
 * once would share one driver's event loop and measure each other.
 */
export function runProbe(spec: OpenLoopSpec): Promise<LoadResult> {
  const { onFirstSuccess, ...wire } = spec;
  const run = queue.then(
    () =>
      new Promise<LoadResult>((resolve, reject) => {
        const probe = probeProcess();
        const onExit = (code: number | null) => reject(new Error(`the probe process exited (${code})`));
        probe.once('exit', onExit);
        probe.once('message', (reply: Reply) => {
          probe.off('exit', onExit);
          probe.channel?.unref();
          if (reply.result === undefined) {
            reject(new Error(`probe failed: ${reply.error ?? 'no result'}`));
            return;
          }
          if (reply.firstSuccess !== undefined) onFirstSuccess?.(reply.firstSuccess);
          resolve(reply.result);
        });
        probe.channel?.ref();
        probe.send(wire);
      }),
  );
  queue = run.catch(() => undefined);
  return run;
}
