import { readFileSync } from 'node:fs';

/** Where Linux keeps the calling thread's scheduler times: on the CPU, waiting for one, slices (ns). */
const SCHEDSTAT = '/proc/thread-self/schedstat';

let readable = true;

/** Nanoseconds the calling thread has waited for a CPU while runnable, or undefined off Linux. */
function runQueueWaitNanos(): number | undefined {
  if (!readable) return undefined;
  try {
    const waited = Number(readFileSync(SCHEDSTAT, 'utf8').split(' ')[1]);
    if (Number.isFinite(waited)) return waited;
  } catch {
    // Not Linux, or no scheduler statistics: the clock alone.
  }
  readable = false;
  return undefined;
}

/**
 * A monotonic clock, in milliseconds, of the calling thread's own time: the wall clock less the time
 * the thread was runnable but waited for a CPU, so it counts its CPU time and its waits on I/O (a
 * disk, a database's answer) but not its preemption. A low-priority process preempted by requests
 * loses nothing they would get back by its waiting less; timed by the wall clock, a busy server made
 * its work look slow. On other systems, the wall clock (about 4 us a reading on Linux).
 */
export function ownTimeMillis(): number {
  const now = performance.now();
  const waited = runQueueWaitNanos();
  return waited === undefined ? now : now - waited / 1e6;
}
