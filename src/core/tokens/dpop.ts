import { createHmac } from 'node:crypto';
// The one copy of the proof check, shared with the resource-server library (docs/decisions.md, decision 26).
import {
  DEFAULT_DPOP_ALGORITHMS,
  DpopProofError,
  DpopProofVerifier,
  isJwkThumbprint,
  normalisedUrl,
} from 'gatehouse-oauth-resource-server/dpop-proof';
import type { Clock } from '../../shared/clock.js';
import { safeEqual } from '../../shared/crypto.js';
import { dpopProofError } from '../errors.js';
import type { UsedJtiStore } from '../ports.js';

export { DpopProofError, isJwkThumbprint, normalisedUrl };
export type { DpopErrorCode } from 'gatehouse-oauth-resource-server/dpop-proof';

/**
 * RFC 9449 §4.2: the asymmetric JWS algorithms a proof may be signed with (never `none` nor an HMAC,
 * §4.3 item 5): the library's list, one copy for the server and the services it protects.
 */
export const DPOP_SIGNING_ALGORITHMS: readonly string[] = DEFAULT_DPOP_ALGORITHMS;

/** How long one nonce slot lasts: a nonce is accepted in its slot and the next (§8, docs/decisions.md). */
export const DPOP_NONCE_SLOT_SECONDS = 300;
/** Clock skew tolerated beyond the proof window, either way. */
export const DPOP_CLOCK_LEEWAY_SECONDS = 5;

/** The namespace of DPoP proofs' jti in the replay store: one per key (RFC 9449 §11.1). */
export const dpopReplayNamespace = (jkt: string) => `dpop:${jkt}`;

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
 * /userinfo). The §4.3 list itself is the library's DpopProofVerifier (the one copy, decision 26);
 * this adapter gives it what is core's: the `jti` accepted once per key across every process sharing
 * the UsedJtiStore, the clock, the authorization server's wording, and the nonces. Nonces (§8, §9) are
 * stateless: an HMAC of the time slot under a key derived from the server secret, so every process
 * issues and accepts the same ones without sharing memory.
 */
export class DpopVerifier {
  private readonly proofs: DpopProofVerifier;

  constructor(private readonly options: DpopVerifierOptions) {
    this.proofs = new DpopProofVerifier({
      algorithms: DPOP_SIGNING_ALGORITHMS,
      proofWindowSeconds: options.policy.proofWindowSeconds,
      leewaySeconds: DPOP_CLOCK_LEEWAY_SECONDS,
      spendJti: (jkt, jti, expiresAt, now) =>
        options.usedJtis.use(dpopReplayNamespace(jkt), jti, expiresAt, now),
      ...(options.policy.nonce === 'required'
        ? { checkNonce: (nonce: unknown, now: number) => this.nonceRefusal(nonce, now) }
        : {}),
      descriptions: {
        algorithm: (accepted) => `the DPoP proof must be signed with one of ${accepted.join(', ')}`,
        htu: (urls) => `the DPoP proof's htu must be ${urls[0] ?? ''}`,
        malformed: (detail) => `the DPoP proof is malformed: ${detail}`,
      },
    });
  }

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
    const { jkt } = await this.proofs.verify({
      proofs: request.proofs,
      method: request.method,
      urls: [request.url],
      ...(request.accessToken === undefined ? {} : { accessToken: request.accessToken }),
      now: this.options.clock.now(),
    });
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

  /** §4.3 item 10, §8, §9: a nonce this server issued, of this slot or the one before. */
  private nonceRefusal(nonce: unknown, now: number): string | undefined {
    if (typeof nonce !== 'string' || nonce === '') return 'the DPoP proof must carry the nonce in DPoP-Nonce';
    if (!this.isCurrentNonce(nonce, now)) return 'the DPoP nonce has expired; use the one in DPoP-Nonce';
    return undefined;
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
