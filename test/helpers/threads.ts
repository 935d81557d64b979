import { readdirSync, readFileSync } from 'node:fs';

/** Nice values of this process's threads (Linux): field 19 of /proc/self/task/<tid>/stat. */
export function threadNiceValues(): number[] {
  return readdirSync('/proc/self/task').map((tid) => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    // The command name may hold spaces: count the fields after its closing parenthesis.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}
