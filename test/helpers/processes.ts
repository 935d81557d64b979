import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

export const LINUX = existsSync('/proc/self/task');
export const SCHED_OTHER = 0;

/** Nice value and scheduling policy of each thread of `pid` (Linux /proc, fields 19 and 41). */
export function threadPriorities(pid: number): Array<{ nice: number; policy: number }> {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { nice: Number(fields[16]), policy: Number(fields[38]) };
  });
}

/** Whether a process with this id exists (a zombie included). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs `body` while one busy-loop child process per core (at least two) keeps every core busy at this
 * process's priority. The children end with `body`, and by themselves after `boundMs` whatever happens.
 */
export async function withSaturatedCores<T>(boundMs: number, body: () => Promise<T>): Promise<T> {
  const count = Math.max(2, availableParallelism());
  const children: ChildProcess[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const child = spawn(process.execPath, ['-e', 'for (;;) {}'], {
        stdio: 'ignore',
        timeout: boundMs,
        killSignal: 'SIGKILL',
      });
      children.push(child);
    }
    // Running, not merely forked: each has used CPU time of its own.
    for (const child of children) {
      await new Promise<void>((resolve, reject) => {
        const check = () => {
          if (child.exitCode !== null || child.signalCode !== null) reject(new Error('a busy loop ended'));
          else if (child.pid !== undefined && cpuTicks(child.pid) > 0) resolve();
          else setTimeout(check, 20);
        };
        check();
      });
    }
    return await body();
  } finally {
    for (const child of children) child.kill('SIGKILL');
    await Promise.all(
      children.map((child) =>
        child.exitCode !== null || child.signalCode !== null
          ? undefined
          : new Promise((resolve) => child.once('exit', resolve)),
      ),
    );
  }
}

/** User plus system CPU ticks of `pid` so far (Linux /proc, fields 14 and 15; 0 elsewhere). */
function cpuTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 1;
  }
}
