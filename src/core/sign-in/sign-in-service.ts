import type { Clock } from '../../shared/clock.js';
import { AccountLockout, SourceFailures } from '../users/account-lockout.js';
import type { SessionAuthentication, User } from '../model.js';
import type { ThrottleStore } from '../ports.js';
import type { AttemptContext, Authenticator } from './authenticator.js';
import type { AuditEntry, AuditLog } from '../audit/audit-log.js';

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
    /**
     * Where each attempt is recorded (decision 41): `sign-in.succeeded`, `sign-in.failed`,
     * `sign-in.locked-out`, each with the method and the address. Written alone (an attempt changes
     * nothing to be atomic with); a write that fails fails the attempt with the store's error, as a
     * failed count of the lockout does: no sign-in goes unrecorded.
     */
    private readonly audit?: AuditLog,
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
    const method = authenticator.method.name;
    const record = async (entry: AuditEntry, actor: string | null = null) => {
      await this.audit?.record(
        { actor: actor === null ? null : { type: 'user', id: actor }, address },
        { ...entry, detail: entry.detail ?? method },
      );
    };
    const refused = await this.failures.refusal(address);
    if (refused !== undefined) {
      await record({ type: 'sign-in.locked-out', detail: `${method}: too many failures from this address` });
      return { outcome: 'throttled', retryAfter: refused };
    }
    // A claim that cannot be a user (a name longer than any registered one) is never a key.
    const name = await authenticator.claimant(attempt);
    if (name === undefined) {
      await this.failures.failed(address);
      await record({ type: 'sign-in.failed' });
      return { outcome: 'wrong-credentials' };
    }
    const locked = await this.lockout.reserve(name, address);
    if (locked !== undefined) {
      // The name typed is not recorded: people type passwords into it by mistake.
      await record({ type: 'sign-in.locked-out', detail: `${method}: too many failures for this account` });
      return { outcome: 'throttled', retryAfter: locked };
    }
    const result = await authenticator.verify(attempt, context);
    if (result.outcome !== 'verified') {
      await this.failures.failed(address);
      await record({ type: 'sign-in.failed' });
      return { outcome: 'wrong-credentials' };
    }
    // Decision 37: every method ends here, so one check keeps a disabled user out of all of them. The
    // allowance is not given back (no `succeeded`): guesses at a disabled account stay bounded.
    if (result.user.disabled) {
      await record({ type: 'sign-in.failed', userId: result.user.id, detail: `${method}: user disabled` });
      return { outcome: 'disabled' };
    }
    await this.lockout.succeeded(name, address);
    await record(
      {
        type: 'sign-in.succeeded',
        userId: result.user.id,
        detail: (result.method ?? authenticator.method).name,
      },
      result.user.id,
    );
    return {
      outcome: 'signed-in',
      user: result.user,
      authentication: { method: (result.method ?? authenticator.method).name, at: this.clock.now() },
    };
  }
}
