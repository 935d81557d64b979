import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';

export const LINUX = existsSync('/proc/self/task');
export const HAS_CHRT = spawnSync('chrt', ['--help'], { stdio: 'ignore' }).status === 0;
export const SCHED_IDLE = 5;

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
