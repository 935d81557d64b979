import { timingSafeEqual } from 'node:crypto';
import {
  calculateJwkThumbprint,
  decodeProtectedHeader,
  EmbeddedJWK,
  errors,
  jwtVerify,
  type JWK,
  type JWTPayload,
} from 'jose';
import { DpopProofFastPath } from './dpop-proof-fast-path.js';
import { Lru } from './lru.js';
import { sha256Base64url } from './sha256.js';

/**
 * `gatehouse-oauth-resource-server/dpop-proof`: the RFC 9449 proof check, the one copy of it
 * (docs/decisions.md, decision 26). Pure and storage-free: jose and node:crypto only; the replay
 * store and the nonce policy are passed in. The library's DPoP scheme and the Gatehouse server (its
 * token endpoint, /par, /v1, /userinfo) both call it.
 *
 * A proof is checked on a synchronous fast path when it has the shape clients send (a header of
 * exactly typ, alg and a public jwk with only its key members, every part canonical base64url, no
 * exp or nbf): node:crypto verifies the signature against the key imported once per JWK thumbprint.
 * Anything else goes to jose's jwtVerify with EmbeddedJWK, which decides it and words its refusal, so
 * the fast path only ever accepts what jose accepts (held to it by a differential test).
 */

/**
 * RFC 9449 §4.2: asymmetric algorithms only (never `none` nor an HMAC). `Ed25519` is the fully
 * specified name of EdDSA over Ed25519 (RFC 9864), which newer clients (panva's `dpop`,
 * oauth4webapi) sign with. The server's list too (its metadata, challenges and proof check).
 */
export const DEFAULT_DPOP_ALGORITHMS: readonly string[] = ['ES256', 'PS256', 'RS256', 'EdDSA', 'Ed25519'];
const ASYMMETRIC = /^(ES(256|384|512)|PS(256|384|512)|RS(256|384|512)|EdDSA|Ed25519)$/;
/** A jti longer than this is refused rather than stored (the replay store keeps each one). */
export const MAX_JTI_LENGTH = 255;
/** A proof longer than this is not parsed: an RSA-4096 key and every claim fit in well under it. */
const MAX_PROOF_LENGTH = 8192;
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
/** Proof keys (and proof headers) remembered per process: one per client key in use. */
export const DEFAULT_DPOP_KEY_CACHE_SIZE = 1000;
/** jwtVerify's required claims (§4.2). */
const REQUIRED_CLAIMS = ['jti', 'htm', 'htu', 'iat'];

/** RFC 9449 §7.1, §8, §9: why a proof is refused. */
export type DpopErrorCode = 'invalid_dpop_proof' | 'use_dpop_nonce';

/** A refused proof. An authorization server answers it 400 (§5), a resource 401 (§7.1, §9). */
export class DpopProofError extends Error {
  constructor(
    readonly code: DpopErrorCode,
    readonly description: string,
  ) {
    super(description);
    this.name = 'DpopProofError';
  }
}

/** The refusals whose wording a caller may choose; the defaults are the resource-server library's. */
export interface DpopDescriptions {
  /** The proof's `alg` is not one of `accepted`. */
  algorithm(accepted: readonly string[]): string;
  /** The proof's `htu` is none of `urls`. */
  htu(urls: readonly string[]): string;
  /** jose found the JWS or its claims set malformed; `detail` is its message. */
  malformed(detail: string): string;
}

const DEFAULT_DESCRIPTIONS: DpopDescriptions = {
  algorithm: () => 'the DPoP proof is signed with an algorithm not accepted',
  htu: () => 'the DPoP proof’s htu is not this request’s URL',
  malformed: () => 'the DPoP proof is not valid',
};

export interface DpopProofVerifierOptions {
  /** The proof algorithms accepted; asymmetric only. Default: DEFAULT_DPOP_ALGORITHMS. */
  algorithms?: readonly string[];
  /** How far a proof's `iat` may be from the clock, either way (§4.3 item 11, §11.1). */
  proofWindowSeconds: number;
  /** Clock skew tolerated beyond the window, and on `exp` and `nbf`. */
  leewaySeconds: number;
  /**
   * §11.1: records the proof's `jti` for its key until `expiresAt` (epoch seconds); resolves true the
   * first time, false for a replay. It must decide atomically across every process that shares it.
   */
  spendJti(jkt: string, jti: string, expiresAt: number, now: number): Promise<boolean>;
  /**
   * §8, §9: the `nonce` claim (whatever it is) judged; undefined when accepted, otherwise the
   * description of the `use_dpop_nonce` refusal. Without it, no nonce is asked for.
   */
  checkNonce?(nonce: unknown, now: number): string | undefined | Promise<string | undefined>;
  descriptions?: Partial<DpopDescriptions>;
  /** How many proof keys to keep imported (LRU by JWK thumbprint). Default 1,000. */
  keyCacheSize?: number;
}

/** What a proof must match: the request it came with. */
export interface DpopProofRequest {
  /** Every `DPoP` header field value the request carried (§4.3 item 1: exactly one is accepted). */
  proofs: readonly string[];
  /** The request's method (`htm`, §4.3 item 8). */
  method: string;
  /**
   * The absolute URLs the request may have been addressed by, built from configuration and the path
   * (never from the Host header, which the sender chooses); `htu` must be one of them (§4.3 item 9).
   */
  urls: readonly string[];
  /**
   * A protected resource request (§7): the access token presented, whose hash `ath` must be, and the
   * thumbprint the token is bound to (`cnf.jkt`), which must be the proof key's (§4.3 item 12).
   */
  accessToken?: { token: string; jkt: string };
  /** The current time, epoch seconds. */
  now: number;
}

/** A proof that passed every check: its key's RFC 7638 thumbprint, and its claims. */
export interface VerifiedDpopProof {
  jkt: string;
  payload: JWTPayload;
}

/** A signature-checked proof: its claims, and its key (as a thumbprint, or a JWK still to hash). */
type SignedProof = { payload: JWTPayload; jkt: string } | { payload: JWTPayload; jwk: JWK };

/**
 * The RFC 9449 §4.3 checks of one request's proof, in its order; a refusal is a DpopProofError. The
 * `jti` is spent only once everything else has passed, so a proof refused for another reason (a
 * missing nonce) can be made again and sent.
 */
export class DpopProofVerifier {
  readonly algorithms: readonly string[];
  private readonly descriptions: DpopDescriptions;
  private readonly window: number;
  private readonly fastPath: DpopProofFastPath;
  /** A request URL → its normal form (the configured origins and the paths served). */
  private readonly urls = new Lru<string, string>(DEFAULT_DPOP_KEY_CACHE_SIZE);

  constructor(private readonly options: DpopProofVerifierOptions) {
    this.algorithms = options.algorithms ?? DEFAULT_DPOP_ALGORITHMS;
    const wrong = this.algorithms.filter((alg) => !ASYMMETRIC.test(alg));
    if (this.algorithms.length === 0 || wrong.length > 0) {
      throw new Error(`dpop.algorithms must list asymmetric JWS algorithms; not ${wrong.join(', ')}`);
    }
    this.descriptions = { ...DEFAULT_DESCRIPTIONS, ...options.descriptions };
    this.window = options.proofWindowSeconds + options.leewaySeconds;
    this.fastPath = new DpopProofFastPath(
      this.algorithms,
      options.keyCacheSize ?? DEFAULT_DPOP_KEY_CACHE_SIZE,
    );
  }

  async verify(request: DpopProofRequest): Promise<VerifiedDpopProof> {
    // §4.3 items 1-2: one header field holding one JWT.
    if (request.proofs.length !== 1) throw invalid('send exactly one DPoP header');
    const proof = request.proofs[0]?.trim() ?? '';
    if (proof.length > MAX_PROOF_LENGTH) throw invalid('the DPoP proof is not a compact JWT');
    const { now } = request;
    // What the fast path accepts is a compact JWS already (three canonical base64url parts): the
    // scan of the whole proof is left to the proofs it does not accept.
    const signed = this.fastPath.check(proof) ?? (await this.josePath(proof, now));
    const { payload } = signed;
    const { jti, htm, htu, iat } = payload;
    if (typeof jti !== 'string' || jti === '' || jti.length > MAX_JTI_LENGTH) {
      throw invalid(`the DPoP proof needs a jti of 1 to ${MAX_JTI_LENGTH} characters`);
    }
    // §4.3 item 8: the method, exactly (RFC 9110 §9.1: method names are case-sensitive).
    if (htm !== request.method) throw invalid(`the DPoP proof's htm must be ${request.method}`);
    // §4.3 item 9: the URL, normalised (RFC 3986 §6.2.2, §6.2.3), query and fragment ignored.
    if (typeof htu !== 'string' || !this.htuMatches(htu, request.urls)) {
      throw invalid(this.descriptions.htu(request.urls.map((url) => this.normalised(url) ?? url)));
    }
    // §4.3 item 11, §11.1: made just now. Checked before the nonce: a stale proof cannot be fixed by one.
    if (typeof iat !== 'number' || !Number.isFinite(iat) || Math.abs(iat - now) > this.window) {
      throw invalid('the DPoP proof was not made just now (iat)');
    }
    const jkt = 'jkt' in signed ? signed.jkt : await thumbprintOf(signed.jwk);
    // §4.3 item 12: a resource request binds the proof to the token and the token to the key.
    if (request.accessToken !== undefined) {
      const { ath } = payload;
      if (typeof ath !== 'string' || !sameString(ath, accessTokenHash(request.accessToken.token))) {
        throw invalid('the DPoP proof’s ath is not the hash of the access token');
      }
      if (!sameString(jkt, request.accessToken.jkt)) {
        throw invalid('the DPoP proof is not made with the key the access token is bound to');
      }
    }
    // §4.3 item 10, §8, §9: a nonce the server issued.
    if (this.options.checkNonce !== undefined) {
      const refusal = await this.options.checkNonce(payload.nonce, now);
      if (refusal !== undefined) throw new DpopProofError('use_dpop_nonce', refusal);
    }
    // §11.1: single use, for as long as the proof could be accepted (with the leeway it was accepted under).
    if (!(await this.options.spendJti(jkt, jti, iat + this.window, now))) {
      throw invalid('the DPoP proof was used before (jti)');
    }
    return { jkt, payload };
  }

  private async josePath(proof: string, now: number): Promise<SignedProof> {
    if (!COMPACT_JWS.test(proof)) throw invalid('the DPoP proof is not a compact JWT');
    // §4.3 item 7: the key must be public. Looked at before anything is imported; jose would refuse
    // a private key too, with a vaguer message.
    const jwk = embeddedPublicJwk(proof);
    try {
      const { payload } = await jwtVerify(proof, EmbeddedJWK, {
        // §4.3 item 4; jose compares media types as RFC 7515 §4.1.9 says (case, the application/ prefix).
        typ: 'dpop+jwt',
        algorithms: [...this.algorithms],
        requiredClaims: REQUIRED_CLAIMS,
        currentDate: new Date(now * 1000),
        clockTolerance: this.options.leewaySeconds,
      });
      return { payload, jwk };
    } catch (error) {
      throw invalid(this.describeJoseFailure(error));
    }
  }

  private htuMatches(htu: string, urls: readonly string[]): boolean {
    // The usual case, without parsing htu: it is one of the URLs, spelled in its normal form.
    for (const url of urls) if (htu === url && this.normalised(url) === url) return true;
    const target = normalisedUrl(htu);
    return target !== undefined && urls.some((url) => this.normalised(url) === target);
  }

  private normalised(url: string): string | undefined {
    const cached = this.urls.get(url);
    if (cached !== undefined) return cached === '' ? undefined : cached;
    const value = normalisedUrl(url);
    this.urls.set(url, value ?? '');
    return value;
  }

  private describeJoseFailure(error: unknown): string {
    if (error instanceof errors.JOSEAlgNotAllowed) return this.descriptions.algorithm(this.algorithms);
    if (error instanceof errors.JWTClaimValidationFailed) {
      return error.claim === 'typ'
        ? 'the DPoP proof’s typ must be dpop+jwt'
        : `the DPoP proof’s ${error.claim} claim is missing or malformed`;
    }
    if (error instanceof errors.JWSSignatureVerificationFailed) {
      return 'the DPoP proof’s signature does not verify with its jwk';
    }
    if (error instanceof errors.JWTExpired) return 'the DPoP proof has expired (exp)';
    if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) {
      return this.descriptions.malformed(error.message);
    }
    if (error instanceof errors.JOSEError) return 'the DPoP proof is not valid';
    // A key jose cannot import (an RSA modulus too short, an unknown curve) surfaces as a TypeError.
    return 'the DPoP proof’s key is not usable';
  }
}

const invalid = (description: string) => new DpopProofError('invalid_dpop_proof', description);

/** The proof's `jwk` header, when it is a public key's (RFC 9449 §4.2, §4.3 item 7). */
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

async function thumbprintOf(jwk: JWK): Promise<string> {
  try {
    return await calculateJwkThumbprint(jwk, 'sha256');
  } catch {
    throw invalid('the DPoP proof’s key is malformed');
  }
}

/**
 * A URL as RFC 9449 §4.3 item 9 compares it: the WHATWG serialisation (lower-case scheme and host, no
 * default port, dot segments resolved: RFC 3986 §6.2.2 and §6.2.3), without query or fragment.
 * Undefined when it is not an absolute http(s) URL.
 */
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
  return sha256Base64url(token);
}

/** A JWK thumbprint as a token's `cnf.jkt` holds it (RFC 9449 §6.1): base64url SHA-256, 43 characters. */
export function isJwkThumbprint(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9_-]{43}$/.test(value);
}

function sameString(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
