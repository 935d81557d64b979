/**
 * Source for a worker thread (CommonJS, eval'd) that lowers its own scheduling priority to `nice`.
 * Linux treats a thread as a task with its own nice value, named by /proc/thread-self; elsewhere the
 * priority stays as it is. Background work (WAL checkpoints, argon2) then takes a core the request
 * thread shares only when that thread does not want it.
 *
 * `idle` also moves the thread to SCHED_IDLE, for work no request waits on (checkpoints, the purge).
 * Nice 19 still leaves a thread a slice of the core before a waking request thread preempts it (a
 * millisecond or more under EEVDF); a SCHED_IDLE thread is preempted at once. Node has no call for
 * sched_setscheduler, so util-linux's chrt sets it; where chrt is missing or refused, nice 19 stays.
 */
export function lowerOwnPrioritySource(nice: number, options: { idle?: boolean } = {}): string {
  const idle = options.idle === true;
  return `
try {
  const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
  if (Number.isInteger(tid) && tid > 0) {
    require('node:os').setPriority(tid, ${Math.trunc(nice)});
    if (${idle}) {
      try {
        require('node:child_process').execFileSync('chrt', ['--idle', '--pid', '0', String(tid)], {
          stdio: 'ignore',
          timeout: 5000,
        });
      } catch {}
    }
  }
} catch {}
`;
}
