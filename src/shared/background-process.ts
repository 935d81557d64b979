/** Helpers for the server's background processes (the purge processes): priority, CPU time, ending. */
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';

/**
 * Lowers this whole process to the least CPU priority the system grants: nice 19 on every thread,
 * then SCHED_IDLE (util-linux chrt) where it is there, so the process takes a core only when the
 * requests leave it idle. Best effort: elsewhere, or if refused, the process keeps what it got.
 */
export function lowerProcessPriority(): void {
  try {
    for (const tid of readdirSync('/proc/self/task')) setPriority(Number(tid), 19);
  } catch {
    // Not Linux: the process keeps its priority.
  }
  try {
    execFileSync('chrt', ['--all-tasks', '--idle', '--pid', '0', String(process.pid)], {
      stdio: 'ignore',
      timeout: 5000,
    });
  } catch {
    // No chrt, or refused: nice 19 stays.
  }
}

/**
 * Forks `entry` (a plain worker: not this process's flags, such as --cpu-prof or --inspect) with an IPC
 * channel, already at nice 19 for its start-up (loading node and its drivers, some 50 ms of CPU); the
 * child lowers itself further with `lowerProcessPriority` once running.
 */
export function forkAtLowPriority(entry: string, args: string[]): ChildProcess {
  const child = fork(entry, args, {
    execArgv: [],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    serialization: 'advanced',
  });
  try {
    if (child.pid !== undefined) setPriority(child.pid, 19);
  } catch {
    // Not permitted or not supported: the child lowers itself.
  }
  return child;
}

/**
 * CPU milliseconds this process spent since `since` (all threads: a background process does nothing
 * else).
 */
export function cpuMillisSince(since: NodeJS.CpuUsage): number {
  const { user, system } = process.cpuUsage(since);
  return (user + system) / 1000;
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
