/**
 * The rules an assertion is held to once its signature is verified (docs/decisions.md, decision 33),
 * apart from the library that checks signatures, so they are tested as a table without a server.
 */

/** What the stored credential says. */
export interface StoredCredentialState {
  signCount: number;
  backupEligible: boolean;
}

/** What the verified assertion's authenticator data says (WebAuthn §6.1). */
export interface ObservedAssertion {
  signCount: number;
  /** The UV flag. */
  userVerified: boolean;
  /** The BE flag. */
  backupEligible: boolean;
  /** The BS flag. */
  backedUp: boolean;
}

export type AssertionVerdict =
  /** Accepted: what to store (PasskeyStore.recordUse). */
  | { verdict: 'accepted'; signCount: number; backedUp: boolean }
  | { verdict: 'refused'; reason: 'user-not-verified' | 'cloned' | 'backup-eligibility-changed' };

/**
 * Judges a verified assertion against the stored credential:
 * - user verification is required (every passkey ceremony here asks for it, decision 33);
 * - the signature counter (WebAuthn §6.1.1, §7.2 step 22): when either the stored or the received
 *   count is non-zero, the received one must be greater; otherwise two copies of the private key are
 *   in use (a cloned authenticator), and the assertion is refused. Both zero: an authenticator that
 *   keeps no counter (synced passkeys), which proves nothing either way;
 * - the BE flag is fixed for a credential's life (§6.1.3, §7.2 step 18): a change means the
 *   authenticator is not the one registered. The BS flag may change and is kept.
 */
export function judgeAssertion(stored: StoredCredentialState, observed: ObservedAssertion): AssertionVerdict {
  if (!observed.userVerified) return { verdict: 'refused', reason: 'user-not-verified' };
  if (observed.backupEligible !== stored.backupEligible) {
    return { verdict: 'refused', reason: 'backup-eligibility-changed' };
  }
  if ((observed.signCount > 0 || stored.signCount > 0) && observed.signCount <= stored.signCount) {
    return { verdict: 'refused', reason: 'cloned' };
  }
  return { verdict: 'accepted', signCount: observed.signCount, backedUp: observed.backedUp };
}

/** What a passkey's name may be: what the person typed, trimmed, 1 to 64 characters. */
export const PASSKEY_NAME_MAX_LENGTH = 64;

export function passkeyName(typed: string): string | undefined {
  const name = typed.trim().replace(/\s+/g, ' ');
  return name.length > 0 && [...name].length <= PASSKEY_NAME_MAX_LENGTH ? name : undefined;
}
