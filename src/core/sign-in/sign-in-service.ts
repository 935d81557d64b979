import type { Clock } from '../../shared/clock.js';
import { AccountLockout, SourceFailures } from '../users/account-lockout.js';
import type { SessionAuthentication, User } from '../model.js';
import type { ThrottleStore } from '../ports.js';
import type { AttemptContext, Authenticator } from './authenticator.js';

export interface SignInPolicy {
  failuresPerUsername: number;
  failuresPerAddress: number;
  windowSeconds: number;
}

export type SignInResult =
  /** `authentication` is what the browser session records (BrowserSessions.start). */
  | { outcome: 'signed-in'; user: User; authentication: SessionAuthentication }
  | { outcome: 'wrong-credentials' }
  /**
   * The secret was right but an operator disabled the user (decision 37): nobody is signed in. Said
   * only after a correct secret, so it tells nothing a guess would not; the attempt stays counted.
   */
  | { outcome: 'disabled' }
  | { outcome: 'throttled'; retryAfter: number };

/**
 * Runs any authenticator under one lockout (docs/decisions.md, decisions 8 and 30). Attempts per
 * (user name, source) follow the account lockout policy shared with the password grant (one allowance
 * per name and source, whichever way in and whichever method), so a source that keeps failing is
 * refused while the user signs in from elsewhere; failures are also counted per source across names.
 * While either is over its limit nothing is verified. The store keys keep their `password:` prefix
 * (account-lockout.ts): counts already in the store stay in force, and every method shares them.
 */
export class SignInService {
  private readonly failures: SourceFailures;
  private readonly lockout: AccountLockout;

  constructor(
    throttle: ThrottleStore,
    private readonly clock: Clock,
    policy: SignInPolicy,
  ) {
    this.failures = new SourceFailures(throttle, clock, {
      maxFailures: policy.failuresPerAddress,
      windowSeconds: policy.windowSeconds,
    });
    this.lockout = new AccountLockout(throttle, clock, {
      maxAttempts: policy.failuresPerUsername,
      windowSeconds: policy.windowSeconds,
    });
  }

  async attempt<Attempt>(
    authenticator: Authenticator<Attempt>,
    attempt: Attempt,
    context: AttemptContext,
  ): Promise<SignInResult> {
    const { address } = context;
    const refused = await this.failures.refusal(address);
    if (refused !== undefined) return { outcome: 'throttled', retryAfter: refused };
    // A claim that cannot be a user (a name longer than any registered one) is never a key.
    const name = await authenticator.claimant(attempt);
    if (name === undefined) {
      await this.failures.failed(address);
      return { outcome: 'wrong-credentials' };
    }
    const locked = await this.lockout.reserve(name, address);
    if (locked !== undefined) return { outcome: 'throttled', retryAfter: locked };
    const result = await authenticator.verify(attempt, context);
    if (result.outcome !== 'verified') {
      await this.failures.failed(address);
      return { outcome: 'wrong-credentials' };
    }
    // Decision 37: every method ends here, so one check keeps a disabled user out of all of them. The
    // allowance is not given back (no `succeeded`): guesses at a disabled account stay bounded.
    if (result.user.disabled) return { outcome: 'disabled' };
    await this.lockout.succeeded(name, address);
    return {
      outcome: 'signed-in',
      user: result.user,
      authentication: { method: (result.method ?? authenticator.method).name, at: this.clock.now() },
    };
  }
}
