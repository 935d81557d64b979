import type { Clock } from '../../shared/clock.js';
import { AccountLockout, cannotBeUsername, SourceFailures } from '../account-lockout.js';
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

/**
 * Checks a user name and password from the sign-in page. Attempts per (user name, address) follow the
 * account lockout policy shared with the password grant (one allowance per name and source, whichever
 * way in), so a source that keeps failing is refused while the user signs in from elsewhere; failures
 * are also counted per address across names. While either is over its limit no password is checked.
 */
export async function signIn(
  storage: Pick<Storage, 'throttle' | 'users'>,
  clock: Clock,
  policy: SignInPolicy,
  input: { username: string; password: string; address: string },
): Promise<SignInResult> {
  const failures = new SourceFailures(storage.throttle, clock, {
    maxFailures: policy.failuresPerAddress,
    windowSeconds: policy.windowSeconds,
  });
  const refused = await failures.refusal(input.address);
  if (refused !== undefined) return { outcome: 'throttled', retryAfter: refused };
  // A name longer than any registered one is a wrong user name; checked before it becomes a key.
  if (cannotBeUsername(input.username)) {
    await failures.failed(input.address);
    return { outcome: 'wrong-credentials' };
  }
  const lockout = new AccountLockout(storage.throttle, clock, {
    maxAttempts: policy.failuresPerUsername,
    windowSeconds: policy.windowSeconds,
  });
  const locked = await lockout.reserve(input.username, input.address);
  if (locked !== undefined) return { outcome: 'throttled', retryAfter: locked };
  const user = input.username === '' ? undefined : await storage.users.getByUsername(input.username);
  // verifyPassword spends a decoy verification on unknown names, so a miss costs the same time.
  if (!(await verifyPassword(user?.passwordHash, input.password)) || user === undefined) {
    await failures.failed(input.address);
    return { outcome: 'wrong-credentials' };
  }
  await lockout.succeeded(input.username, input.address);
  if (needsRehash(user.passwordHash)) {
    await storage.users.update({
      ...user,
      passwordHash: await hashPassword(input.password),
      updatedAt: clock.now(),
    });
  }
  return { outcome: 'signed-in', user };
}
