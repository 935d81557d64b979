import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { JwsAlgorithm } from './jws-algorithms.js';
import type { FetchLike } from './node-fetch.js';

/** One JWK of the set, with its public key made once rather than once per token. */
interface VerificationKey {
  kid: unknown;
  kty: unknown;
  crv: unknown;
  alg: unknown;
  /** `use`, `key_ops` and `ext` allow verification (jose's test, made once per key). */
  usable: boolean;
  /** Undefined when the JWK cannot be a public verification key: jose would fail the token too. */
  publicKey: KeyObject | undefined;
}

/** The outcome of looking a token's key up in a key set, as jose's local JWKS decides it. */
export type KeySelection =
  { found: true; key: KeyObject | undefined } | { found: false; reason: 'no-match' | 'several-match' };

/** An immutable, parsed JWK Set. */
export class KeySet {
  private readonly byKid = new Map<string, VerificationKey[]>();

  constructor(private readonly keys: readonly VerificationKey[]) {
    for (const key of keys) {
      if (typeof key.kid !== 'string') continue;
      const list = this.byKid.get(key.kid);
      if (list === undefined) this.byKid.set(key.kid, [key]);
      else list.push(key);
    }
  }

  /** Parses a JWK Set document; undefined when it is not one. */
  static parse(document: unknown): KeySet | undefined {
    if (!isPlainObject(document) || !Array.isArray(document.keys)) return undefined;
    const jwks: unknown[] = document.keys;
    if (!jwks.every(isPlainObject)) return undefined;
    return new KeySet(jwks.map((jwk) => verificationKey(jwk as Record<string, unknown>)));
  }

  get size(): number {
    return this.keys.length;
  }

  /**
   * The key for a token's `alg` and `kid`. Matching follows jose's createLocalJWKSet: kty (and crv)
   * must fit the algorithm, the JWK's own `alg` must equal it when present, `use` must be `sig` and
   * `key_ops` include `verify` when present; a token without `kid` matches every such key, and more
   * than one match is refused rather than guessed.
   */
  select(algName: string, algorithm: JwsAlgorithm, kid: string | undefined): KeySelection {
    const pool = kid === undefined ? this.keys : (this.byKid.get(kid) ?? []);
    let match: VerificationKey | undefined;
    for (const key of pool) {
      if (!key.usable || key.kty !== algorithm.kty) continue;
      if (algorithm.crv !== undefined && key.crv !== algorithm.crv) continue;
      if (key.alg !== undefined && key.alg !== algName) continue;
      if (match !== undefined) return { found: false, reason: 'several-match' };
      match = key;
    }
    return match === undefined ? { found: false, reason: 'no-match' } : { found: true, key: match.publicKey };
  }
}

function verificationKey(jwk: Record<string, unknown>): VerificationKey {
  const { kid, kty, crv, alg, use, ext } = jwk;
  const keyOps = jwk.key_ops;
  const usable =
    (ext === undefined || typeof ext === 'boolean') &&
    (use === undefined || use === 'sig') &&
    (keyOps === undefined ||
      (Array.isArray(keyOps) &&
        keyOps.every((op, index) => typeof op === 'string' && keyOps.indexOf(op) === index) &&
        keyOps.includes('verify')));
  return { kid, kty, crv, alg, usable, publicKey: publicKeyOf(jwk) };
}

function publicKeyOf(jwk: Record<string, unknown>): KeyObject | undefined {
  // A JWK Set publishes public keys; one carrying a private part is refused, as jose refuses it.
  if (jwk.d !== undefined || jwk.priv !== undefined) return undefined;
  try {
    // RSA keys under 2048 bits are refused by the algorithm (jws-algorithms.ts), as jose refuses them.
    return createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
  } catch {
    return undefined;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

export interface JwksCacheOptions {
  uri: string;
  fetch: FetchLike;
  /** Minimum seconds between two fetches caused by unknown keys. */
  cooldownSeconds: number;
  /** Seconds after which the set is refreshed in the background (jose's cacheMaxAge: 10 minutes). */
  maxAgeSeconds?: number;
  /** Seconds a fetch may take. */
  timeoutSeconds?: number;
  /** A monotonic time in milliseconds for the cooldown and the set's age (tests give a manual one). */
  nowMs?: () => number;
}

/**
 * The issuer's JWK Set, fetched on first use and kept in memory. A token naming a key the set lacks
 * (a rotation at the issuer) causes a refetch, and concurrent misses share one request. A set older
 * than its maximum age is refreshed in the background while the one in hand keeps serving. Fetches of
 * either kind start at most once per cooldown, however many tokens ask. A failed fetch keeps the keys
 * already held (or none), is never thrown to the caller, and is tried again after the cooldown.
 */
export class JwksCache {
  private keys: KeySet | undefined;
  private fetchedAtMs = -Infinity;
  private attemptedAtMs = -Infinity;
  private inFlight: Promise<KeySet | undefined> | undefined;

  private readonly nowMs: () => number;

  constructor(private readonly options: JwksCacheOptions) {
    this.nowMs = options.nowMs ?? (() => performance.now());
  }

  /** The keys in hand, synchronously; undefined before the first successful fetch. */
  current(): KeySet | undefined {
    const maxAgeMs = (this.options.maxAgeSeconds ?? 600) * 1000;
    if (this.keys !== undefined && this.nowMs() - this.fetchedAtMs > maxAgeMs) void this.refresh();
    return this.keys;
  }

  /**
   * Called when a token's key is not in the set: fetches the set again unless a fetch started within
   * the cooldown, and resolves to the keys in hand afterwards (the same ones when nothing was fetched).
   */
  refreshForUnknownKey(): Promise<KeySet | undefined> {
    return this.refresh();
  }

  private refresh(): Promise<KeySet | undefined> {
    if (this.inFlight !== undefined) return this.inFlight;
    // Every fetch, for an unknown key or a stale set, counts against the cooldown: an issuer that is
    // down is not asked again on every request.
    if (this.nowMs() - this.attemptedAtMs < this.options.cooldownSeconds * 1000) {
      return Promise.resolve(this.keys);
    }
    this.attemptedAtMs = this.nowMs();
    const pending = this.load().then(
      (keys) => {
        this.keys = keys;
        this.fetchedAtMs = this.nowMs();
        return keys;
      },
      // Unreachable issuer, bad status, not a JWK Set: keep what we have; tokens that need a new key
      // are refused until a later fetch succeeds.
      () => this.keys,
    );
    this.inFlight = pending.finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async load(): Promise<KeySet> {
    const response = await this.options.fetch(this.options.uri, {
      method: 'GET',
      headers: { accept: 'application/json, application/jwk-set+json' },
      signal: AbortSignal.timeout((this.options.timeoutSeconds ?? 5) * 1000),
    });
    if (response.status !== 200) throw new Error(`the JWKS endpoint answered ${response.status}`);
    const keys = KeySet.parse(await response.json());
    if (keys === undefined) throw new Error('the JWKS endpoint did not answer a JWK Set');
    return keys;
  }
}
