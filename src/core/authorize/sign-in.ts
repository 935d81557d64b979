import type { Clock } from '../../shared/clock.js';
import { AccountLockout } from '../account-lockout.js';
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

const addressKey = (address: string) => `signin:address:${address}`;

/**
 * Checks a user name and password from the sign-in page. Attempts per user name follow the account
 * lockout policy shared with the password grant (one allowance per name, whichever way in); failures
 * are also counted per address. While either is over its limit no password is even checked.
 */
export async function signIn(
  storage: Storage,
  clock: Clock,
  policy: SignInPolicy,
  input: { username: string; password: string; address: string },
): Promise<SignInResult> {
  const address = addressKey(input.address);
  const now = clock.now();
  const { count, resetAt } = await storage.throttle.peek(address, now);
  if (count >= policy.failuresPerAddress)
    return { outcome: 'throttled', retryAfter: Math.max(1, resetAt - now) };
  const lockout = new AccountLockout(storage.throttle, clock, {
    maxAttempts: policy.failuresPerUsername,
    windowSeconds: policy.windowSeconds,
  });
  const locked = await lockout.reserve(input.username);
  if (locked !== undefined) return { outcome: 'throttled', retryAfter: locked };
  const user = input.username === '' ? undefined : await storage.users.getByUsername(input.username);
  // verifyPassword spends a decoy verification on unknown names, so a miss costs the same time.
  if (!(await verifyPassword(user?.passwordHash, input.password)) || user === undefined) {
    await storage.throttle.hit(address, policy.windowSeconds, clock.now());
    return { outcome: 'wrong-credentials' };
  }
  await lockout.succeeded(input.username);
  if (needsRehash(user.passwordHash)) {
    await storage.users.update({
      ...user,
      passwordHash: await hashPassword(input.password),
      updatedAt: clock.now(),
    });
  }
  return { outcome: 'signed-in', user };
}
