import { isoTime } from '../../shared/clock.js';
import type { KeyRevocation, KeyRing } from './key-ring.js';
import type { SigningKeyRecord } from '../model.js';
import type { Storage } from '../ports.js';
import { AuditLog, UNATTRIBUTED, type AuditContext } from '../audit/audit-log.js';

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
    private readonly storage: Storage,
    private readonly keyRing: Pick<KeyRing, 'rotateAll' | 'revoke' | 'reloadNow'>,
    /** Every rotation and revocation is recorded, in its own transaction (decision 41). */
    private readonly audit: AuditLog,
  ) {}

  /** Newest first. */
  list(): Promise<SigningKeyRecord[]> {
    return this.storage.signingKeys.list();
  }

  async get(kid: string): Promise<SigningKeyRecord | undefined> {
    return (await this.storage.signingKeys.list()).find((key) => key.kid === kid);
  }

  /**
   * Makes a new active key for each algorithm the ring keeps (the access tokens', and RS256 and ES256
   * for ID tokens) and retires the others; returns the new access-token key's id.
   */
  async rotate(context: AuditContext = UNATTRIBUTED): Promise<string> {
    return (await this.rotateAll(context)).kid;
  }

  /** rotate(), answering every new key with its algorithm. */
  async rotateAll(context: AuditContext = UNATTRIBUTED): ReturnType<KeyRing['rotateAll']> {
    const rotated = await this.audit.change(context, async (storage, record) => {
      const result = await this.keyRing.rotateAll(storage.signingKeys);
      await record({
        type: 'signing-key.rotated',
        after: { kids: result.kids.map(({ kid, alg }) => ({ kid, alg })) },
      });
      return result;
    });
    await this.keyRing.reloadNow();
    return rotated;
  }

  /** Revokes a key (KeyRing.revoke); undefined when no key has this id. */
  async revoke(kid: string, context: AuditContext = UNATTRIBUTED): Promise<KeyRevocation | undefined> {
    const revoked = await this.audit.change(context, async (storage, record) => {
      const before = (await storage.signingKeys.list()).find((key) => key.kid === kid);
      const result = await this.keyRing.revoke(kid, storage.signingKeys);
      if (result === undefined || before === undefined) return undefined;
      // Revoking a revoked key changes nothing: nothing to record.
      if (!result.alreadyRevoked) {
        await record({
          type: 'signing-key.revoked',
          before: viewSigningKey(before),
          ...(result.replacement === undefined ? {} : { detail: `replaced by ${result.replacement}` }),
        });
      }
      return result;
    });
    await this.keyRing.reloadNow();
    return revoked;
  }
}
