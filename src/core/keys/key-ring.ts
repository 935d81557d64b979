import { createPrivateKey, generateKeyPair, sign, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, createLocalJWKSet, type JWK, type JWTVerifyGetKey } from 'jose';
import type { Clock } from '../../shared/clock.js';
import type { SigningKeyRecord } from '../model.js';
import type { SigningKeyStore } from '../ports.js';
import { open, seal } from './sealed-box.js';
import { TurnBatch } from './turn-batch.js';

export type SigningAlgorithm = SigningKeyRecord['alg'];

/** The public keys that verify this server's tokens, as a JWK Set (never changed once handed out). */
export type VerificationJwks = { readonly keys: readonly Readonly<JWK>[] };

interface ActiveKey {
  kid: string;
  alg: SigningAlgorithm;
  /** Signs the JWS signing input with this key's algorithm. */
  sign: (signingInput: Buffer) => Buffer;
  /** base64url of the JOSE header per `typ`, computed once per key rather than once per token. */
  encodedHeaders: Map<string, string>;
}

/**
 * The `typ` of access tokens (RFC 9068 §2.1) and of ID tokens (OpenID Connect Core §2 recommends none,
 * or "JWT"): a validator checking `typ` never takes one for the other.
 */
const ACCESS_TOKEN_TYP = 'at+jwt';
export const ID_TOKEN_TYP = 'JWT';

/**
 * The algorithms the ring keeps an active key for: the access tokens' (configured), RS256 because
 * OpenID Connect Core §15.1 requires ID tokens to be signable with it, and ES256, the other ID-token
 * algorithm a client may register (`id_token_signed_response_alg`).
 */
function ringAlgorithms(accessTokenAlgorithm: SigningAlgorithm): SigningAlgorithm[] {
  return [...new Set<SigningAlgorithm>([accessTokenAlgorithm, 'RS256', 'ES256'])];
}

export interface KeyRingOptions {
  store: SigningKeyStore;
  keyEncryptionKey: Buffer;
  clock: Clock;
  /** The access tokens' algorithm; the ring also keeps RS256 and ES256 keys (ringAlgorithms). */
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
  /** The key each algorithm signs with, as last loaded. */
  private active = new Map<SigningAlgorithm, ActiveKey>();
  private readonly algorithms: SigningAlgorithm[];
  /** The public keys that verify this server's tokens: not revoked, active or retired recently. */
  private verification: { kids: string; getKey: JWTVerifyGetKey; jwks: VerificationJwks } | undefined;
  private loadedAt = -Infinity;
  private failedAt = -Infinity;
  private loading: Promise<void> | undefined;
  /** Reads are numbered so that one that started earlier never overwrites a later one's view. */
  private readsStarted = 0;
  private readApplied = 0;
  private timer: NodeJS.Timeout | undefined;
  private onRefreshError: (error: unknown) => void = () => undefined;
  private closed = false;
  /** sign() and signWith() sign in batches, one per event-loop turn (decision 28). */
  private readonly signatures = new TurnBatch();

  constructor(private readonly options: KeyRingOptions) {
    this.algorithms = ringAlgorithms(options.algorithm);
  }

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

  /**
   * Loads the keys, creating a key for each of the ring's algorithms the store has none of (the first
   * start, or a store from before the ring kept ID-token keys), without retiring any other key.
   */
  async init(): Promise<void> {
    await this.reload();
    // A new store: rotation's rule, so that first starts racing on it leave one active key per algorithm.
    if (this.active.size === 0) {
      await this.rotateAll();
      return;
    }
    const missing = this.algorithms.filter((alg) => !this.active.has(alg));
    if (missing.length === 0) return;
    const now = this.options.clock.now();
    for (const record of await Promise.all(
      missing.map((alg) => generateSigningKey(alg, this.options.keyEncryptionKey, now)),
    )) {
      await this.options.store.insert(record);
    }
    await this.reload();
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

  /**
   * Creates a new active key for each of the ring's algorithms and retires every other key; returns
   * the new access-token key's id (rotated().kids has them all).
   */
  async rotate(): Promise<string> {
    const rotated = await this.rotateAll();
    return rotated.kid;
  }

  /**
   * rotate(), answering every new key: the access-token key's id and one per algorithm. Given `within`
   * (a transaction's store: SigningKeyRegistry records the rotation with it, decision 41), the keys are
   * written there and the caller calls reloadNow() once it committed; the keys are made before.
   */
  async rotateAll(
    within?: SigningKeyStore,
  ): Promise<{ kid: string; kids: { kid: string; alg: SigningAlgorithm }[] }> {
    const kids = await this.storeRotation(await this.newKeys(this.algorithms), within ?? this.options.store);
    if (within === undefined) await this.reload();
    return { kid: kids[0]!.kid, kids };
  }

  /** New key records for `algorithms` (made before any transaction: an RSA key takes a while). */
  private newKeys(algorithms: readonly SigningAlgorithm[]): Promise<SigningKeyRecord[]> {
    const now = this.options.clock.now();
    return Promise.all(algorithms.map((alg) => generateSigningKey(alg, this.options.keyEncryptionKey, now)));
  }

  /**
   * Stores `records` as the active keys of their algorithms; every other key is retired but the active
   * key of each of the ring's other algorithms, which keeps signing.
   */
  private async storeRotation(
    records: readonly SigningKeyRecord[],
    store: SigningKeyStore,
  ): Promise<{ kid: string; alg: SigningAlgorithm }[]> {
    const algorithms = records.map((record) => record.alg);
    for (const record of records) await store.insert(record);
    const stored = await store.list();
    const kept = this.algorithms
      .filter((alg) => !algorithms.includes(alg))
      .map((alg) => activeRecord(stored, alg)?.kid)
      .filter((kid): kid is string => kid !== undefined);
    await store.retireAllExcept([...records.map((record) => record.kid), ...kept], this.options.clock.now());
    return records.map((record) => ({ kid: record.kid, alg: record.alg }));
  }

  /**
   * Revokes a key (a compromised one): it leaves the JWKS, never signs again, and the tokens it
   * signed no longer verify. The active key is replaced by a new one first, so that signing never
   * stops; the keys of other algorithms stay as they are. Undefined when no key has this id. `within`:
   * as for rotateAll.
   */
  async revoke(kid: string, within?: SigningKeyStore): Promise<KeyRevocation | undefined> {
    const store = within ?? this.options.store;
    const target = (await store.list()).find((record) => record.kid === kid);
    if (target === undefined) return undefined;
    const replacement =
      target.retiredAt === null && target.revokedAt === null
        ? (await this.storeRotation(await this.newKeys([target.alg]), store))[0]?.kid
        : undefined;
    if (!(await store.revoke(kid, this.options.clock.now()))) return undefined;
    if (within === undefined) await this.reload();
    return { kid, replacement, alreadyRevoked: target.revokedAt !== null };
  }

  /** Re-reads the store now, apart from any read in progress (which may predate a commit). */
  reloadNow(): Promise<void> {
    return this.reload();
  }

  /**
   * Signs an access token (typ at+jwt) with the active access-token key, re-reading the keys first
   * when this process's view is stale.
   */
  async sign(claims: Record<string, unknown>): Promise<string> {
    // The test alone, before awaiting anything: a fresh view (nearly every token) is signed in this
    // turn's batch of signatures (decision 28).
    if (this.stale()) await this.fresh();
    return this.signatures.run(() => this.signJwt(claims));
  }

  /**
   * Signs a JWT with the active key of `alg` and the given `typ` (an ID token: ID_TOKEN_TYP), after
   * re-reading a stale view. `alg` must be one of the ring's algorithms (ringAlgorithms).
   */
  async signWith(alg: SigningAlgorithm, claims: Record<string, unknown>, typ: string): Promise<string> {
    if (this.stale()) await this.fresh();
    return this.signatures.run(() => this.signJwt(claims, alg, typ));
  }

  /**
   * Signs a JWT with the active key as last loaded, synchronously: by default an access token with
   * the access-token key. For callers that keep the ring fresh themselves (benchmarks, tests); the
   * server signs through sign() and signWith().
   */
  signJwt(
    claims: Record<string, unknown>,
    alg: SigningAlgorithm = this.options.algorithm,
    typ: string = ACCESS_TOKEN_TYP,
  ): string {
    const key = this.active.get(alg);
    if (key === undefined) {
      throw new Error(this.active.size === 0 ? 'key ring not initialised' : `no active ${alg} key`);
    }
    let header = key.encodedHeaders.get(typ);
    if (header === undefined) {
      header = Buffer.from(JSON.stringify({ alg: key.alg, typ, kid: key.kid })).toString('base64url');
      key.encodedHeaders.set(typ, header);
    }
    const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
    const signingInput = `${header}.${payload}`;
    // base64url is ASCII: latin1 gives the same bytes as UTF-8, without a UTF-8 encoder's pass.
    const signature = key.sign(Buffer.from(signingInput, 'latin1'));
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

  /**
   * The same keys as a JWK Set, re-read first when stale: one object until the set changes, so a caller
   * may keep what it derives from it (public KeyObjects) for as long as it gets the same object back.
   */
  async verificationJwks(): Promise<VerificationJwks> {
    await this.fresh();
    if (this.verification === undefined) throw new Error('key ring not initialised');
    return this.verification.jwks;
  }

  /** The access-token key's id. */
  get activeKid(): string | undefined {
    return this.active.get(this.options.algorithm)?.kid;
  }

  /** The id of the key `alg` signs with, as last loaded. */
  activeKidFor(alg: SigningAlgorithm): string | undefined {
    return this.active.get(alg)?.kid;
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

  /** Whether the view is older than the refresh interval (fresh() then re-reads it). */
  private stale(): boolean {
    return !this.closed && this.options.clock.now() - this.loadedAt >= this.options.refreshIntervalSeconds;
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
      this.verification = { kids, getKey: createLocalJWKSet(jwks), jwks };
    }
    const usable = records.filter((record) => record.revokedAt === null);
    const active = new Map<SigningAlgorithm, ActiveKey>();
    for (const alg of this.algorithms) {
      const current = activeRecord(usable, alg);
      if (current === undefined) continue;
      const loaded = this.active.get(alg);
      if (loaded?.kid === current.kid) {
        active.set(alg, loaded);
        continue;
      }
      const der = open(this.options.keyEncryptionKey, current.privateKeySealed, SEAL_CONTEXT);
      const privateKey = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
      active.set(alg, {
        kid: current.kid,
        alg: current.alg,
        sign: signerFor(current.alg, privateKey),
        encodedHeaders: new Map(),
      });
    }
    this.active = active;
    this.loadedAt = now;
  }
}

/**
 * The key `alg` signs with, of `records` (newest first): its newest key neither retired nor revoked,
 * else its newest retired one, so that signing never stops.
 */
function activeRecord(records: SigningKeyRecord[], alg: SigningAlgorithm): SigningKeyRecord | undefined {
  const ofAlg = records.filter((record) => record.alg === alg && record.revokedAt === null);
  return ofAlg.find((record) => record.retiredAt === null) ?? ofAlg[0];
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

export interface KeyPair {
  publicKey: KeyObject;
  privateKey: KeyObject;
}

/** Off the event loop: an RSA key takes tens to hundreds of milliseconds to generate. */
export function newKeyPair(alg: SigningAlgorithm): Promise<KeyPair> {
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
  return signingKeyRecord(alg, await newKeyPair(alg), keyEncryptionKey, now);
}

/**
 * The stored form of a key pair of `alg`: its public JWK (kid its thumbprint, RFC 7638) and its private
 * key sealed under the key-encryption key. (Tests seed a store with pairs made once per process.)
 */
export async function signingKeyRecord(
  alg: SigningAlgorithm,
  pair: KeyPair,
  keyEncryptionKey: Buffer,
  now: number,
): Promise<SigningKeyRecord> {
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
