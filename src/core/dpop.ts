import { createHmac } from 'node:crypto';
import {
  calculateJwkThumbprint,
  decodeProtectedHeader,
  EmbeddedJWK,
  errors,
  jwtVerify,
  type JWK,
} from 'jose';
import type { Clock } from '../shared/clock.js';
import { safeEqual, sha256 } from '../shared/crypto.js';
import { dpopProofError } from './errors.js';
import type { UsedJtiStore } from './ports.js';

/**
 * RFC 9449 §4.2: the asymmetric JWS algorithms a proof may be signed with (never `none` nor an HMAC,
 * §4.3 item 5). `Ed25519` is the fully specified name of EdDSA over Ed25519 (RFC 9864), which newer
 * clients (panva's `dpop`, oauth4webapi) sign with.
 */
export const DPOP_SIGNING_ALGORITHMS = ['ES256', 'PS256', 'RS256', 'EdDSA', 'Ed25519'] as const;

/** How long one nonce slot lasts: a nonce is accepted in its slot and the next (§8, docs/decisions.md). */
export const DPOP_NONCE_SLOT_SECONDS = 300;
/** Clock skew tolerated beyond the proof window, either way. */
export const DPOP_CLOCK_LEEWAY_SECONDS = 5;
/** A jti longer than this is refused rather than stored (the replay store keeps each one). */
const MAX_JTI_LENGTH = 255;
/** A proof longer than this is not parsed: an RSA-4096 key and every claim fit in well under it. */
const MAX_PROOF_LENGTH = 8192;
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** The namespace of DPoP proofs' jti in the replay store: one per key (RFC 9449 §11.1). */
export const dpopReplayNamespace = (jkt: string) => `dpop:${jkt}`;

/** RFC 9449 §7.1, §8, §9: why a proof is refused. */
export type DpopErrorCode = 'invalid_dpop_proof' | 'use_dpop_nonce';

/** A refused proof. The token endpoint answers it 400 (§5), a resource 401 (§7.1, §9). */
export class DpopProofError extends Error {
  constructor(
    readonly code: DpopErrorCode,
    readonly description: string,
  ) {
    super(description);
    this.name = 'DpopProofError';
  }
}

const invalidProof = (description: string) => new DpopProofError('invalid_dpop_proof', description);

export interface DpopPolicy {
  /** How far a proof's `iat` may be from the server's clock, either way (§4.3 item 11, §11.1). */
  proofWindowSeconds: number;
  /** `required`: every proof must carry a nonce this server issued (§8, §9); `off`: none is asked. */
  nonce: 'required' | 'off';
  /** Purpose-bound key the nonces are derived from: the same in every process sharing the secret. */
  nonceKey: Buffer;
}

/** What a proof must match: the request it came with. */
export interface DpopProofRequest {
  /** Every `DPoP` header field value the request carried (§4.3 item 1: exactly one is accepted). */
  proofs: readonly string[];
  /** The request's method (`htm`, §4.3 item 8). */
  method: string;
  /**
   * The absolute URL the request was sent to, built from the issuer and the path (never from the
   * Host header, which the sender chooses); its query and fragment are ignored (§4.3 item 9).
   */
  url: string;
  /**
   * A protected resource request (§7): the access token presented, whose hash the proof's `ath` must
   * be, and the thumbprint the token is bound to (`cnf.jkt`), which must be the proof key's (§4.3 item 12).
   */
  accessToken?: { token: string; jkt: string };
}

/** A proof that passed every check: the key it was made with, as its RFC 7638 thumbprint. */
export interface DpopProof {
  jkt: string;
}

export interface DpopVerifierOptions {
  clock: Clock;
  usedJtis: UsedJtiStore;
  policy: DpopPolicy;
}

/**
 * RFC 9449 proofs, checked once for every endpoint that takes them (the token endpoint, /par, /v1 and
 * /userinfo): the §4.3 list in its order, the signature with jose against the proof's own key, and
 * the `jti` accepted once per key across every process sharing the store. Nonces (§8, §9) are
 * stateless: an HMAC of the time slot under a key derived from the server secret, so every process
 * issues and accepts the same ones without sharing memory.
 */
export class DpopVerifier {
  constructor(private readonly options: DpopVerifierOptions) {}

  /** Whether proofs must carry a server nonce (GATEHOUSE_DPOP_NONCE=required). */
  get noncesRequired(): boolean {
    return this.options.policy.nonce === 'required';
  }

  /** The nonce to hand out now (the `DPoP-Nonce` header), or undefined when nonces are off. */
  nonce(): string | undefined {
    if (!this.noncesRequired) return undefined;
    return this.nonceForSlot(this.slot(this.options.clock.now()));
  }

  /**
   * Resolves with the proof's key thumbprint when the request's single proof passes every check of
   * RFC 9449 §4.3; throws DpopProofError otherwise. The jti is spent only once everything else has
   * passed, so a proof refused for another reason (a missing nonce) can be made again and sent.
   */
  async verify(request: DpopProofRequest): Promise<DpopProof> {
    // §4.3 items 1-2: one header field holding one JWT.
    if (request.proofs.length !== 1) throw invalidProof('send exactly one DPoP header');
    const proof = request.proofs[0]?.trim() ?? '';
    if (proof.length > MAX_PROOF_LENGTH || !COMPACT_JWS.test(proof)) {
      throw invalidProof('the DPoP proof is not a compact JWT');
    }
    // §4.3 item 7: the key must be public. Looked at before anything is imported; jose would refuse
    // a private key too, with a vaguer message.
    const jwk = embeddedJwk(proof);
    const now = this.options.clock.now();
    const payload = await this.verifySignature(proof, now);
    const { jti, htm, htu, iat } = payload;
    if (typeof jti !== 'string' || jti === '' || jti.length > MAX_JTI_LENGTH) {
      throw invalidProof(`the DPoP proof needs a jti of 1 to ${MAX_JTI_LENGTH} characters`);
    }
    // §4.3 item 8: the method, exactly (RFC 9110 §9.1: method names are case-sensitive).
    if (htm !== request.method) throw invalidProof(`the DPoP proof's htm must be ${request.method}`);
    // §4.3 item 9: the URL, normalised (RFC 3986 §6.2.2, §6.2.3), query and fragment ignored.
    if (typeof htu !== 'string' || normalisedUrl(htu) !== normalisedUrl(request.url)) {
      throw invalidProof(`the DPoP proof's htu must be ${normalisedUrl(request.url) ?? request.url}`);
    }
    // §4.3 item 11, §11.1: made just now. Checked before the nonce: a stale proof cannot be fixed
    // by one.
    const window = this.options.policy.proofWindowSeconds + DPOP_CLOCK_LEEWAY_SECONDS;
    if (typeof iat !== 'number' || !Number.isFinite(iat) || Math.abs(iat - now) > window) {
      throw invalidProof('the DPoP proof was not made just now (iat)');
    }
    // §4.3 item 12: a resource request binds the proof to the token and the token to the key.
    let jkt: string;
    try {
      jkt = await calculateJwkThumbprint(jwk, 'sha256');
    } catch {
      throw invalidProof('the DPoP proof’s key is malformed');
    }
    if (request.accessToken !== undefined) {
      const { ath } = payload;
      if (typeof ath !== 'string' || !safeEqual(ath, sha256(request.accessToken.token))) {
        throw invalidProof('the DPoP proof’s ath is not the hash of the access token');
      }
      if (!safeEqual(jkt, request.accessToken.jkt)) {
        throw invalidProof('the DPoP proof is not made with the key the access token is bound to');
      }
    }
    // §4.3 item 10, §8, §9: a nonce this server issued, of this slot or the one before.
    if (this.noncesRequired) {
      const { nonce } = payload;
      if (typeof nonce !== 'string' || nonce === '') {
        throw new DpopProofError('use_dpop_nonce', 'the DPoP proof must carry the nonce in DPoP-Nonce');
      }
      if (!this.isCurrentNonce(nonce, now)) {
        throw new DpopProofError('use_dpop_nonce', 'the DPoP nonce has expired; use the one in DPoP-Nonce');
      }
    }
    // §11.1: single use, across every process sharing the store, for as long as the proof could be
    // accepted (with the leeway it was accepted under).
    const first = await this.options.usedJtis.use(dpopReplayNamespace(jkt), jti, iat + window, now);
    if (!first) throw invalidProof('the DPoP proof was used before (jti)');
    return { jkt };
  }

  /**
   * verify() at an endpoint of the authorization server (the token endpoint, /par): a refusal is the
   * OAuthError those answer, 400 (RFC 9449 §5), `use_dpop_nonce` with the nonce to use (§8).
   */
  async verifyAtAuthorizationServer(request: DpopProofRequest): Promise<DpopProof> {
    try {
      return await this.verify(request);
    } catch (error) {
      if (!(error instanceof DpopProofError)) throw error;
      const nonce = error.code === 'use_dpop_nonce' ? this.nonce() : undefined;
      throw dpopProofError(error.code, error.description, nonce);
    }
  }

  private async verifySignature(proof: string, now: number) {
    try {
      const { payload } = await jwtVerify(proof, EmbeddedJWK, {
        // §4.3 item 4; jose compares media types as RFC 7515 §4.1.9 says (case, the application/ prefix).
        typ: 'dpop+jwt',
        algorithms: [...DPOP_SIGNING_ALGORITHMS],
        requiredClaims: ['jti', 'htm', 'htu', 'iat'],
        currentDate: new Date(now * 1000),
        clockTolerance: DPOP_CLOCK_LEEWAY_SECONDS,
      });
      return payload;
    } catch (error) {
      throw invalidProof(describeJoseFailure(error));
    }
  }

  private slot(now: number): number {
    return Math.floor(now / DPOP_NONCE_SLOT_SECONDS);
  }

  private nonceForSlot(slot: number): string {
    // 128 bits of an HMAC: unpredictable without the server secret, the same in every process.
    return createHmac('sha256', this.options.policy.nonceKey)
      .update(`dpop-nonce:${slot}`)
      .digest('base64url')
      .slice(0, 22);
  }

  private isCurrentNonce(nonce: string, now: number): boolean {
    const slot = this.slot(now);
    // Both compared, so the time taken says nothing about which slot matched.
    const current = safeEqual(nonce, this.nonceForSlot(slot));
    const previous = safeEqual(nonce, this.nonceForSlot(slot - 1));
    return current || previous;
  }
}

/** The proof's `jwk` header, when it is a public key's (RFC 9449 §4.2, §4.3 item 7). */
function embeddedJwk(proof: string): JWK {
  let jwk: unknown;
  try {
    jwk = decodeProtectedHeader(proof).jwk;
  } catch {
    throw invalidProof('the DPoP proof is not a compact JWT');
  }
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) {
    throw invalidProof('the DPoP proof must carry its public key in the jwk header');
  }
  const members = jwk as Record<string, unknown>;
  if ('d' in members || 'k' in members || members.kty === 'oct' || 'p' in members) {
    throw invalidProof('the DPoP proof’s jwk must be a public key, never a private or symmetric one');
  }
  return members as JWK;
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

/** The proof's JWK thumbprint is what a token's `cnf.jkt` holds (RFC 9449 §6.1): base64url, 43 characters. */
export function isJwkThumbprint(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9_-]{43}$/.test(value);
}

function describeJoseFailure(error: unknown): string {
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return `the DPoP proof must be signed with one of ${DPOP_SIGNING_ALGORITHMS.join(', ')}`;
  }
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'typ') return 'the DPoP proof’s typ must be dpop+jwt';
    return `the DPoP proof’s ${error.claim} claim is missing or malformed`;
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return 'the DPoP proof’s signature does not verify with its jwk';
  }
  if (error instanceof errors.JWTExpired) return 'the DPoP proof has expired (exp)';
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) {
    return `the DPoP proof is malformed: ${error.message}`;
  }
  if (error instanceof errors.JOSEError) return 'the DPoP proof is not valid';
  // A key jose cannot import (an RSA modulus too short, an unknown curve) surfaces as a TypeError.
  return 'the DPoP proof’s key is not usable';
}
