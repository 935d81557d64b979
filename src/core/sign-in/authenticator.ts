import type { User } from '../model.js';
import type { AuthenticationMethod } from './methods.js';

/** Where an attempt comes from: the source its lockout and throttling are counted under. */
export interface AttemptContext {
  address: string;
}

/** A method's verdict on one attempt; the SignInService alone says how a refusal is answered. */
export type AuthenticatorResult =
  | {
      outcome: 'verified';
      user: User;
      /**
       * The method the session records when it is not the authenticator's own `method`: a passkey is
       * `passkey` or `synced-passkey` by the credential used (decision 33), known only once verified.
       */
      method?: AuthenticationMethod;
    }
  | { outcome: 'refused' };

/**
 * One way of proving who a person is (docs/decisions.md, decision 30): the password today; a passkey,
 * a one-time code or an upstream provider next. An authenticator only checks; every attempt goes
 * through SignInService.attempt, so each method is throttled per source and locked per (user name,
 * source) the same way, and its success is recorded on the browser session the same way.
 */
export interface Authenticator<Attempt> {
  readonly method: AuthenticationMethod;
  /**
   * The user name the attempt is counted under, found without checking any secret (the name typed; a
   * one-time code's user, already known; a passkey's credential looked up); undefined when it names
   * nobody who can exist, which counts as a failure of the source alone.
   */
  claimant(attempt: Attempt): Promise<string | undefined>;
  /** Checks the attempt; called only while neither the source nor (name, source) is locked. */
  verify(attempt: Attempt, context: AttemptContext): Promise<AuthenticatorResult>;
}
