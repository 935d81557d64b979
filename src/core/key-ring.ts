import { createPrivateKey, generateKeyPair, sign, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, createLocalJWKSet, type JWK, type JWTVerifyGetKey } from 'jose';
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
  /**
   * How often a process re-reads the keys (see start()), and the oldest its view may be when it signs
   * or verifies: a rotation or revocation made anywhere reaches every process within this bound.
   */
  refreshIntervalSeconds: number;
}

/** What revoke() did. */
export interface KeyRevocation {
  kid: string;
  /** The key made active in the revoked one's place, when the revoked key was the active one. */
  replacement: string | undefined;
  /** True when the key had been revoked before; nothing changed. */
  alreadyRevoked: boolean;
}

const SEAL_CONTEXT = 'gatehouse:signing-key';

/**
 * The signing keys as this process sees them. Keys live in the shared store (sealed under the
 * key-encryption key); each process caches them and re-reads the store on a timer (start()), and
 * before it signs or verifies with a view older than the refresh interval, so a rotation or a
 * revocation made anywhere reaches every process within that interval, whether it has traffic or not.
 */
export class KeyRing {
  private active: ActiveKey | undefined;
  /** The public keys that verify this server's tokens: not revoked, active or retired recently. */
  private verification: { kids: string; getKey: JWTVerifyGetKey } | undefined;
  private loadedAt = -Infinity;
  private failedAt = -Infinity;
  private loading: Promise<void> | undefined;
  /** Reads are numbered so that one that started earlier never overwrites a later one's view. */
  private readsStarted = 0;
  private readApplied = 0;
  private timer: NodeJS.Timeout | undefined;
  private onRefreshError: (error: unknown) => void = () => undefined;
  private closed = false;

  constructor(private readonly options: KeyRingOptions) {}

  /**
   * Re-reads the keys in the background for as long as the process runs (the timer does not keep it
   * alive). Every half interval: a tick may join a read that started just before a change committed,
   * and the next one then still comes within the interval. A failed read is reported to `onError` and
   * retried at the next tick, signing meanwhile with the keys already loaded.
   */
  start(onError: (error: unknown) => void): void {
    this.onRefreshError = onError;
    if (this.timer !== undefined || this.closed) return;
    this.timer = setInterval(() => {
      this.refresh().catch(onError);
    }, this.options.refreshIntervalSeconds * 500);
    this.timer.unref();
  }

  /** No more refreshes; waits for one in flight, so the store can be closed after it. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.loading?.catch(() => undefined);
  }

  /** Loads the keys, creating the first one when the store has none. */
  async init(): Promise<void> {
    await this.reload();
    if (this.active === undefined) {
      await this.rotate();
    }
  }

  /** Re-reads the store now; concurrent callers share one read. Rejects when the read fails. */
  refresh(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.loading ??= this.reload()
      .catch((error: unknown) => {
        this.failedAt = this.options.clock.now();
        throw error;
      })
      .finally(() => {
        this.loading = undefined;
      });
    return this.loading;
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

  /**
   * Revokes a key (a compromised one): it leaves the JWKS, never signs again, and the tokens it
   * signed no longer verify. The active key is replaced by a new one first, so that signing never
   * stops. Undefined when no key has this id.
   */
  async revoke(kid: string): Promise<KeyRevocation | undefined> {
    const target = (await this.options.store.list()).find((record) => record.kid === kid);
    if (target === undefined) return undefined;
    const replacement =
      target.retiredAt === null && target.revokedAt === null ? await this.rotate() : undefined;
    if (!(await this.options.store.revoke(kid, this.options.clock.now()))) return undefined;
    await this.reload();
    return { kid, replacement, alreadyRevoked: target.revokedAt !== null };
  }

  /** Signs a JWT with the active key, re-reading the keys first when this process's view is stale. */
  async sign(claims: Record<string, unknown>): Promise<string> {
    await this.fresh();
    return this.signJwt(claims);
  }

  /**
   * Signs a JWT with the active key as last loaded, synchronously. For callers that keep the ring
   * fresh themselves (benchmarks, tests); the server signs through sign().
   */
  signJwt(claims: Record<string, unknown>): string {
    const key = this.active;
    if (key === undefined) throw new Error('key ring not initialised');
    const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
    const signingInput = `${key.encodedHeader}.${payload}`;
    const signature = key.sign(Buffer.from(signingInput));
    return `${signingInput}.${signature.toString('base64url')}`;
  }

  /**
   * The keys that verify this server's tokens (jose's key resolver), re-read first when stale. A
   * revoked key is not among them, so a token it signed finds no key (RFC 7515 §10.3 leaves trust
   * in a key to the application; a revoked one is trusted for nothing).
   */
  async verificationKeys(): Promise<JWTVerifyGetKey> {
    await this.fresh();
    if (this.verification === undefined) throw new Error('key ring not initialised');
    return this.verification.getKey;
  }

  get activeKid(): string | undefined {
    return this.active?.kid;
  }

  /**
   * Public keys to publish, read from the store on each call so that every process serves a rotation
   * or revocation at once: the active key and those retired recently enough to matter, never a
   * revoked one.
   */
  async publicJwks(): Promise<{ keys: JWK[] }> {
    const now = this.options.clock.now();
    const records = await this.options.store.list();
    return { keys: this.published(records, now).map((record) => ({ ...record.publicJwk }) as JWK) };
  }

  private published(records: SigningKeyRecord[], now: number): SigningKeyRecord[] {
    return records.filter(
      (record) =>
        record.revokedAt === null &&
        (record.retiredAt === null || now - record.retiredAt < this.options.retiredKeyRetentionSeconds),
    );
  }

  /** Re-reads when the view is older than the refresh interval; keeps the current view if that fails. */
  private async fresh(): Promise<void> {
    if (this.closed) return;
    const now = this.options.clock.now();
    const interval = this.options.refreshIntervalSeconds;
    if (now - this.loadedAt < interval) return;
    // The store failing: retry at most once an interval (the timer does too) instead of per request.
    if (this.loading === undefined && now - this.failedAt < interval) return;
    try {
      await this.refresh();
    } catch (error) {
      this.onRefreshError(error);
    }
  }

  private async reload(): Promise<void> {
    const read = ++this.readsStarted;
    const records = await this.options.store.list();
    if (read < this.readApplied) return;
    this.readApplied = read;
    const now = this.options.clock.now();
    const published = this.published(records, now);
    const kids = published.map((record) => record.kid).join(' ');
    if (this.verification?.kids !== kids) {
      const jwks = { keys: published.map((record) => ({ ...record.publicJwk }) as JWK) };
      this.verification = { kids, getKey: createLocalJWKSet(jwks) };
    }
    const usable = records.filter((record) => record.revokedAt === null);
    const current = usable.find((record) => record.retiredAt === null) ?? usable[0];
    if (current === undefined) {
      this.active = undefined;
    } else if (this.active?.kid !== current.kid) {
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
    this.loadedAt = now;
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
    revokedAt: null,
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
