import type { AuditContext, AuditLog } from '../audit/audit-log.js';
import type { Clock } from '../../shared/clock.js';
import { randomToken, sha256 } from '../../shared/crypto.js';
import type { MailLink, MailLinkPurpose, User } from '../model.js';
import type { MailLinkStore, Mailer, ThrottleStore, UserStore } from '../ports.js';
import { validateEmail, validatePassword, type UserRegistry } from './user-registry.js';

/** How long a mailed link works (docs/decisions.md, decision 35; OWASP's forgot-password advice). */
export const MAIL_LINK_TTL_SECONDS = 30 * 60;
/**
 * Mails of one purpose per user per hour. A stranger can type anyone's address into "Forgot
 * password?"; this keeps them from filling that person's mailbox. Further requests answer the same
 * and send nothing, counted in the store so every process shares the count.
 */
export const MAILS_PER_USER_PER_HOUR = 5;
/** Addresses are not unique: one typed address reaches at most this many accounts. */
export const USERS_PER_ADDRESS = 10;

/** What the engine needs to write the mails (compose/engine-policy.ts builds it). */
export interface AccountMailPolicy {
  /** The name the pages show (GATEHOUSE_PRODUCT_NAME), also the mails'. */
  productName: string;
  /** The page a reset link opens (the endpoint table's passwordReset). */
  passwordResetUrl: string;
  /** The page a verification link opens (the endpoint table's emailVerification). */
  emailVerificationUrl: string;
}

export interface AccountMailDependencies {
  storage: { users: UserStore; mailLinks: MailLinkStore; throttle: ThrottleStore };
  /** Sets the new password: the one rule that also ends the user's sessions and grants (decision 12). */
  users: UserRegistry;
  clock: Clock;
  mailer: Mailer;
  policy: AccountMailPolicy;
  /** Where an operator's request to mail a link is recorded, with the link (decision 41). */
  audit?: AuditLog;
}

/** What an operator's "send a reset link" came to (sendPasswordResetFor). */
export type OperatorResetResult =
  /** The link is stored and its mail on its way (a send that fails goes to `failed`). */
  | { outcome: 'sending'; address: string }
  /** The user has no address to send it to: an operator sets one first. */
  | { outcome: 'no-email' }
  /** MAILS_PER_USER_PER_HOUR reset mails went to this user within the hour already. */
  | { outcome: 'throttled' };

/** Where a link stands when it is opened. */
export type LinkState =
  | { outcome: 'valid'; user: User; link: MailLink }
  /** Followed already: a link works once. */
  | { outcome: 'used' }
  | { outcome: 'expired' }
  /** Never issued (or its user is gone, or it is for the other purpose). */
  | { outcome: 'unknown' };

export type PasswordResetResult = { outcome: 'reset'; user: User } | Exclude<LinkState, { outcome: 'valid' }>;

export type EmailVerificationResult =
  | { outcome: 'verified'; user: User }
  /** The user's address changed since the link was sent: the new one is not proven by it. */
  | { outcome: 'address-changed' }
  | Exclude<LinkState, { outcome: 'valid' }>;

/** What a background send reports when it fails (the HTTP layer logs it; the person saw their answer). */
export type MailFailure = (error: unknown) => void;

/**
 * Recovery and email verification by mail (docs/decisions.md, decision 35): single-use links, valid
 * 30 minutes, of which the store keeps only the SHA-256 (MailLinkStore); the token is in the mail
 * only, and in no log or error of ours.
 *
 * Requests to send run off the caller's path (start…): "Forgot password?" answers at once and the
 * same whatever the address, so neither its words nor its timing tell whether an account has it. The
 * work in flight is tracked: idle() waits for it (the engine's close, and tests).
 */
export class AccountMail {
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly deps: AccountMailDependencies) {}

  /**
   * "Forgot password?": mails a reset link to every account (at most USERS_PER_ADDRESS) whose
   * address is `email`, and nothing when none has it. Returns before anything is read; a failure
   * goes to `failed`. `email` must be a plausible address (validateEmail) or this throws.
   */
  startPasswordReset(email: string, failed: MailFailure): void {
    const address = validateEmail(email);
    if (address === null) return;
    this.track(this.sendPasswordResets(address), failed);
  }

  /**
   * "Verify" on the security page: mails a verification link to the user's address, unless there is
   * none or it is verified already. Off the caller's path, like startPasswordReset.
   */
  startEmailVerification(userId: string, failed: MailFailure): void {
    this.track(this.sendEmailVerification(userId), failed);
  }

  /**
   * An operator's "Send reset link" (POST /v1/users/{id}/password-reset): the same single-use link as
   * "Forgot password?" (decision 35), to the user's own address, counted in the same hourly allowance.
   * The link is stored and `password.reset-link-sent` recorded in one transaction (decision 41), the
   * event saying who asked and to which address, never the link; the mail goes after the commit, off
   * the caller's path. Nothing changes for the user until the link is followed: their password,
   * sessions and grants stay until then (decision 12 applies when the new password is set).
   */
  async sendPasswordResetFor(
    user: User,
    context: AuditContext,
    failed: MailFailure,
  ): Promise<OperatorResetResult> {
    const address = user.email;
    if (address === null) return { outcome: 'no-email' };
    const { audit } = this.deps;
    const url =
      audit === undefined
        ? await this.issue(user, address, 'password-reset', this.deps.storage)
        : await audit.change(context, async (storage, record) => {
            const issued = await this.issue(user, address, 'password-reset', storage);
            if (issued !== undefined) {
              await record({ type: 'password.reset-link-sent', userId: user.id, detail: `to ${address}` });
            }
            return issued;
          });
    if (url === undefined) return { outcome: 'throttled' };
    const { productName } = this.deps.policy;
    this.track(
      this.deps.mailer.send({
        to: address,
        subject: `Reset your ${productName} password`,
        text: [
          `An administrator of ${productName} sent you this link to choose a new password for the account "${user.username}".`,
          '',
          `To choose a new password, open this link within ${MAIL_LINK_TTL_SECONDS / 60} minutes:`,
          '',
          url,
          '',
          'The link works once. Setting a new password signs the account out everywhere.',
          'If you did not expect this, ignore this mail: your password stays as it is.',
        ].join('\n'),
      }),
      failed,
    );
    return { outcome: 'sending', address };
  }

  /** Resolves once every send started before it (and after) has ended, failed or not. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Where the link with this token stands (its page shows the form, or why it cannot). */
  async check(token: string, purpose: MailLinkPurpose): Promise<LinkState> {
    const link = await this.deps.storage.mailLinks.get(sha256(token));
    if (link === undefined || link.purpose !== purpose) return { outcome: 'unknown' };
    if (link.usedAt !== null) return { outcome: 'used' };
    if (link.expiresAt <= this.deps.clock.now()) return { outcome: 'expired' };
    const user = await this.deps.storage.users.get(link.userId);
    return user === undefined ? { outcome: 'unknown' } : { outcome: 'valid', user, link };
  }

  /**
   * "Set password": the new password is checked first (a refused one leaves the link usable), then
   * the link is consumed (once, across processes), then the password set through the user registry,
   * which ends every browser session and revokes every grant of the user (decision 12). Following a
   * link mailed to the address also proves it: the address is marked verified if it is still that one.
   */
  async resetPassword(token: string, password: unknown): Promise<PasswordResetResult> {
    const newPassword = validatePassword(password);
    const link = await this.deps.storage.mailLinks.consume(
      sha256(token),
      'password-reset',
      this.deps.clock.now(),
    );
    if (link === undefined) return this.whyNot(token, 'password-reset');
    const user = await this.deps.storage.users.get(link.userId);
    if (user === undefined) return { outcome: 'unknown' };
    // Decision 41: the user set it, proving the address with the link (password.reset, by the user).
    const updated = await this.deps.users.update(
      user,
      { password: newPassword },
      { actor: { type: 'user', id: user.id }, address: null },
    );
    const verified = await this.deps.storage.users.markEmailVerified(user.id, link.address);
    return { outcome: 'reset', user: { ...updated, emailVerified: updated.emailVerified || verified } };
  }

  /** "Verify" on the link's page: consumes the link and marks the address verified if it is still the user's. */
  async verifyEmail(token: string): Promise<EmailVerificationResult> {
    const link = await this.deps.storage.mailLinks.consume(
      sha256(token),
      'email-verification',
      this.deps.clock.now(),
    );
    if (link === undefined) return this.whyNot(token, 'email-verification');
    if (!(await this.deps.storage.users.markEmailVerified(link.userId, link.address))) {
      return { outcome: 'address-changed' };
    }
    const user = await this.deps.storage.users.get(link.userId);
    return user === undefined ? { outcome: 'unknown' } : { outcome: 'verified', user };
  }

  private async whyNot(
    token: string,
    purpose: MailLinkPurpose,
  ): Promise<Exclude<LinkState, { outcome: 'valid' }>> {
    const state = await this.check(token, purpose);
    // Consumed by another request between our consume and this read: it is used now.
    return state.outcome === 'valid' ? { outcome: 'used' } : state;
  }

  private track(work: Promise<void>, failed: MailFailure): void {
    const tracked = work.catch(failed).finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }

  private async sendPasswordResets(address: string): Promise<void> {
    const users = await this.deps.storage.users.listByEmail(address, USERS_PER_ADDRESS);
    for (const user of users) {
      if (user.email === null) continue;
      const url = await this.issue(user, user.email, 'password-reset');
      if (url === undefined) continue;
      const { productName } = this.deps.policy;
      await this.deps.mailer.send({
        to: user.email,
        subject: `Reset your ${productName} password`,
        text: [
          `Someone, hopefully you, asked to reset the password of the account "${user.username}" at ${productName}.`,
          '',
          `To choose a new password, open this link within ${MAIL_LINK_TTL_SECONDS / 60} minutes:`,
          '',
          url,
          '',
          'The link works once. Setting a new password signs the account out everywhere.',
          'If you did not ask for this, ignore this mail: your password stays as it is.',
        ].join('\n'),
      });
    }
  }

  private async sendEmailVerification(userId: string): Promise<void> {
    const user = await this.deps.storage.users.get(userId);
    if (user === undefined || user.email === null || user.emailVerified) return;
    const url = await this.issue(user, user.email, 'email-verification');
    if (url === undefined) return;
    const { productName } = this.deps.policy;
    await this.deps.mailer.send({
      to: user.email,
      subject: `Verify your email address for ${productName}`,
      text: [
        `To confirm that ${user.email} is the address of the account "${user.username}" at ${productName}, open this link within ${MAIL_LINK_TTL_SECONDS / 60} minutes:`,
        '',
        url,
        '',
        'If you did not ask for this, ignore this mail.',
      ].join('\n'),
    });
  }

  /**
   * Stores a new link for `user` to `address` and returns its URL; undefined when the user had their
   * MAILS_PER_USER_PER_HOUR of this purpose already.
   */
  private async issue(
    user: User,
    address: string,
    purpose: MailLinkPurpose,
    storage: Pick<AccountMailDependencies['storage'], 'mailLinks' | 'throttle'> = this.deps.storage,
  ): Promise<string | undefined> {
    const now = this.deps.clock.now();
    const { count } = await storage.throttle.hit(`mail:${purpose}:${user.id}`, 3600, now);
    if (count > MAILS_PER_USER_PER_HOUR) return undefined;
    const token = randomToken('');
    await storage.mailLinks.insert({
      hash: sha256(token),
      purpose,
      userId: user.id,
      address,
      createdAt: now,
      expiresAt: now + MAIL_LINK_TTL_SECONDS,
      usedAt: null,
    });
    const base =
      purpose === 'password-reset'
        ? this.deps.policy.passwordResetUrl
        : this.deps.policy.emailVerificationUrl;
    return `${base}?token=${token}`;
  }
}
