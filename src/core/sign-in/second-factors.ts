import { byUser, UNATTRIBUTED, type AuditContext, type AuditLog } from '../audit/audit-log.js';
import { createHmac } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import { randomToken } from '../../shared/crypto.js';
import { open, seal } from '../keys/sealed-box.js';
import type { Client, User } from '../model.js';
import type { PasskeyStore, SecondFactorStore, UserStore } from '../ports.js';
import { mustUseSecondFactor, type MfaPolicy } from '../users/second-factor-policy.js';
import type { Authenticator, AuthenticatorResult } from './authenticator.js';
import { RECOVERY_CODE, TOTP } from './methods.js';
import { matchTotpStep, newTotpSecret, totpUri } from './totp.js';

/** How many recovery codes "Generate" makes (design.md "Signing in"). */
export const RECOVERY_CODE_COUNT = 10;

export interface SecondFactorPolicy {
  /** GATEHOUSE_REQUIRE_MFA. */
  requireMfa: MfaPolicy;
  /** Seals the authenticator apps' secrets (AES-256-GCM), derived from the server secret. */
  totpKey: Buffer;
  /** Keys the recovery codes' hashes, derived from the server secret. */
  recoveryCodeKey: Buffer;
  /** The issuer an authenticator app shows beside the account (the product's name). */
  issuerName: string;
}

/** What a user has set up (never a secret): what the security page and `users show` list. */
export interface SecondFactorStatus {
  /** A confirmed authenticator app. */
  totp: boolean;
  /** Unused recovery codes. */
  recoveryCodesLeft: number;
}

/** What follows a correct password (decision 34). */
export type AfterPassword =
  /** Signed in with the password alone. */
  | 'complete'
  /** A second factor is asked: the user has one. */
  | 'verify'
  /** The user must have one and has none: the authenticator app is set up before the sign-in ends. */
  | 'set-up';

/** A one-time code typed after a password, for a user already known (the pending sign-in's). */
export interface CodeAttempt {
  user: User;
  code: string;
}

// The secret is sealed with the user's id as associated data, so a sealed secret copied onto another
// user's row does not open.
const sealContext = (userId: string) => `totp:${userId}`;

// Recovery codes: ten characters of base32 (50 bits), shown as two groups of five. Guessing online is
// bounded by the lockout (decision 8); offline, a stolen table is useless without the server secret,
// since the hash is keyed (HMAC-SHA-256) and bound to the user.
const RECOVERY_ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

function newRecoveryCode(): string {
  const bytes = Buffer.from(randomToken('', 10), 'base64url');
  let code = '';
  for (let i = 0; i < 10; i++) code += RECOVERY_ALPHABET[bytes[i]! & 31];
  return `${code.slice(0, 5)}-${code.slice(5)}`;
}

/** What a recovery code typed is compared as: case, spaces and hyphens do not matter. */
export function normalizeRecoveryCode(code: string): string {
  return code.toLowerCase().replace(/[\s-]/g, '');
}

/** Whether a code typed in the "Code" field is an app's (six digits) rather than a recovery code. */
export function isTotpCode(code: string): boolean {
  return /^\d{6}$/.test(code.replace(/\s/g, ''));
}

/**
 * Second factors after a password (docs/decisions.md, decision 34): the authenticator app (RFC 6238)
 * and recovery codes, their set-up, and who must use one. Checking a code at sign-in is an
 * Authenticator each (totp, recoveryCodes), run by SignInService under the password's lockout.
 */
export class SecondFactors {
  readonly totp: Authenticator<CodeAttempt>;
  readonly recoveryCodes: Authenticator<CodeAttempt>;
  /**
   * The first code of an app being set up (its set-up begun, not confirmed): it confirms the set-up,
   * and, after a password, is the sign-in's second factor. Under the lockout like any code.
   */
  readonly totpSetUp: Authenticator<CodeAttempt>;

  constructor(
    private readonly store: SecondFactorStore,
    private readonly users: Pick<UserStore, 'get'>,
    private readonly clock: Clock,
    private readonly policy: SecondFactorPolicy,
    /** A passkey serves as the second factor too (decision 33). */
    private readonly passkeys: Pick<PasskeyStore, 'listByUser'> = { listByUser: async () => [] },
    /** Where an operator's reset is recorded, with the reset (decision 41). */
    private readonly audit?: AuditLog,
  ) {
    const claimant = async ({ user }: CodeAttempt) => user.username;
    this.totp = {
      method: TOTP,
      claimant,
      verify: async ({ user, code }): Promise<AuthenticatorResult> =>
        (await this.useTotpCode(user.id, code, false))
          ? { outcome: 'verified', user }
          : { outcome: 'refused' },
    };
    this.totpSetUp = {
      method: TOTP,
      claimant,
      verify: async ({ user, code }, { address }): Promise<AuthenticatorResult> =>
        (await this.useTotpCode(user.id, code, true, address))
          ? { outcome: 'verified', user }
          : { outcome: 'refused' },
    };
    this.recoveryCodes = {
      method: RECOVERY_CODE,
      claimant,
      verify: async ({ user, code }): Promise<AuthenticatorResult> =>
        (await this.store.useRecoveryCode(user.id, this.hashRecoveryCode(user.id, code), this.clock.now()))
          ? { outcome: 'verified', user }
          : { outcome: 'refused' },
    };
  }

  /** The authenticator a code typed in the "Code" field is for: six digits the app's, else a recovery code. */
  authenticatorFor(code: string): Authenticator<CodeAttempt> {
    return isTotpCode(code) ? this.totp : this.recoveryCodes;
  }

  async status(userId: string): Promise<SecondFactorStatus> {
    const [totp, recoveryCodesLeft] = await Promise.all([
      this.store.getTotp(userId),
      this.store.countRecoveryCodes(userId),
    ]);
    return { totp: totp?.confirmedAt != null, recoveryCodesLeft };
  }

  /**
   * What follows a correct password for `user` signing in for `client` (undefined: not for a client):
   * a user with an authenticator app is asked for a code whatever the policy; one who must have a
   * second factor and has none sets one up first. (One who must and has a passkey is asked for it: decision 33.)
   */
  async afterPassword(user: User, client?: Pick<Client, 'requireMfa'>): Promise<AfterPassword> {
    const totp = await this.store.getTotp(user.id);
    if (totp?.confirmedAt != null) return 'verify';
    if (!mustUseSecondFactor(this.policy.requireMfa, user, client)) return 'complete';
    // One who must and has a passkey uses it ("Use a passkey" on the code step, decision 33).
    return (await this.passkeys.listByUser(user.id)).length > 0 ? 'verify' : 'set-up';
  }

  /**
   * Whether a sign-in is enough for `client` (decision 34): one that must use a second factor (the
   * policy for this user, or the client's require_mfa) needs a multi-factor sign-in (`amr` `mfa`,
   * decision 30). No read: the user and the sign-in are what the session read brought.
   */
  satisfies(
    user: User,
    authentication: { amr?: readonly string[] } | undefined,
    client?: Pick<Client, 'requireMfa'>,
  ): boolean {
    if (!mustUseSecondFactor(this.policy.requireMfa, user, client)) return true;
    return authentication?.amr?.includes('mfa') === true;
  }

  /**
   * Begins setting up an authenticator app: a new secret, stored sealed and unconfirmed (replacing one
   * begun before). Undefined when the user has a confirmed one (it is removed first).
   */
  async beginTotp(user: User): Promise<{ secret: string; uri: string } | undefined> {
    const secret = newTotpSecret();
    const secretSealed = seal(this.policy.totpKey, Buffer.from(secret), sealContext(user.id));
    const begun = await this.store.beginTotp({ userId: user.id, secretSealed, createdAt: this.clock.now() });
    if (!begun) return undefined;
    return { secret, uri: totpUri(secret, this.policy.issuerName, user.username) };
  }

  /**
   * The set-up begun and not yet confirmed (to show its QR code again after a wrong code); undefined
   * when there is none, or it was sealed under another server secret.
   */
  async begunTotp(user: User): Promise<{ secret: string; uri: string } | undefined> {
    const stored = await this.store.getTotp(user.id);
    if (stored === undefined || stored.confirmedAt !== null) return undefined;
    const secret = this.openSecret(user.id, stored.secretSealed);
    if (secret === undefined) return undefined;
    return { secret, uri: totpUri(secret, this.policy.issuerName, user.username) };
  }

  /**
   * Removes the user's authenticator app ("Remove" on the security page); false when there was none.
   * With `context`, recorded as `second-factor.removed` with the removal (decision 41).
   */
  async removeTotp(userId: string, context?: AuditContext): Promise<boolean> {
    if (context === undefined || this.audit === undefined) return this.store.deleteTotp(userId);
    return this.audit.change(context, async (storage, record) => {
      const removed = await storage.secondFactors.deleteTotp(userId);
      if (removed) await record({ type: 'second-factor.removed', userId, detail: 'authenticator app' });
      return removed;
    });
  }

  /**
   * Ten new recovery codes, replacing every one the user had; shown once, stored only as keyed hashes.
   * With `context`, recorded as `second-factor.recovery-codes-generated` (how many, never which).
   */
  async generateRecoveryCodes(userId: string, context?: AuditContext): Promise<string[]> {
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
    const hashes = codes.map((code) => this.hashRecoveryCode(userId, code));
    const now = this.clock.now();
    if (context === undefined || this.audit === undefined) {
      await this.store.replaceRecoveryCodes(userId, hashes, now);
      return codes;
    }
    await this.audit.change(context, async (storage, record) => {
      await storage.secondFactors.replaceRecoveryCodes(userId, hashes, now);
      await record({
        type: 'second-factor.recovery-codes-generated',
        userId,
        detail: `${codes.length} recovery codes, replacing any earlier ones`,
      });
    });
    return codes;
  }

  /** `gatehouse users reset-mfa`: the authenticator app and every recovery code gone. */
  async reset(
    userId: string,
    context: AuditContext = UNATTRIBUTED,
  ): Promise<{ totp: boolean; recoveryCodes: number }> {
    const reset = async (store: SecondFactorStore) => ({
      totp: await store.deleteTotp(userId),
      recoveryCodes: await store.deleteRecoveryCodes(userId),
    });
    if (this.audit === undefined) return reset(this.store);
    return this.audit.change(context, async (storage, record) => {
      const removed = await reset(storage.secondFactors);
      if (removed.totp || removed.recoveryCodes > 0) {
        await record({
          type: 'second-factor.reset',
          userId,
          // How many, never which: the codes are secrets.
          detail: `authenticator app ${removed.totp ? 'removed' : 'none'}, ${removed.recoveryCodes} recovery code(s) removed`,
        });
      }
      return removed;
    });
  }

  /** The user by id, for a pending sign-in (a user deleted meanwhile signs nobody in). */
  user(userId: string): Promise<User | undefined> {
    return this.users.get(userId);
  }

  /**
   * RFC 6238 §5.2: the code's step, within one step of now, is accepted only if it is later than the
   * last step accepted, by one conditional update in the store, so a code (or an older one) is never
   * accepted twice, by this process or another.
   */
  private async useTotpCode(
    userId: string,
    code: string,
    confirm: boolean,
    address: string | null = null,
  ): Promise<boolean> {
    const stored = await this.store.getTotp(userId);
    if (stored === undefined || (stored.confirmedAt === null) !== confirm) return false;
    const secret = this.openSecret(userId, stored.secretSealed);
    if (secret === undefined) return false;
    const now = this.clock.now();
    const step = matchTotpStep(secret, code.replace(/\s/g, ''), now);
    if (step === undefined) return false;
    if (!confirm || this.audit === undefined) return this.store.useTotpStep(userId, step, now, confirm);
    // The first code confirms a set-up: the app is added, by the user, and recorded with it (decision 41).
    return this.audit.change(byUser(userId, address), async (storage, record) => {
      const confirmed = await storage.secondFactors.useTotpStep(userId, step, now, true);
      if (confirmed) await record({ type: 'second-factor.added', userId, detail: 'authenticator app' });
      return confirmed;
    });
  }

  private openSecret(userId: string, sealed: string): string | undefined {
    try {
      return open(this.policy.totpKey, sealed, sealContext(userId)).toString();
    } catch {
      // Sealed under another server secret: the app must be set up again (never logged: no secret).
      return undefined;
    }
  }

  private hashRecoveryCode(userId: string, code: string): string {
    return createHmac('sha256', this.policy.recoveryCodeKey)
      .update(`${userId}:${normalizeRecoveryCode(code)}`)
      .digest('base64url');
  }
}
