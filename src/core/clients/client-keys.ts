import { createPublicKey, type JsonWebKey } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import type { PublicJwkSet } from '../model.js';
import type { JwksFetcher } from '../ports.js';

/**
 * The JWS algorithms a client assertion may be signed with (RFC 7523 §3 item 9; RFC 8725 §3.1: an
 * allowlist, never `none` and never a MAC, since a client's registered keys are public).
 */
export const CLIENT_ASSERTION_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA'] as const;

/** The most keys a client's set may hold: enough for a rotation or two, few enough to try each. */
export const MAX_CLIENT_KEYS = 20;
/** The most bytes a client's registered set may take as JSON (the fetch limit of a jwks_uri too). */
export const MAX_JWKS_BYTES = 64 * 1024;
/** RFC 8725 §3.5 and NIST SP 800-131A: an RSA key shorter than this protects nothing any longer. */
const MIN_RSA_BITS = 2048;

/** Members that only a private or symmetric key has (RFC 7518 §6.2.2, §6.3.2, §6.4; RFC 8037 §2). */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/** For each key type a client may register: the curves it may use (RFC 7518 §6, RFC 8037 §2). */
const CURVES: Record<string, readonly string[] | undefined> = {
  RSA: undefined,
  EC: ['P-256'],
  OKP: ['Ed25519'],
};

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Why `value` is not a JWK Set (RFC 7517 §5) of public keys, or undefined when it is. A private member
 * or a symmetric key refuses the whole set: the party that published it has leaked a secret, or meant
 * a shared one, and neither may authenticate a client here.
 *
 * `registered`: the set an operator registers (RFC 7591 §2 `jwks`) is held to more: each key must be
 * one a client assertion can be checked with (an allowed algorithm and curve, RSA of 2048 bits or
 * more, `use` sig) and kids unique, so a mistake shows at registration, not at the first token
 * request. A set fetched from a `jwks_uri` may also hold other keys (for encryption, other
 * algorithms); jose passes over those when it picks the key (RFC 7517 §4.2, §4.4).
 */
export function jwkSetProblem(value: unknown, registered: boolean): string | undefined {
  if (!isObject(value) || !Array.isArray(value.keys))
    return 'must be a JWK Set: an object with a "keys" array';
  const keys: unknown[] = value.keys;
  if (keys.length === 0) return 'must hold at least one key';
  if (keys.length > MAX_CLIENT_KEYS) return `must hold at most ${MAX_CLIENT_KEYS} keys`;
  const kids = new Set<string>();
  for (const [index, key] of keys.entries()) {
    const problem = keyProblem(key, registered);
    if (problem !== undefined) return `key ${index + 1}: ${problem}`;
    const kid = (key as Record<string, unknown>).kid;
    if (registered && typeof kid === 'string') {
      if (kids.has(kid)) return `key ${index + 1}: kid "${kid}" appears twice`;
      kids.add(kid);
    }
  }
  return undefined;
}

function keyProblem(key: unknown, registered: boolean): string | undefined {
  if (!isObject(key) || typeof key.kty !== 'string') return 'must be a JWK with a "kty"';
  if (key.kty === 'oct') return 'symmetric keys (kty "oct") are not accepted; register public keys';
  const secret = PRIVATE_MEMBERS.find((member) => member in key);
  if (secret !== undefined) {
    return `has the private member "${secret}": register the public key only`;
  }
  if (key.kid !== undefined && (typeof key.kid !== 'string' || key.kid.length > 200)) {
    return '"kid" must be a string of at most 200 characters';
  }
  if (!registered) return undefined;
  if (!(key.kty in CURVES)) return `kty must be one of ${Object.keys(CURVES).join(', ')}`;
  const curves = CURVES[key.kty];
  if (curves !== undefined && !curves.includes(key.crv as string)) {
    return `crv must be ${curves.join(' or ')} for kty ${key.kty}`;
  }
  if (key.alg !== undefined && !(CLIENT_ASSERTION_ALGORITHMS as readonly unknown[]).includes(key.alg)) {
    return `alg must be one of ${CLIENT_ASSERTION_ALGORITHMS.join(', ')}`;
  }
  if (key.use !== undefined && key.use !== 'sig') return 'use must be "sig"';
  if (key.key_ops !== undefined && (!Array.isArray(key.key_ops) || !key.key_ops.includes('verify'))) {
    return 'key_ops must include "verify"';
  }
  let bits: number | undefined;
  try {
    // node:crypto parses and checks the key itself (an EC point on its curve, an RSA modulus).
    bits = createPublicKey({ key: key as JsonWebKey, format: 'jwk' }).asymmetricKeyDetails?.modulusLength;
  } catch {
    return 'is not a valid public key';
  }
  if (key.kty === 'RSA' && (bits === undefined || bits < MIN_RSA_BITS)) {
    return `RSA keys must have at least ${MIN_RSA_BITS} bits`;
  }
  return undefined;
}

/** A client's jwks_uri key set could not be had: fetch failed, or the document is not a public JWK Set. */
export class ClientKeysUnavailable extends Error {
  override name = 'ClientKeysUnavailable';
}

/** How long fetched key sets are kept, and how often one jwks_uri may be fetched at most. */
export interface RemoteKeySetPolicy {
  /** A fetched set is used this long before it is fetched again. */
  cacheSeconds: number;
  /**
   * Fetches of one URI are at least this far apart: a failed fetch is not retried sooner, and an
   * assertion naming an unknown kid fetches the set again only if the last fetch is this old, so a
   * stream of made-up kids cannot make the server fetch on every request.
   */
  refetchCooldownSeconds: number;
}

export const DEFAULT_REMOTE_KEY_SET_POLICY: RemoteKeySetPolicy = {
  cacheSeconds: 300,
  refetchCooldownSeconds: 30,
};

interface Entry {
  set: PublicJwkSet | undefined;
  fetchedAt: number;
  /** When the last fetch started, successful or not. */
  attemptedAt: number;
  pending: Promise<PublicJwkSet> | undefined;
}

/** Bounded: a flood of distinct URIs (clients) cannot grow the map without limit. */
const MAX_ENTRIES = 1000;

/**
 * Client key sets fetched from their `jwks_uri` (RFC 7591 §2), cached in this process by URI. One
 * fetch per URI at a time: requests that arrive while it runs share it.
 */
export class RemoteKeySets {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly fetcher: JwksFetcher,
    private readonly clock: Clock,
    private readonly policy: RemoteKeySetPolicy = DEFAULT_REMOTE_KEY_SET_POLICY,
  ) {}

  /** The set at `uri`: the cached one while fresh, else fetched now (or ClientKeysUnavailable). */
  async get(uri: string): Promise<PublicJwkSet> {
    const entry = this.entries.get(uri);
    if (entry?.pending !== undefined) return entry.pending;
    const now = this.clock.now();
    const coolingDown = entry !== undefined && now < entry.attemptedAt + this.policy.refetchCooldownSeconds;
    if (entry?.set !== undefined && (coolingDown || now < entry.fetchedAt + this.policy.cacheSeconds)) {
      return entry.set;
    }
    if (coolingDown) throw new ClientKeysUnavailable('the last fetch of this jwks_uri failed moments ago');
    return this.fetch(uri);
  }

  /**
   * A fresh copy of the set after an assertion named a key it does not have (the client rotated its
   * keys); undefined when the last fetch was too recent to fetch again (the cooldown).
   */
  async refetch(uri: string): Promise<PublicJwkSet | undefined> {
    const entry = this.entries.get(uri);
    if (entry?.pending !== undefined) return entry.pending;
    if (entry !== undefined && this.clock.now() < entry.attemptedAt + this.policy.refetchCooldownSeconds) {
      return undefined;
    }
    return this.fetch(uri);
  }

  private fetch(uri: string): Promise<PublicJwkSet> {
    if (!this.entries.has(uri) && this.entries.size >= MAX_ENTRIES) this.entries.clear();
    const attemptedAt = this.clock.now();
    const entry: Entry = this.entries.get(uri) ?? {
      set: undefined,
      fetchedAt: 0,
      attemptedAt,
      pending: undefined,
    };
    entry.attemptedAt = attemptedAt;
    const pending = this.fetcher.fetch(uri).then(
      (document) => {
        const problem = jwkSetProblem(document, false);
        if (problem !== undefined) throw new ClientKeysUnavailable(`the jwks_uri document ${problem}`);
        return document as PublicJwkSet;
      },
      (error: unknown) => {
        throw new ClientKeysUnavailable(error instanceof Error ? error.message : 'fetch failed');
      },
    );
    entry.pending = pending;
    this.entries.set(uri, entry);
    pending.then(
      (set) => {
        entry.set = set;
        entry.fetchedAt = attemptedAt;
        entry.pending = undefined;
      },
      () => {
        // A failed fetch drops what was cached: the keys are unknown until a fetch succeeds.
        entry.set = undefined;
        entry.pending = undefined;
      },
    );
    return pending;
  }
}
