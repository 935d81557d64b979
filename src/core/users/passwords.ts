import { availableParallelism } from 'node:os';
import { Algorithm } from '@node-rs/argon2';
import { PasswordThreads } from './password-threads.js';

/** OWASP's argon2id baseline (m=19 MiB, t=2, p=1). The PHC string stores them with each hash. */
export const PASSWORD_COST = { memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

// Verified when the user name is unknown, so a miss costs as much time as a wrong password.
let decoyHash: Promise<string> | undefined;

/**
 * At most this many argon2 computations at once. Each is pure CPU; more of them than there are cores
 * only queues CPU time behind them. availableParallelism() follows the process's CPU affinity (taskset,
 * cgroup cpusets). The threads run at nice 10: when logins and other requests want the same core, the
 * event loop (every other request) is served first, and a login still gets about a tenth of the core.
 */
const MAX_CONCURRENT_HASHES = Math.max(1, availableParallelism() - 1);
export const PASSWORD_THREAD_NICE = 10;
const threads = new PasswordThreads(MAX_CONCURRENT_HASHES, PASSWORD_THREAD_NICE);

/** Hashing runs on Gatehouse's password threads, never on the event loop. */
export async function hashPassword(password: string): Promise<string> {
  return (await threads.run('hash', [
    password,
    { ...PASSWORD_COST, algorithm: Algorithm.Argon2id },
  ])) as string;
}

/**
 * Whether `password` is the one `storedHash` was made from. No hash (an unknown user name) and an empty
 * one (a user who has no password: created by a sign-in through an upstream provider, decision 40) are
 * never matched, at the cost of a real verification, so neither is told apart by its timing.
 */
export async function verifyPassword(storedHash: string | undefined, password: string): Promise<boolean> {
  if (storedHash === undefined || storedHash === '') {
    decoyHash ??= hashPassword('gatehouse-decoy-password');
    const decoy = await decoyHash;
    await threads.run('verify', [decoy, password]).catch(() => false);
    return false;
  }
  try {
    return (await threads.run('verify', [storedHash, password])) === true;
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
