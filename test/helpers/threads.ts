import { readdirSync, readFileSync } from 'node:fs';

/** The fields of /proc/self/task/<tid>/stat after the command name (which may hold spaces). */
function statFields(tid: string): string[] {
  const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** Nice values of this process's threads (Linux): field 19 of /proc/self/task/<tid>/stat. */
export function threadNiceValues(): number[] {
  return readdirSync('/proc/self/task').map((tid) => Number(statFields(tid)[16]));
}

/** Linux's SCHED_IDLE policy number, as field 41 of the stat file gives it. */
export const SCHED_IDLE = 5;

/** Scheduling policies of this process's threads (Linux): field 41 of /proc/self/task/<tid>/stat. */
export function threadPolicies(): number[] {
  return readdirSync('/proc/self/task').map((tid) => Number(statFields(tid)[38]));
}
