import { availableParallelism } from 'node:os';
import { Algorithm, hash, verify } from '@node-rs/argon2';

/** OWASP's argon2id baseline (m=19 MiB, t=2, p=1). The PHC string stores them with each hash. */
export const PASSWORD_COST = { memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

// Verified when the user name is unknown, so a miss costs as much time as a wrong password.
let decoyHash: Promise<string> | undefined;

/**
 * At most this many argon2 computations at once. Each is pure CPU on the thread pool; more of them
 * than there are cores only queues CPU time behind them, and the event loop (every other request)
 * then waits its turn among four pool threads. Queued logins wait here instead, using nothing.
 * availableParallelism() follows the process's CPU affinity (taskset, cgroup cpusets).
 */
const MAX_CONCURRENT_HASHES = Math.max(1, availableParallelism() - 1);
let running = 0;
const waiting: (() => void)[] = [];

async function withHashSlot<T>(work: () => Promise<T>): Promise<T> {
  if (running < MAX_CONCURRENT_HASHES) running += 1;
  // A finishing computation hands its slot straight to the next waiter.
  else await new Promise<void>((resolve) => waiting.push(resolve));
  try {
    return await work();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running -= 1;
  }
}

/** Hashing runs on libuv's thread pool (napi async work), never on the event loop. */
export function hashPassword(password: string): Promise<string> {
  return withHashSlot(() => hash(password, { ...PASSWORD_COST, algorithm: Algorithm.Argon2id }));
}

export async function verifyPassword(storedHash: string | undefined, password: string): Promise<boolean> {
  if (storedHash === undefined) {
    decoyHash ??= hashPassword('gatehouse-decoy-password');
    const decoy = await decoyHash;
    await withHashSlot(() => verify(decoy, password)).catch(() => false);
    return false;
  }
  try {
    return await withHashSlot(() => verify(storedHash, password));
  } catch {
    return false;
  }
}

/** True when a stored hash was made with weaker parameters than today's, so a login should re-hash. */
export function needsRehash(storedHash: string): boolean {
  const match = /\$argon2id\$v=\d+\$m=(\d+),t=(\d+),p=(\d+)\$/.exec(storedHash);
  if (!match) return true;
  const [, m, t, p] = match.map(Number);
  return (
    (m ?? 0) < PASSWORD_COST.memoryCost ||
    (t ?? 0) < PASSWORD_COST.timeCost ||
    (p ?? 0) < PASSWORD_COST.parallelism
  );
}
