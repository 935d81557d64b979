/** Helpers for the server's background process (the purge process): priority, start, ending. */
import { fork, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';

/**
 * Lowers this whole process to nice 19 on every thread, keeping the normal policy (SCHED_OTHER), so
 * requests come first but the process keeps a guaranteed share of a busy core: the scheduler weighs
 * a nice 19 task 15 against 1024 for each nice 0 task on the core, about 1.5 % of the core beside one
 * busy task. SCHED_IDLE (weight 3, and only what idle cores leave) starved it under sustained full
 * load: a purge process took 15 s and more to run its first statement beside busy neighbours, and
 * the dead rows piled up faster than it deleted them. A policy inherited from whoever started the
 * server (SCHED_IDLE, SCHED_BATCH) is left as it is. Best effort: elsewhere, or if refused, the
 * process keeps what it got.
 */
export function lowerProcessPriority(): void {
  try {
    for (const tid of readdirSync('/proc/self/task')) setPriority(Number(tid), 19);
  } catch {
    // Not Linux: the process keeps its priority.
  }
}

/**
 * Forks `entry` (a plain worker: not this process's flags, such as --cpu-prof or --inspect) with an IPC
 * channel. Its start-up (node, its drivers and Gatehouse's modules: about half a second of CPU, once)
 * runs at this process's priority: at nice 19 beside two busy cores it was not done after 20 s. The
 * child lowers itself with `lowerProcessPriority` once its modules are loaded.
 */
export function forkBackgroundProcess(entry: string, args: string[]): ChildProcess {
  return fork(entry, args, {
    execArgv: [],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    serialization: 'advanced',
  });
}

/**
 * Waits up to `timeoutMs` for a child asked to stop to exit (`exited`: its exit event), then kills it
 * with SIGKILL and waits for that exit.
 */
export async function awaitExitOrKill(
  child: ChildProcess,
  exited: Promise<void>,
  timeoutMs: number,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  if ((await Promise.race([exited, timeout])) === 'timeout') child.kill('SIGKILL');
  clearTimeout(timer);
  await exited;
}
