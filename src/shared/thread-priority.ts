/**
 * Source for a worker thread (CommonJS, eval'd) that lowers its own scheduling priority to `nice`.
 * Linux treats a thread as a task with its own nice value, named by /proc/thread-self; elsewhere the
 * priority stays as it is. Background work (WAL checkpoints, argon2) then takes a core the request
 * thread shares only when that thread does not want it.
 */
export function lowerOwnPrioritySource(nice: number): string {
  return `
try {
  const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
  if (Number.isInteger(tid) && tid > 0) require('node:os').setPriority(tid, ${Math.trunc(nice)});
} catch {}
`;
}
