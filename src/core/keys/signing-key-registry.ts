import { isoTime } from '../../shared/clock.js';
import type { KeyRevocation, KeyRing } from './key-ring.js';
import type { SigningKeyRecord } from '../model.js';
import type { SigningKeyStore } from '../ports.js';

export type SigningKeyStatus = 'active' | 'retired' | 'revoked';

/** A key signs while active; once retired it still verifies for a while; revoked, it does neither. */
export function signingKeyStatus(key: SigningKeyRecord): SigningKeyStatus {
  if (key.revokedAt !== null) return 'revoked';
  return key.retiredAt === null ? 'active' : 'retired';
}

/** A signing key as operators see it: public parts only (the private key never leaves the store sealed). */
export interface SigningKeyView {
  kid: string;
  alg: SigningKeyRecord['alg'];
  status: SigningKeyStatus;
  public_jwk: Record<string, string>;
  created_at: string;
  retired_at: string | null;
  revoked_at: string | null;
}

export function viewSigningKey(key: SigningKeyRecord): SigningKeyView {
  return {
    kid: key.kid,
    alg: key.alg,
    status: signingKeyStatus(key),
    public_jwk: key.publicJwk,
    created_at: isoTime(key.createdAt),
    retired_at: key.retiredAt === null ? null : isoTime(key.retiredAt),
    revoked_at: key.revokedAt === null ? null : isoTime(key.revokedAt),
  };
}

/**
 * The signing keys as operators see and change them (/v1/signing-keys, `gatehouse keys`). Rotation and
 * revocation go through the key ring, so this process signs with the new key at once.
 */
export class SigningKeyRegistry {
  constructor(
    private readonly store: Pick<SigningKeyStore, 'list'>,
    private readonly keyRing: Pick<KeyRing, 'rotate' | 'rotateAll' | 'revoke'>,
  ) {}

  /** Newest first. */
  list(): Promise<SigningKeyRecord[]> {
    return this.store.list();
  }

  async get(kid: string): Promise<SigningKeyRecord | undefined> {
    return (await this.store.list()).find((key) => key.kid === kid);
  }

  /**
   * Makes a new active key for each algorithm the ring keeps (the access tokens', and RS256 and ES256
   * for ID tokens) and retires the others; returns the new access-token key's id.
   */
  rotate(): Promise<string> {
    return this.keyRing.rotate();
  }

  /** rotate(), answering every new key with its algorithm. */
  rotateAll(): ReturnType<KeyRing['rotateAll']> {
    return this.keyRing.rotateAll();
  }

  /** Revokes a key (KeyRing.revoke); undefined when no key has this id. */
  revoke(kid: string): Promise<KeyRevocation | undefined> {
    return this.keyRing.revoke(kid);
  }
}
