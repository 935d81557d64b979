import { createPrivateKey, generateKeyPair, sign, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, type JWK } from 'jose';
import type { Clock } from '../shared/clock.js';
import type { SigningKeyRecord } from './model.js';
import type { SigningKeyStore } from './ports.js';
import { open, seal } from './sealed-box.js';

export type SigningAlgorithm = SigningKeyRecord['alg'];

interface ActiveKey {
  kid: string;
  alg: SigningAlgorithm;
  /** Signs the JWS signing input with this key's algorithm. */
  sign: (signingInput: Buffer) => Buffer;
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
  private closed = false;

  constructor(private readonly options: KeyRingOptions) {}

  /** No more background refreshes; waits for one in flight, so the store can be closed after it. */
  async close(): Promise<void> {
    this.closed = true;
    await this.loading;
  }

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
    const signature = key.sign(Buffer.from(signingInput));
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
    if (this.loading !== undefined || this.closed) return;
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
      sign: signerFor(current.alg, privateKey),
      encodedHeader: Buffer.from(JSON.stringify(header)).toString('base64url'),
    };
  }
}

/** The JWS signature of each algorithm (RFC 7518 §3), with node:crypto's synchronous sign. */
function signerFor(alg: SigningAlgorithm, privateKey: KeyObject): (signingInput: Buffer) => Buffer {
  switch (alg) {
    case 'ES256':
      // JWS wants the raw r || s form, not DER.
      return (input) => sign('sha256', input, { key: privateKey, dsaEncoding: 'ieee-p1363' });
    case 'RS256':
      // RSASSA-PKCS1-v1_5 is node's default padding for RSA keys.
      return (input) => sign('sha256', input, privateKey);
    case 'EdDSA':
      return (input) => sign(null, input, privateKey);
  }
}

interface KeyPair {
  publicKey: KeyObject;
  privateKey: KeyObject;
}

/** Off the event loop: an RSA key takes tens to hundreds of milliseconds to generate. */
function newKeyPair(alg: SigningAlgorithm): Promise<KeyPair> {
  return new Promise((resolve, reject) => {
    const done = (error: Error | null, publicKey: KeyObject, privateKey: KeyObject) =>
      error === null ? resolve({ publicKey, privateKey }) : reject(error);
    switch (alg) {
      case 'ES256':
        generateKeyPair('ec', { namedCurve: 'P-256' }, done);
        return;
      case 'RS256':
        // RFC 7518 §3.3: 2048 bits at least; e = 65537 as everyone uses.
        generateKeyPair('rsa', { modulusLength: 2048, publicExponent: 0x10001 }, done);
        return;
      case 'EdDSA':
        generateKeyPair('ed25519', undefined, done);
        return;
    }
  });
}

export async function generateSigningKey(
  alg: SigningAlgorithm,
  keyEncryptionKey: Buffer,
  now: number,
): Promise<SigningKeyRecord> {
  const pair = await newKeyPair(alg);
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

/** Whether `keyEncryptionKey` opens the key's sealed private key, i.e. the server secret is the right one. */
export function opensSigningKey(record: SigningKeyRecord, keyEncryptionKey: Buffer): boolean {
  try {
    open(keyEncryptionKey, record.privateKeySealed, SEAL_CONTEXT);
    return true;
  } catch {
    return false;
  }
}
