import type { Clock } from '../../shared/clock.js';
import type { User } from '../model.js';
import { hashPassword, needsRehash, verifyPassword } from '../passwords.js';
import type { Storage } from '../ports.js';

export interface SignInPolicy {
  failuresPerUsername: number;
  failuresPerAddress: number;
  windowSeconds: number;
}

export type SignInResult =
  | { outcome: 'signed-in'; user: User }
  | { outcome: 'wrong-credentials' }
  | { outcome: 'throttled'; retryAfter: number };

// The per-user counter is the one the password grant uses too, so that an attacker does not get a
// fresh allowance of guesses for each way in.
const userKey = (username: string) => `password:user:${username.toLowerCase()}`;
const addressKey = (address: string) => `signin:address:${address}`;

/**
 * Checks a user name and password from the sign-in page. Failures are counted per user name and per
 * address in the shared store, and while either is over its limit no password is even checked.
 */
export async function signIn(
  storage: Storage,
  clock: Clock,
  policy: SignInPolicy,
  input: { username: string; password: string; address: string },
): Promise<SignInResult> {
  const counters = [
    { key: userKey(input.username), limit: policy.failuresPerUsername },
    { key: addressKey(input.address), limit: policy.failuresPerAddress },
  ];
  const now = clock.now();
  for (const { key, limit } of counters) {
    const { count, resetAt } = await storage.throttle.peek(key, now);
    if (count >= limit) return { outcome: 'throttled', retryAfter: Math.max(1, resetAt - now) };
  }
  const user = input.username === '' ? undefined : await storage.users.getByUsername(input.username);
  // verifyPassword spends a decoy verification on unknown names, so a miss costs the same time.
  if (!(await verifyPassword(user?.passwordHash, input.password)) || user === undefined) {
    for (const { key } of counters) await storage.throttle.hit(key, policy.windowSeconds, clock.now());
    return { outcome: 'wrong-credentials' };
  }
  await storage.throttle.reset(userKey(input.username));
  if (needsRehash(user.passwordHash)) {
    await storage.users.update({
      ...user,
      passwordHash: await hashPassword(input.password),
      updatedAt: clock.now(),
    });
  }
  return { outcome: 'signed-in', user };
}
