import { createHash, timingSafeEqual } from 'node:crypto';
import {
  calculateJwkThumbprint,
  decodeProtectedHeader,
  EmbeddedJWK,
  errors,
  jwtVerify,
  type JWK,
} from 'jose';
import { MemoryNonceStore, NonceStoreFullError } from './mac.js';
import { TokenError } from './rfc6750.js';

/**
 * RFC 9449 on the resource-server side: the proof a DPoP-bound access token comes with (§4.3, §7.1),
 * checked with jose against the proof's own key, its `jti` remembered so that a proof is accepted
 * once, and an optional server nonce (§9).
 */

/** RFC 9449 §4.2: asymmetric algorithms only (never `none` nor an HMAC). `Ed25519` is RFC 9864's EdDSA. */
export const DEFAULT_DPOP_ALGORITHMS: readonly string[] = ['ES256', 'PS256', 'RS256', 'EdDSA', 'Ed25519'];
const ASYMMETRIC = /^(ES(256|384|512)|PS(256|384|512)|RS(256|384|512)|EdDSA|Ed25519)$/;
const MAX_JTI_LENGTH = 255;
const MAX_PROOF_LENGTH = 8192;
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/**
 * Where the ids of accepted proofs are kept until they could no longer be accepted anyway (RFC 9449
 * §11.1). `remember` resolves true the first time `key` is seen, false when it is held already (a
 * replay); it must decide atomically. The default, MemoryDpopReplayStore, serves one process: several
 * processes behind one name need one shared store (a Redis `SET key 1 NX EXAT expiresAt`, or an SQL
 * insert on a primary key; see the package README), or a proof accepted by one is accepted again by
 * the next.
 */
export interface DpopReplayStore {
  /** `expiresAt` in epoch seconds. */
  remember(key: string, expiresAt: number): Promise<boolean>;
}

/** The memory replay store holds its maximum: the request cannot be checked for replay, so it is refused (503). */
export class DpopReplayStoreFullError extends Error {
  constructor(readonly maxEntries: number) {
    super(`the DPoP replay store holds its maximum of ${maxEntries} proofs`);
    this.name = 'DpopReplayStoreFullError';
  }
}

export interface MemoryDpopReplayStoreOptions {
  /** The most proof ids kept at once (default 100,000). When full, proofs are refused, never forgotten early. */
  maxEntries?: number;
  /** The current time in epoch seconds; for tests. */
  now?: () => number;
}

/** Default for one process: proof ids in memory, each until its window has passed (expiry O(1) amortised). */
export class MemoryDpopReplayStore implements DpopReplayStore {
  private readonly seen: MemoryNonceStore;
  private readonly now: () => number;

  constructor(options: MemoryDpopReplayStoreOptions = {}) {
    this.seen = new MemoryNonceStore({ maxEntries: options.maxEntries ?? 100_000 });
    this.now = options.now ?? (() => Math.floor(Date.now() / 1000));
  }

  get size(): number {
    return this.seen.size;
  }

  async remember(key: string, expiresAt: number): Promise<boolean> {
    try {
      return await this.seen.remember(key, '', expiresAt, this.now());
    } catch (error) {
      if (error instanceof NonceStoreFullError) throw new DpopReplayStoreFullError(error.maxEntries);
      throw error;
    }
  }
}

/**
 * Server nonces for DPoP proofs (RFC 9449 §9). With it, a proof without a nonce `check` accepts is
 * refused with `use_dpop_nonce` and the value of `issue()` in the `DPoP-Nonce` header; accepted
 * requests get a fresh one too. Make them unpredictable, and valid in every process (e.g. an HMAC of
 * the time slot under a shared key), and accept the previous one for a while after a change.
 */
export interface DpopNonceSource {
  issue(): string | Promise<string>;
  check(nonce: string): boolean | Promise<boolean>;
}

export interface DpopOptions {
  /**
   * This service's public origin as clients address it, e.g. `https://api.example.com` (or several).
   * A proof's `htu` must be one of them followed by the request's path; never checked against the
   * request's Host header, which the sender chooses. Required to accept the DPoP scheme, unless the
   * `resource` option (RFC 9728) is set: then its origin is the default.
   */
  origin?: string | string[];
  /** The proof algorithms accepted (RFC 9449 §7.1 `algs`). Default: ES256, PS256, RS256, EdDSA, Ed25519. */
  algorithms?: string[];
  /** How far a proof's `iat` may be from this server's clock, either way, in seconds. Default 60. */
  proofWindowSeconds?: number;
  /** Where accepted proofs' ids are kept; a MemoryDpopReplayStore (this process only) by default. */
  replayStore?: DpopReplayStore;
  /** Server nonces (RFC 9449 §9); none are asked for without it. */
  nonce?: DpopNonceSource;
  /** Refuse tokens that are not DPoP-bound (Bearer): only sender-constrained tokens open this service. */
  required?: boolean;
}

/** What a DPoP request's proof must match. */
export interface DpopRequestCheck {
  /** Every `DPoP` header field value sent (§4.3 item 1: exactly one). */
  proofs: readonly string[];
  method: string;
  /** The URLs the request may have been addressed by (origin + path), any one of which `htu` must be. */
  urls: readonly string[];
  /** The access token (for `ath`) and the key thumbprint it is bound to (`cnf.jkt`). */
  accessToken: string;
  jkt: string;
  now: number;
  /** Clock leeway, seconds, added to the window. */
  leeway: number;
}

const invalid = (description: string, headers?: Record<string, string>) =>
  new TokenError('invalid_dpop_proof', description, { scheme: 'dpop', ...(headers ? { headers } : {}) });

/** The RFC 9449 §4.3 checks of a resource request's proof; a refusal is a TokenError under DPoP. */
export class DpopProofChecker {
  readonly algorithms: readonly string[];
  private readonly window: number;
  private readonly replay: DpopReplayStore;

  constructor(private readonly options: DpopOptions) {
    this.algorithms = options.algorithms ?? DEFAULT_DPOP_ALGORITHMS;
    const wrong = this.algorithms.filter((alg) => !ASYMMETRIC.test(alg));
    if (this.algorithms.length === 0 || wrong.length > 0) {
      throw new Error(`dpop.algorithms must list asymmetric JWS algorithms; not ${wrong.join(', ')}`);
    }
    this.window = options.proofWindowSeconds ?? 60;
    this.replay = options.replayStore ?? new MemoryDpopReplayStore();
  }

  /** The nonce to hand out now, when nonces are on. */
  async nonce(): Promise<string | undefined> {
    return this.options.nonce === undefined ? undefined : await this.options.nonce.issue();
  }

  async check(request: DpopRequestCheck): Promise<void> {
    if (request.proofs.length !== 1) throw invalid('send exactly one DPoP header');
    const proof = request.proofs[0]?.trim() ?? '';
    if (proof.length > MAX_PROOF_LENGTH || !COMPACT_JWS.test(proof)) {
      throw invalid('the DPoP proof is not a compact JWT');
    }
    const jwk = embeddedPublicJwk(proof);
    let payload;
    try {
      ({ payload } = await jwtVerify(proof, EmbeddedJWK, {
        typ: 'dpop+jwt',
        algorithms: [...this.algorithms],
        requiredClaims: ['jti', 'htm', 'htu', 'iat'],
        currentDate: new Date(request.now * 1000),
        clockTolerance: request.leeway,
      }));
    } catch (error) {
      throw invalid(describeFailure(error));
    }
    const { jti, htm, htu, iat, ath } = payload;
    if (typeof jti !== 'string' || jti === '' || jti.length > MAX_JTI_LENGTH) {
      throw invalid(`the DPoP proof needs a jti of 1 to ${MAX_JTI_LENGTH} characters`);
    }
    if (htm !== request.method) throw invalid(`the DPoP proof's htm must be ${request.method}`);
    const target = typeof htu === 'string' ? normalisedUrl(htu) : undefined;
    if (target === undefined || !request.urls.some((url) => normalisedUrl(url) === target)) {
      throw invalid('the DPoP proof’s htu is not this request’s URL');
    }
    const window = this.window + request.leeway;
    if (typeof iat !== 'number' || !Number.isFinite(iat) || Math.abs(iat - request.now) > window) {
      throw invalid('the DPoP proof was not made just now (iat)');
    }
    if (typeof ath !== 'string' || !sameString(ath, sha256(request.accessToken))) {
      throw invalid('the DPoP proof’s ath is not the hash of the access token');
    }
    let jkt: string;
    try {
      jkt = await calculateJwkThumbprint(jwk, 'sha256');
    } catch {
      throw invalid('the DPoP proof’s key is malformed');
    }
    if (!sameString(jkt, request.jkt)) {
      throw invalid('the DPoP proof is not made with the key the access token is bound to');
    }
    const nonces = this.options.nonce;
    if (nonces !== undefined) {
      const { nonce } = payload;
      if (typeof nonce !== 'string' || nonce === '' || !(await nonces.check(nonce))) {
        throw new TokenError('use_dpop_nonce', 'the DPoP proof must carry the nonce in DPoP-Nonce', {
          scheme: 'dpop',
          headers: { 'dpop-nonce': await nonces.issue() },
        });
      }
    }
    // RFC 9449 §11.1: once, for as long as the proof could be accepted.
    if (!(await this.replay.remember(`${jkt}:${jti}`, iat + window))) {
      throw invalid('the DPoP proof was used before (jti)');
    }
  }
}

function embeddedPublicJwk(proof: string): JWK {
  let jwk: unknown;
  try {
    jwk = decodeProtectedHeader(proof).jwk;
  } catch {
    throw invalid('the DPoP proof is not a compact JWT');
  }
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) {
    throw invalid('the DPoP proof must carry its public key in the jwk header');
  }
  const members = jwk as Record<string, unknown>;
  if ('d' in members || 'k' in members || members.kty === 'oct' || 'p' in members) {
    throw invalid('the DPoP proof’s jwk must be a public key, never a private or symmetric one');
  }
  return members as JWK;
}

/** RFC 9449 §4.3 item 9: scheme and host normalised (RFC 3986 §6.2), query and fragment ignored. */
export function normalisedUrl(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  url.search = '';
  url.hash = '';
  return url.href;
}

/** The `ath` of a token (RFC 9449 §4.2): base64url(SHA-256(token)). */
export function accessTokenHash(token: string): string {
  return sha256(token);
}

function sha256(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}

function sameString(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function describeFailure(error: unknown): string {
  if (error instanceof errors.JOSEAlgNotAllowed)
    return 'the DPoP proof is signed with an algorithm not accepted';
  if (error instanceof errors.JWTClaimValidationFailed) {
    return error.claim === 'typ'
      ? 'the DPoP proof’s typ must be dpop+jwt'
      : `the DPoP proof’s ${error.claim} claim is missing or malformed`;
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return 'the DPoP proof’s signature does not verify with its jwk';
  }
  if (error instanceof errors.JWTExpired) return 'the DPoP proof has expired (exp)';
  if (error instanceof errors.JOSEError) return 'the DPoP proof is not valid';
  return 'the DPoP proof’s key is not usable';
}
