import { sha256 } from '../../shared/crypto.js';
import type { User } from '../model.js';
import type { Storage } from '../ports.js';
import { validatePassword, viewUser, type UserRegistry, type UserView } from '../users/user-registry.js';
import { ValidationError } from '../validation.js';
import type { Authenticator } from './authenticator.js';
import type { BrowserSessions, SignInDevice } from './browser-sessions.js';
import type { PasswordAttempt } from './password-authenticator.js';
import type { SignInService } from './sign-in-service.js';

/**
 * One line of a user's ways of signing in, as `gatehouse users show` and /v1/users report them
 * (decision 37): which method, and a short description that is never a secret ("set", "2 passkeys",
 * "7 left").
 */
export interface SignInMethodSummary {
  /** The method's name (core/sign-in/methods.ts), or the kind of credential (`recovery-codes`). */
  method: string;
  description: string;
  /** How many the user has, for methods that come in numbers (passkeys, recovery codes left). */
  count?: number;
}

/**
 * What one method contributes to a user's summary: its line, or undefined when the user does not
 * have it. Each method adds its own source to SIGN_IN_METHOD_SUMMARIES (a passkey's reads the user's
 * passkeys; the authenticator app's, whether one is confirmed; recovery codes', how many are left).
 */
export type SignInMethodSummarySource = (
  user: User,
  storage: Storage,
) => Promise<SignInMethodSummary | undefined>;

/** The password: every user has one today; a user without one (a future passkey-only account) has no line. */
export const passwordSummary: SignInMethodSummarySource = (user) =>
  Promise.resolve(user.passwordHash === '' ? undefined : { method: 'password', description: 'set' });

/** The user's passkeys (decision 33): how many, and their names; a name is not a secret. */
export const passkeySummary: SignInMethodSummarySource = async (user, storage) => {
  const passkeys = await storage.passkeys.listByUser(user.id);
  if (passkeys.length === 0) return undefined;
  const names = passkeys.map((passkey) => passkey.name).join(', ');
  const noun = passkeys.length === 1 ? 'passkey' : 'passkeys';
  return { method: 'passkey', description: `${passkeys.length} ${noun} (${names})`, count: passkeys.length };
};

/**
 * The user's links to upstream identity providers (decision 39): each provider's name and the upstream
 * account's label (its user name or email when linked), or its subject; none of them is a secret.
 */
export const federatedSummary: SignInMethodSummarySource = async (user, storage) => {
  const links = await storage.federatedLinks.listByUser(user.id);
  if (links.length === 0) return undefined;
  const names = new Map<string, string>();
  for (const providerId of new Set(links.map((link) => link.providerId))) {
    names.set(providerId, (await storage.identityProviders.get(providerId))?.name ?? providerId);
  }
  const accounts = links
    .map((link) => `${names.get(link.providerId) ?? link.providerId}: ${link.label ?? link.subject}`)
    .join(', ');
  const noun = links.length === 1 ? 'linked account' : 'linked accounts';
  return { method: 'federated', description: `${links.length} ${noun} (${accounts})`, count: links.length };
};

/** The authenticator app (decision 34), once a code confirmed it. */
export const authenticatorAppSummary: SignInMethodSummarySource = async (user, storage) => {
  const totp = await storage.secondFactors.getTotp(user.id);
  return totp?.confirmedAt == null ? undefined : { method: 'totp', description: 'authenticator app set up' };
};

/** Recovery codes left unused (decision 34). */
export const recoveryCodesSummary: SignInMethodSummarySource = async (user, storage) => {
  const left = await storage.secondFactors.countRecoveryCodes(user.id);
  return left === 0 ? undefined : { method: 'recovery-codes', description: `${left} left`, count: left };
};

/** Every method's summary source, in the order they are listed. */
export const SIGN_IN_METHOD_SUMMARIES: readonly SignInMethodSummarySource[] = [
  passwordSummary,
  passkeySummary,
  federatedSummary,
  authenticatorAppSummary,
  recoveryCodesSummary,
];

/** A user as an operator sees them (decision 37): their methods and how many sessions they have. */
export interface UserSummary {
  user: User;
  methods: SignInMethodSummary[];
  /** Live browser sessions. */
  sessions: number;
}

/** A user with their ways of signing in and sessions, as `users show` and /v1/users give it (decision 37). */
export interface UserSummaryView extends UserView {
  sign_in_methods: SignInMethodSummary[];
  sessions: number;
}

export function viewUserSummary(summary: UserSummary): UserSummaryView {
  return {
    ...viewUser(summary.user),
    sign_in_methods: summary.methods.map((line) => ({ ...line })),
    sessions: summary.sessions,
  };
}

export type PasswordChange =
  | {
      outcome: 'changed';
      user: User;
      /** The browser's renewed id (the session stays signed in). */ browserId: string;
    }
  /** The new password breaks the password rules: nothing was checked or counted. */
  | { outcome: 'invalid-new-password' }
  | { outcome: 'wrong-password' }
  | { outcome: 'throttled'; retryAfter: number };

export interface AccountSecurityDependencies {
  storage: Storage;
  users: UserRegistry;
  sessions: BrowserSessions;
  signIns: SignInService;
  passwords: Authenticator<PasswordAttempt>;
  summaries?: readonly SignInMethodSummarySource[];
}

/**
 * The account's own security (docs/decisions.md, decision 37): changing the password from the security
 * page, and the summary of a user's ways of signing in that operators read.
 */
export class AccountSecurity {
  constructor(private readonly deps: AccountSecurityDependencies) {}

  /** The user's methods (each source's line) and live sessions, never a secret. */
  async summary(user: User): Promise<UserSummary> {
    const { storage, sessions } = this.deps;
    const lines = await Promise.all(
      (this.deps.summaries ?? SIGN_IN_METHOD_SUMMARIES).map((source) => source(user, storage)),
    );
    return {
      user,
      methods: lines.filter((line): line is SignInMethodSummary => line !== undefined),
      sessions: await sessions.count(user.id),
    };
  }

  /**
   * "Change password": the current password is checked as a sign-in is, under the same lockout
   * (decisions 8 and 30: a wrong one counts, a locked source is refused without checking); then, as
   * decision 12 says of any new password, every other session ends and every grant is revoked, while
   * this browser stays signed in, its session recording the password just proved (its cookie renewed,
   * BrowserSessions.renew).
   */
  async changePassword(input: {
    user: User;
    browserId: string;
    currentPassword: string;
    newPassword: string;
    address: string;
    device?: SignInDevice;
  }): Promise<PasswordChange> {
    const { users, sessions, signIns, passwords } = this.deps;
    try {
      validatePassword(input.newPassword);
    } catch (error) {
      if (error instanceof ValidationError) return { outcome: 'invalid-new-password' };
      throw error;
    }
    const result = await signIns.attempt(
      passwords,
      { username: input.user.username, password: input.currentPassword },
      { address: input.address },
    );
    if (result.outcome === 'throttled') return result;
    // A user disabled meanwhile has no session left to keep; renamed meanwhile, the name is another's.
    if (result.outcome !== 'signed-in' || result.user.id !== input.user.id)
      return { outcome: 'wrong-password' };
    const user = await users.changeOwnPassword(
      result.user,
      input.newPassword,
      sha256(input.browserId),
      input.address,
    );
    const browserId = await sessions.renew(input.browserId, user.id, result.authentication, input.device);
    // The session ended meanwhile (signed out in another tab): the password is changed all the same,
    // and the browser starts a session of its own with the password it just proved.
    return {
      outcome: 'changed',
      user,
      browserId: browserId ?? (await sessions.start(user.id, result.authentication, input.device)),
    };
  }
}
