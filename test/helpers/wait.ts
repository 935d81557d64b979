import { setTimeout as sleep } from 'node:timers/promises';

/** Polls `condition` every 50 ms until it holds; throws `${failure} within ${ms} ms` when it never does. */
export async function waitFor(condition: () => Promise<boolean>, ms: number, failure: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${failure} within ${ms} ms`);
    await sleep(50);
  }
}
