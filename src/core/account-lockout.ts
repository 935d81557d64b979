import type { Clock } from '../shared/clock.js';
import type { ThrottleStore } from './ports.js';

/**
 * The lockout policy for user accounts (issue 5, security floor: brute-force throttling on password
 * checks). Every password attempt for a user name is counted in the shared store before the password
 * is checked; once `maxAttempts` have been made inside one window of `windowSeconds` (opened by the
 * first attempt), further attempts are refused without a password check until the window ends. A
 * correct password clears the count. The count lives in the store, so every process and every way in
 * (the password grant, the sign-in page) shares one allowance per user name.
 */
export interface LockoutPolicy {
  maxAttempts: number;
  windowSeconds: number;
}

/** The store key of a user name's count: one per name, whatever its case. */
export const lockoutKey = (username: string): string => `password:user:${username.toLowerCase()}`;

export class AccountLockout {
  constructor(
    private readonly throttle: ThrottleStore,
    private readonly clock: Clock,
    private readonly policy: LockoutPolicy,
  ) {}

  /**
   * Counts one attempt for `username`; returns the seconds to wait when the account is locked, or
   * undefined when the password may be checked. One atomic upsert: a burst of parallel guesses from
   * several processes cannot all pass a look-then-count check at once.
   */
  async reserve(username: string): Promise<number | undefined> {
    const now = this.clock.now();
    const { count, resetAt } = await this.throttle.hit(lockoutKey(username), this.policy.windowSeconds, now);
    return count > this.policy.maxAttempts ? Math.max(1, resetAt - now) : undefined;
  }

  /** The password was right: the count starts again. */
  async succeeded(username: string): Promise<void> {
    await this.throttle.reset(lockoutKey(username));
  }
}
