import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type AuthenticatorTransport,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { AuditContext, AuditLog } from '../audit/audit-log.js';
import type { Clock } from '../../shared/clock.js';
import { randomToken, sha256 } from '../../shared/crypto.js';
import type { Passkey, User, WebAuthnPurpose } from '../model.js';
import type { PasskeyStore, UserStore, WebAuthnChallengeStore } from '../ports.js';
import type { AttemptContext, Authenticator, AuthenticatorResult } from './authenticator.js';
import { PASSKEY, SYNCED_PASSKEY } from './methods.js';
import { judgeAssertion, passkeyName } from './passkey-rules.js';
import type { SignInResult, SignInService } from './sign-in-service.js';

/**
 * How long a ceremony's challenge may be answered: the options' `timeout` too (WebAuthn §5.4, §5.5).
 * A conditional request (autofill) waits on the sign-in page; an answer after this is refused and the
 * page asks again.
 */
export const WEBAUTHN_CHALLENGE_TTL = 5 * 60;

/** Passkeys one user may register: bounds the security page's list and every excludeCredentials. */
export const MAX_PASSKEYS_PER_USER = 25;

/** The longest credential id a browser may send (WebAuthn §4: at most 1023 bytes) as base64url. */
const MAX_CREDENTIAL_ID_LENGTH = 1364;

/** A passkey attempt: the browser's answer, parsed from JSON but not otherwise trusted. */
export interface PasskeyAttempt {
  credential: unknown;
  /** The browser id the challenge was issued to (the cookie). */
  browserId: string;
  purpose: Extract<WebAuthnPurpose, 'sign-in' | 'second-factor'>;
  /** The second factor's user: the one whose password was just accepted. */
  userId?: string;
}

export type PasskeyRegistrationResult =
  | { outcome: 'added'; passkey: Passkey }
  | { outcome: 'invalid-name' }
  | { outcome: 'too-many' }
  | { outcome: 'refused' };

export interface PasskeysDependencies {
  passkeys: PasskeyStore;
  challenges: WebAuthnChallengeStore;
  users: Pick<UserStore, 'get'>;
  clock: Clock;
  /** The issuer URL: its host is the relying-party id, its origin the one expected (decision 33). */
  issuer: string;
  signIns: SignInService;
  /** Where the user's own additions and removals are recorded, each with its change (decision 41). */
  audit?: AuditLog;
}

/**
 * Passkeys (WebAuthn Level 2/3 through @simplewebauthn/server; docs/decisions.md, decision 33): their
 * registration on the security page, the passwordless sign-in with a discoverable credential, and the
 * second factor after a password. The relying-party id is the issuer's host and the origin the
 * issuer's, so a passkey made here answers nowhere else (the browser enforces it, the check below
 * again). Every challenge is stored (several processes share them), bound to its browser and purpose,
 * and taken once.
 */
export class Passkeys {
  readonly rpId: string;
  readonly origin: string;
  private readonly authenticator: PasskeyAuthenticator;

  constructor(private readonly deps: PasskeysDependencies) {
    const issuer = new URL(deps.issuer);
    this.rpId = issuer.hostname;
    this.origin = issuer.origin;
    this.authenticator = new PasskeyAuthenticator(this, deps);
  }

  list(userId: string): Promise<Passkey[]> {
    return this.deps.passkeys.listByUser(userId);
  }

  /** Removes one of the user's passkeys; with `context`, recorded as `second-factor.removed` with it. */
  async remove(userId: string, id: string, context?: AuditContext): Promise<boolean> {
    const { audit } = this.deps;
    if (context === undefined || audit === undefined) return this.deps.passkeys.delete(userId, id);
    return audit.change(context, async (storage, record) => {
      const passkey = (await storage.passkeys.listByUser(userId)).find((found) => found.id === id);
      if (passkey === undefined || !(await storage.passkeys.delete(userId, id))) return false;
      await record({ type: 'second-factor.removed', userId, detail: `passkey "${passkey.name}"` });
      return true;
    });
  }

  /** Options for navigator.credentials.create() on the security page (WebAuthn §5.4). */
  async registrationOptions(user: User, browserId: string): Promise<PublicKeyCredentialCreationOptionsJSON> {
    const existing = await this.deps.passkeys.listByUser(user.id);
    return generateRegistrationOptions({
      rpName: this.rpId,
      rpID: this.rpId,
      userName: user.username,
      userDisplayName: user.name ?? user.username,
      // The user handle (§5.4.3): the user's id, which is random and names nothing personal; a
      // discoverable sign-in returns it, and it must match the credential's user.
      userID: new TextEncoder().encode(user.id),
      challenge: await this.issueChallenge(browserId, 'register', user.id),
      timeout: WEBAUTHN_CHALLENGE_TTL * 1000,
      // A passkey is discoverable (no user name typed at sign-in) and verifies its user.
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
      // No attestation: which authenticator model it is changes nothing here, and asking shows a prompt.
      attestationType: 'none',
      excludeCredentials: existing.map((passkey) => ({
        id: passkey.id,
        transports: passkey.transports as AuthenticatorTransport[],
      })),
    });
  }

  /** Checks the browser's answer to registrationOptions and stores the passkey under `name`. */
  async register(
    user: User,
    browserId: string,
    input: { name: string; credential: unknown },
    /** Who adds it and from where: recorded as `second-factor.added` with the passkey (decision 41). */
    context?: AuditContext,
  ): Promise<PasskeyRegistrationResult> {
    const name = passkeyName(input.name);
    if (name === undefined) return { outcome: 'invalid-name' };
    if (!isCredential(input.credential)) return { outcome: 'refused' };
    const response = input.credential as unknown as RegistrationResponseJSON;
    let info;
    try {
      const verification = await verifyRegistrationResponse({
        response,
        expectedChallenge: (challenge) => this.takeChallenge(challenge, browserId, 'register', user.id),
        expectedOrigin: this.origin,
        expectedRPID: this.rpId,
        requireUserVerification: true,
      });
      if (!verification.verified) return { outcome: 'refused' };
      info = verification.registrationInfo;
    } catch {
      // The library throws on every malformed or failed check; which one is not the person's concern.
      return { outcome: 'refused' };
    }
    if ((await this.deps.passkeys.listByUser(user.id)).length >= MAX_PASSKEYS_PER_USER) {
      return { outcome: 'too-many' };
    }
    const passkey: Passkey = {
      id: info.credential.id,
      userId: user.id,
      name,
      publicKey: Buffer.from(info.credential.publicKey).toString('base64url'),
      signCount: info.credential.counter,
      transports: info.credential.transports ?? [],
      backupEligible: info.credentialDeviceType === 'multiDevice',
      backedUp: info.credentialBackedUp,
      createdAt: this.deps.clock.now(),
      lastUsedAt: null,
    };
    // A credential id registered already (to anyone) is not registered again.
    const { audit } = this.deps;
    const inserted =
      context === undefined || audit === undefined
        ? await this.deps.passkeys.insert(passkey)
        : await audit.change(context, async (storage, record) => {
            if (!(await storage.passkeys.insert(passkey))) return false;
            // Its name, never its key or credential id's secret parts (a public key is no secret either).
            await record({ type: 'second-factor.added', userId: user.id, detail: `passkey "${name}"` });
            return true;
          });
    if (!inserted) return { outcome: 'refused' };
    return { outcome: 'added', passkey };
  }

  /**
   * Options for a passwordless sign-in (WebAuthn §5.5): no allowCredentials, so the authenticator
   * offers its discoverable credentials for this relying party, and user verification required. The
   * same options serve the button and the conditional request (autofill).
   */
  async signInOptions(browserId: string): Promise<PublicKeyCredentialRequestOptionsJSON> {
    return generateAuthenticationOptions({
      rpID: this.rpId,
      challenge: await this.issueChallenge(browserId, 'sign-in', null),
      timeout: WEBAUTHN_CHALLENGE_TTL * 1000,
      userVerification: 'required',
      allowCredentials: [],
    });
  }

  /** A passwordless sign-in, under the one lockout every method shares (decision 30). */
  signIn(input: { credential: unknown; browserId: string; address: string }): Promise<SignInResult> {
    return this.deps.signIns.attempt(
      this.authenticator,
      { credential: input.credential, browserId: input.browserId, purpose: 'sign-in' },
      { address: input.address },
    );
  }

  /**
   * Options for a passkey as the second factor of `userId`, whose password was just accepted: only that
   * user's passkeys are allowed. Undefined when the user has none.
   */
  async secondFactorOptions(
    userId: string,
    browserId: string,
  ): Promise<PublicKeyCredentialRequestOptionsJSON | undefined> {
    const passkeys = await this.deps.passkeys.listByUser(userId);
    if (passkeys.length === 0) return undefined;
    return generateAuthenticationOptions({
      rpID: this.rpId,
      challenge: await this.issueChallenge(browserId, 'second-factor', userId),
      timeout: WEBAUTHN_CHALLENGE_TTL * 1000,
      userVerification: 'required',
      allowCredentials: passkeys.map((passkey) => ({
        id: passkey.id,
        transports: passkey.transports as AuthenticatorTransport[],
      })),
    });
  }

  /**
   * A passkey as the second factor of `userId` (the answer to secondFactorOptions), under the same
   * lockout. Its `authentication` is the passkey's; the caller records it after the password's.
   */
  secondFactor(input: {
    userId: string;
    credential: unknown;
    browserId: string;
    address: string;
  }): Promise<SignInResult> {
    return this.deps.signIns.attempt(
      this.authenticator,
      {
        credential: input.credential,
        browserId: input.browserId,
        purpose: 'second-factor',
        userId: input.userId,
      },
      { address: input.address },
    );
  }

  /**
   * A fresh challenge (WebAuthn §13.4.3: 32 random bytes), stored as the hash of its base64url form,
   * which is what clientDataJSON carries back. Given to the library as bytes: a string would be taken
   * as text and encoded again.
   */
  private async issueChallenge(
    browserId: string,
    purpose: WebAuthnPurpose,
    userId: string | null,
  ): Promise<Uint8Array<ArrayBuffer>> {
    const challenge = randomToken('', 32);
    const now = this.deps.clock.now();
    await this.deps.challenges.insert({
      hash: sha256(challenge),
      browserHash: sha256(browserId),
      purpose,
      userId,
      createdAt: now,
      expiresAt: now + WEBAUTHN_CHALLENGE_TTL,
    });
    return Uint8Array.from(Buffer.from(challenge, 'base64url'));
  }

  /**
   * Takes the challenge the browser signed over, once: only one issued to this browser, for this
   * purpose and (registration, second factor) this user, and not expired. Called by the library with
   * the challenge from clientDataJSON.
   */
  async takeChallenge(
    challenge: string,
    browserId: string,
    purpose: WebAuthnPurpose,
    userId: string | null,
  ): Promise<boolean> {
    const taken = await this.deps.challenges.consume(
      sha256(challenge),
      sha256(browserId),
      purpose,
      this.deps.clock.now(),
    );
    return taken !== undefined && taken.userId === userId;
  }
}

/** The passkey method (decision 30), run by SignInService: sign-in and second factor. */
export class PasskeyAuthenticator implements Authenticator<PasskeyAttempt> {
  readonly method = PASSKEY;
  /** What claimant() found, for verify(): one read of the credential and its user per attempt. */
  private readonly found = new WeakMap<PasskeyAttempt, { passkey: Passkey; user: User } | null>();

  constructor(
    private readonly ceremonies: Passkeys,
    private readonly deps: Pick<PasskeysDependencies, 'passkeys' | 'users' | 'clock'>,
  ) {}

  /** The credential's user: looked up by credential id, nothing checked yet. */
  async claimant(attempt: PasskeyAttempt): Promise<string | undefined> {
    const found = await this.lookUp(attempt);
    return found?.user.username;
  }

  async verify(attempt: PasskeyAttempt, _context: AttemptContext): Promise<AuthenticatorResult> {
    const found = this.found.get(attempt) ?? (await this.lookUp(attempt));
    if (found === undefined || found === null) return { outcome: 'refused' };
    const { passkey, user } = found;
    const response = attempt.credential as AuthenticationResponseJSON;
    // WebAuthn §7.2 step 6: the user handle, when sent (always, for a discoverable credential), names
    // the credential's user.
    const userHandle = response.response.userHandle;
    const expectedHandle = Buffer.from(user.id).toString('base64url');
    const handleRequired = attempt.purpose === 'sign-in';
    if (userHandle === undefined ? handleRequired : userHandle !== expectedHandle) {
      return { outcome: 'refused' };
    }
    let info;
    try {
      const verification = await verifyAuthenticationResponse({
        response,
        expectedChallenge: (challenge) =>
          this.ceremonies.takeChallenge(
            challenge,
            attempt.browserId,
            attempt.purpose,
            attempt.purpose === 'second-factor' ? user.id : null,
          ),
        expectedOrigin: this.ceremonies.origin,
        expectedRPID: this.ceremonies.rpId,
        credential: {
          id: passkey.id,
          publicKey: Buffer.from(passkey.publicKey, 'base64url'),
          // The counter, user verification and backup rules are core's (judgeAssertion, below, tested
          // as a table); given 0 and false here, the library checks the signature, the origin, the
          // relying-party id, the challenge and user presence, and reports the flags.
          counter: 0,
          transports: passkey.transports as AuthenticatorTransport[],
        },
        requireUserVerification: false,
      });
      if (!verification.verified) return { outcome: 'refused' };
      info = verification.authenticationInfo;
    } catch {
      return { outcome: 'refused' };
    }
    const verdict = judgeAssertion(passkey, {
      signCount: info.newCounter,
      userVerified: info.userVerified,
      backupEligible: info.credentialDeviceType === 'multiDevice',
      backedUp: info.credentialBackedUp,
    });
    if (verdict.verdict === 'refused') return { outcome: 'refused' };
    // Recorded only if no other assertion moved the counter since it was read (PasskeyStore.recordUse).
    const recorded = await this.deps.passkeys.recordUse(passkey.id, passkey.signCount, {
      signCount: verdict.signCount,
      backedUp: verdict.backedUp,
      at: this.deps.clock.now(),
    });
    if (!recorded) return { outcome: 'refused' };
    return { outcome: 'verified', user, method: passkey.backupEligible ? SYNCED_PASSKEY : PASSKEY };
  }

  private async lookUp(attempt: PasskeyAttempt): Promise<{ passkey: Passkey; user: User } | undefined> {
    const id = credentialId(attempt.credential);
    const passkey = id === undefined ? undefined : await this.deps.passkeys.get(id);
    const user = passkey && (await this.deps.users.get(passkey.userId));
    // A second factor is only ever the user whose password was accepted.
    const found =
      passkey !== undefined &&
      user !== undefined &&
      (attempt.purpose === 'sign-in' || passkey.userId === attempt.userId)
        ? { passkey, user }
        : undefined;
    this.found.set(attempt, found ?? null);
    return found;
  }
}

/** A WebAuthn response as browsers serialise it: an object with the fields every check reads. */
function isCredential(value: unknown): value is { id: string; response: Record<string, unknown> } {
  if (typeof value !== 'object' || value === null) return false;
  const { id, rawId, type, response } = value as Record<string, unknown>;
  return (
    typeof id === 'string' &&
    id.length > 0 &&
    id.length <= MAX_CREDENTIAL_ID_LENGTH &&
    rawId === id &&
    type === 'public-key' &&
    typeof response === 'object' &&
    response !== null
  );
}

function credentialId(value: unknown): string | undefined {
  return isCredential(value) ? value.id : undefined;
}
