import { DpopProofError, DpopProofVerifier } from './dpop-proof.js';
import { MemoryNonceStore, NonceStoreFullError } from './mac.js';
import { TokenError } from './rfc6750.js';

/**
 * RFC 9449 on the resource-server side: the DPoP scheme's options, the replay store a proof's `jti`
 * is remembered in so that a proof is accepted once, and an optional server nonce (§9). The proof
 * itself is checked by dpop-proof.ts, which the Gatehouse server shares (docs/decisions.md, decision 26).
 */

export { DEFAULT_DPOP_ALGORITHMS, accessTokenHash, normalisedUrl } from './dpop-proof.js';

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

  remember(key: string, expiresAt: number): Promise<boolean> {
    // Answered in this call (one settled promise, no chained one): a DPoP request spends a jti each time.
    try {
      return Promise.resolve(this.seen.rememberNow(key, '', expiresAt, this.now()));
    } catch (error) {
      return Promise.reject(
        error instanceof NonceStoreFullError
          ? new DpopReplayStoreFullError(error.maxEntries)
          : (error as Error),
      );
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
}

/** The RFC 9449 §4.3 checks of a resource request's proof (dpop-proof.ts); a refusal is a TokenError under DPoP. */
export class DpopProofChecker {
  readonly algorithms: readonly string[];
  private readonly verifier: DpopProofVerifier;

  /** `leewaySeconds`: clock skew tolerated, added to the proof window. */
  constructor(
    private readonly options: DpopOptions,
    leewaySeconds: number,
  ) {
    const replay = options.replayStore ?? new MemoryDpopReplayStore();
    const nonces = options.nonce;
    this.verifier = new DpopProofVerifier({
      ...(options.algorithms === undefined ? {} : { algorithms: options.algorithms }),
      proofWindowSeconds: options.proofWindowSeconds ?? 60,
      leewaySeconds,
      spendJti: (jkt, jti, expiresAt) => replay.remember(`${jkt}:${jti}`, expiresAt),
      ...(nonces === undefined
        ? {}
        : {
            checkNonce: async (nonce: unknown) =>
              typeof nonce !== 'string' || nonce === '' || !(await nonces.check(nonce))
                ? 'the DPoP proof must carry the nonce in DPoP-Nonce'
                : undefined,
          }),
    });
    this.algorithms = this.verifier.algorithms;
  }

  /** The nonce to hand out now, when nonces are on. */
  async nonce(): Promise<string | undefined> {
    return this.options.nonce === undefined ? undefined : await this.options.nonce.issue();
  }

  async check(request: DpopRequestCheck): Promise<void> {
    try {
      await this.verifier.verify({
        proofs: request.proofs,
        method: request.method,
        urls: request.urls,
        accessToken: { token: request.accessToken, jkt: request.jkt },
        now: request.now,
      });
    } catch (error) {
      if (!(error instanceof DpopProofError)) throw error;
      if (error.code === 'use_dpop_nonce') {
        throw new TokenError('use_dpop_nonce', error.description, {
          scheme: 'dpop',
          headers: { 'dpop-nonce': (await this.nonce()) ?? '' },
        });
      }
      throw new TokenError('invalid_dpop_proof', error.description, { scheme: 'dpop' });
    }
  }
}
