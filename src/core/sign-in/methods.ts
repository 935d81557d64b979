/**
 * The ways a person proves who they are at sign-in (docs/decisions.md, decision 30). Each method is
 * described once here: what it reports (RFC 8176 `amr` values), which kinds of factor it is, whether
 * it proves the person alone or only after another method, and whether it resists phishing. What a
 * session is worth (`amr`, `acr`, `auth_time`) is derived from these descriptions (assurance.ts).
 */

/**
 * RFC 8176 §2 Authentication Method Reference values this server reports: `pwd` a password, `otp` a
 * one-time code, `hwk`/`swk` a hardware- or software-secured key, `user` a user-presence or
 * verification test, `pin` a PIN, `mfa` more than one kind of factor. And `fed`, which RFC 8176 does not
 * register (§2 allows unregistered values) but Entra ID and others send: a sign-in federated through
 * another identity provider (decision 40).
 */
export type AmrValue = 'pwd' | 'otp' | 'hwk' | 'swk' | 'user' | 'pin' | 'mfa' | 'fed' | UpstreamAmrValue;

/**
 * The rest of RFC 8176 §2's registered values, which this server never reports of its own sign-ins
 * but passes on from a trusted upstream provider's `amr` (decision 40): biometrics (`face`, `fpt`,
 * `iris`, `retina`, `vbm`), `kba` knowledge-based, `sms`/`tel` a code by message or call, `sc` a smart
 * card, `pop` a proof of possession of a key, `geo`/`rba`/`wia`/`mca` location, risk, Windows
 * integrated and multiple-channel authentication.
 */
export type UpstreamAmrValue =
  | 'face'
  | 'fpt'
  | 'geo'
  | 'iris'
  | 'kba'
  | 'mca'
  | 'pop'
  | 'rba'
  | 'retina'
  | 'sc'
  | 'sms'
  | 'tel'
  | 'vbm'
  | 'wia';

/** Something the person knows, has, or is: two different kinds make a multi-factor sign-in. */
export type FactorKind = 'knowledge' | 'possession' | 'inherence';

export interface AuthenticationMethod {
  /** The name recorded on a browser session (SessionAuthentication.method); never changes. */
  readonly name: string;
  /** What a sign-in by this method reports (RFC 8176 §2); `mfa` is derived, never listed here. */
  readonly amr: readonly AmrValue[];
  readonly factors: readonly FactorKind[];
  /**
   * `first`: proves who the person is alone (a password, a passkey, an upstream provider), so it may
   * satisfy the authorization step `sign-in`; `second`: only after a first one (a one-time code, a
   * recovery code).
   */
  readonly step: 'first' | 'second';
  /** Bound to this server's origin, so a look-alike site cannot relay it (a passkey). */
  readonly phishingResistant: boolean;
}

/** The password of the sign-in page (and the password grant's check, under the same lockout). */
export const PASSWORD: AuthenticationMethod = {
  name: 'password',
  amr: ['pwd'],
  factors: ['knowledge'],
  step: 'first',
  phishingResistant: false,
};

/**
 * An authenticator app's code (RFC 6238) after a password (decision 34): RFC 8176 `otp`, something the
 * person has (the phone holding the secret). Not phishing-resistant: a code can be relayed.
 */
export const TOTP: AuthenticationMethod = {
  name: 'totp',
  amr: ['otp'],
  factors: ['possession'],
  step: 'second',
  phishingResistant: false,
};

/**
 * A single-use recovery code, in place of the app (decision 34). RFC 8176 has no value of its own for
 * it; it is a one-time password (`otp`). It counts as possession, like the app it stands in for: the
 * printed or saved list is kept, not remembered; counted as knowledge, losing the phone would leave a
 * user of a client that requires two factors with no way in.
 */
export const RECOVERY_CODE: AuthenticationMethod = {
  name: 'recovery-code',
  amr: ['otp'],
  factors: ['possession'],
  step: 'second',
  phishingResistant: false,
};

/**
 * A passkey that never leaves its device (WebAuthn §6.1.3: backup eligibility, BE, unset), with user
 * verification, which every passkey ceremony here requires (docs/decisions.md, decision 33): RFC 8176
 * `hwk` (a key in hardware that stays there) and `user` (a PIN or a biometric on the authenticator).
 * Two kinds of factor: the device possessed, and what unlocks it; the server cannot tell a PIN from
 * a fingerprint, and either makes it the second kind (NIST SP 800-63B §5.1.9, a multi-factor
 * cryptographic authenticator), so alone it reports `mfa`. Bound to this server's origin by the
 * browser, so phishing-resistant.
 */
export const PASSKEY: AuthenticationMethod = {
  name: 'passkey',
  amr: ['hwk', 'user'],
  factors: ['possession', 'inherence'],
  step: 'first',
  phishingResistant: true,
};

/**
 * A passkey that may be synced between devices (BE set): RFC 8176 `swk`, the key is held by software
 * that can copy it (a platform's passkey manager), otherwise as PASSKEY.
 */
export const SYNCED_PASSKEY: AuthenticationMethod = {
  name: 'synced-passkey',
  amr: ['swk', 'user'],
  factors: ['possession', 'inherence'],
  step: 'first',
  phishingResistant: true,
};

/**
 * A sign-in through an upstream identity provider (decision 40): `fed`. What the upstream checked is
 * not known here unless the provider is trusted for it (SessionAuthentication.upstream), so alone it
 * counts as one factor, of the kind a sign-in proves at the least (knowledge), and is not
 * phishing-resistant: this server's origin is not what the upstream's ceremony was bound to.
 */
export const FEDERATED: AuthenticationMethod = {
  name: 'federated',
  amr: ['fed'],
  factors: ['knowledge'],
  step: 'first',
  phishingResistant: false,
};

/** Every method this server knows, by name: what a session's record is read against. */
export const AUTHENTICATION_METHODS: ReadonlyMap<string, AuthenticationMethod> = new Map([
  [PASSWORD.name, PASSWORD],
  [TOTP.name, TOTP],
  [RECOVERY_CODE.name, RECOVERY_CODE],
  [PASSKEY.name, PASSKEY],
  [SYNCED_PASSKEY.name, SYNCED_PASSKEY],
  [FEDERATED.name, FEDERATED],
]);

/** The names of the methods that may satisfy the authorization step `sign-in` (first factors). */
export const SIGN_IN_METHODS: readonly string[] = [...AUTHENTICATION_METHODS.values()]
  .filter((method) => method.step === 'first')
  .map((method) => method.name);
