import { createPrivateKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, type JWK } from 'jose';
import type { Clock } from '../shared/clock.js';
import type { SigningKeyRecord } from './model.js';
import type { SigningKeyStore } from './ports.js';
import { open, seal } from './sealed-box.js';

export type SigningAlgorithm = SigningKeyRecord['alg'];

interface ActiveKey {
  kid: string;
  alg: SigningAlgorithm;
  privateKey: KeyObject;
  /** base64url of the JOSE header, computed once per key rather than once per token. */
  encodedHeader: string;
}

export interface KeyRingOptions {
  store: SigningKeyStore;
  keyEncryptionKey: Buffer;
  clock: Clock;
  algorithm: SigningAlgorithm;
  /** How long a retired key stays in the JWKS, so tokens it signed still verify. */
  retiredKeyRetentionSeconds: number;
  /** How often a process looks for a key another process rotated in. */
  refreshIntervalSeconds: number;
}

const SEAL_CONTEXT = 'gatehouse:signing-key';

/**
 * The signing keys as this process sees them. Keys live in the shared store (sealed under the
 * key-encryption key); each process caches the active one and re-reads the store periodically,
 * so a rotation made anywhere reaches every process without a restart.
 */
export class KeyRing {
  private active: ActiveKey | undefined;
  private loadedAt = 0;
  private loading: Promise<void> | undefined;

  constructor(private readonly options: KeyRingOptions) {}

  /** Loads the active key, creating the first one when the store has none. */
  async init(): Promise<void> {
    await this.reload();
    if (this.active === undefined) {
      await this.rotate();
    }
  }

  /** Creates a new active key and retires the others; returns the new key id. */
  async rotate(): Promise<string> {
    const record = await generateSigningKey(
      this.options.algorithm,
      this.options.keyEncryptionKey,
      this.options.clock.now(),
    );
    await this.options.store.insert(record);
    await this.options.store.retireAllExcept(record.kid, this.options.clock.now());
    await this.reload();
    return record.kid;
  }

  /** Signs a JWT with the active key. Synchronous: the hot path of every token response. */
  signJwt(claims: Record<string, unknown>): string {
    this.refreshInBackgroundIfStale();
    const key = this.active;
    if (key === undefined) throw new Error('key ring not initialised');
    const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
    const signingInput = `${key.encodedHeader}.${payload}`;
    const signature =
      key.alg === 'ES256'
        ? sign('sha256', Buffer.from(signingInput), {
            key: key.privateKey,
            dsaEncoding: 'ieee-p1363',
          })
        : sign(null, Buffer.from(signingInput), key.privateKey);
    return `${signingInput}.${signature.toString('base64url')}`;
  }

  get activeKid(): string | undefined {
    return this.active?.kid;
  }

  /** Public keys to publish: the active key and those retired recently enough to matter. */
  async publicJwks(): Promise<{ keys: JWK[] }> {
    const now = this.options.clock.now();
    const records = await this.options.store.list();
    const keys = records
      .filter(
        (record) =>
          record.retiredAt === null || now - record.retiredAt < this.options.retiredKeyRetentionSeconds,
      )
      .map((record) => ({ ...record.publicJwk }) as JWK);
    return { keys };
  }

  private refreshInBackgroundIfStale(): void {
    if (this.loading !== undefined) return;
    if (this.options.clock.now() - this.loadedAt < this.options.refreshIntervalSeconds) return;
    this.loading = this.reload()
      .catch(() => {
        // Keep signing with the key we have; the next request tries again.
      })
      .finally(() => {
        this.loading = undefined;
      });
  }

  private async reload(): Promise<void> {
    const records = await this.options.store.list();
    const current = records.find((record) => record.retiredAt === null) ?? records[0];
    this.loadedAt = this.options.clock.now();
    if (current === undefined) {
      this.active = undefined;
      return;
    }
    if (this.active?.kid === current.kid) return;
    const der = open(this.options.keyEncryptionKey, current.privateKeySealed, SEAL_CONTEXT);
    const privateKey = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
    const header = { alg: current.alg, typ: 'at+jwt', kid: current.kid };
    this.active = {
      kid: current.kid,
      alg: current.alg,
      privateKey,
      encodedHeader: Buffer.from(JSON.stringify(header)).toString('base64url'),
    };
  }
}

export async function generateSigningKey(
  alg: SigningAlgorithm,
  keyEncryptionKey: Buffer,
  now: number,
): Promise<SigningKeyRecord> {
  const pair =
    alg === 'ES256' ? generateKeyPairSync('ec', { namedCurve: 'P-256' }) : generateKeyPairSync('ed25519');
  const jwk = pair.publicKey.export({ format: 'jwk' }) as JWK;
  const kid = await calculateJwkThumbprint(jwk);
  const publicJwk: Record<string, string> = { ...(jwk as Record<string, string>), kid, alg, use: 'sig' };
  const der = pair.privateKey.export({ format: 'der', type: 'pkcs8' });
  return {
    kid,
    alg,
    publicJwk,
    privateKeySealed: seal(keyEncryptionKey, der, SEAL_CONTEXT),
    createdAt: now,
    retiredAt: null,
  };
}
