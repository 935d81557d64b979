import { decodeCanonical, mediaType, parseObject } from './compact-jws.js';
import { jwsAlgorithm, SUPPORTED_ALGORITHMS, type JwsAlgorithm } from './jws-algorithms.js';
import type { KeySet } from './jwks-cache.js';

// The subpath `gatehouse-oauth-resource-server/jwt-verifier` is this module: the verifier and the key
// set it selects keys from (the Gatehouse server verifies its own tokens with them, decision 26).
export { KeySet, type KeySelection } from './jwks-cache.js';

/** What a JWT access token must satisfy besides its signature (RFC 9068 §4). */
export interface JwtVerifierOptions {
  /** The only `alg` values accepted (RFC 8725 §3.1). */
  algorithms: readonly string[];
  /** The exact `iss`. */
  issuer: string;
  /**
   * `aud` must be, or contain, one of these. `'any'`, said explicitly, accepts every audience (an
   * authorization server answering for all its resources, RFC 7662): `aud` must then still be a string
   * or an array of strings, else the claims are malformed.
   */
  audiences: readonly string[] | 'any';
  /** Claims required besides RFC 9068's (REQUIRED_CLAIMS), as jose's `requiredClaims`. */
  requiredClaims?: readonly string[];
  /** Seconds of clock skew tolerated on `exp` and `nbf`. */
  clockToleranceSeconds: number;
}

/** A verified token's claims: a JSON object, as signed. */
export type JwtClaims = Record<string, unknown>;

export type JwtVerification =
  | { valid: true; claims: JwtClaims }
  /** The set holds no key for the token's `alg` and `kid`: worth fetching the set again, once. */
  | { valid: false; reason: 'unknown-key' }
  | { valid: false; reason: 'expired' | 'invalid' | 'malformed-claims' | 'wrong-audience' };

/** A protected header that passed every check, with what key selection needs from it. */
interface AcceptedHeader {
  alg: string;
  algorithm: JwsAlgorithm;
  kid: string | undefined;
}

const HEADER_CACHE_SIZE = 64;

/** RFC 9068 §2.2: every JWT access token carries these. */
const REQUIRED_CLAIMS = ['iss', 'exp', 'aud', 'sub', 'client_id', 'iat', 'jti'] as const;

const INVALID = { valid: false, reason: 'invalid' } as const;
const UNKNOWN_KEY = { valid: false, reason: 'unknown-key' } as const;
const EXPIRED = { valid: false, reason: 'expired' } as const;
const MALFORMED_CLAIMS = { valid: false, reason: 'malformed-claims' } as const;
/** Signed by the issuer, but for another audience: said apart so that the refusal can tell why. */
const WRONG_AUDIENCE = { valid: false, reason: 'wrong-audience' } as const;

/**
 * Verifies a compact JWS JWT access token synchronously with node:crypto: what jose's `jwtVerify`
 * checks for an RFC 9068 token (typ at+jwt, alg allow-list, key matching, iss, aud, exp, nbf, the
 * required claims), without WebCrypto's asynchronous round trip through the thread pool. Stricter than
 * jose in two ways: each part must be canonical base64url (no padding, no stray characters, no unused
 * bits set), and any `crit` or `b64` header is refused (RFC 7515 §4.1.11, RFC 7797: an access token
 * has no use for either).
 */
export class JwtVerifier {
  private readonly algorithms: ReadonlySet<string>;
  private readonly requiredClaims: readonly string[];
  private readonly headers = new Map<string, AcceptedHeader>();

  constructor(private readonly options: JwtVerifierOptions) {
    const unsupported = options.algorithms.filter((alg) => jwsAlgorithm(alg) === undefined);
    if (options.algorithms.length === 0 || unsupported.length > 0) {
      throw new Error(
        `algorithms must list asymmetric JWS algorithms (never none or HS*), of ${SUPPORTED_ALGORITHMS.join(', ')}` +
          (unsupported.length > 0 ? `; not ${unsupported.join(', ')}` : ''),
      );
    }
    if (!Number.isFinite(options.clockToleranceSeconds) || options.clockToleranceSeconds < 0) {
      throw new Error('the clock tolerance must be a non-negative number of seconds');
    }
    this.algorithms = new Set(options.algorithms);
    this.requiredClaims = [...new Set([...REQUIRED_CLAIMS, ...(options.requiredClaims ?? [])])];
  }

  /** `now` in epoch seconds; `keys` undefined when none could be fetched yet. */
  verify(token: string, keys: KeySet | undefined, now: number): JwtVerification {
    const firstDot = token.indexOf('.');
    const secondDot = token.indexOf('.', firstDot + 1);
    if (firstDot < 0 || secondDot < 0 || token.indexOf('.', secondDot + 1) >= 0) return INVALID;
    const header = this.header(token.slice(0, firstDot));
    if (header === undefined) return INVALID;
    const { alg, algorithm, kid } = header;
    const selection = keys?.select(alg, algorithm, kid) ?? { found: false, reason: 'no-match' };
    if (!selection.found) return selection.reason === 'no-match' ? UNKNOWN_KEY : INVALID;
    if (selection.key === undefined) return INVALID;
    const signature = decodeCanonical(token.slice(secondDot + 1));
    if (signature === undefined) return INVALID;
    // The signing input is ASCII (canonical base64url is checked for both parts before use).
    const signingInput = Buffer.from(token.slice(0, secondDot), 'latin1');
    const claims = parseObject(token.slice(firstDot + 1, secondDot));
    if (claims === undefined) return INVALID;
    if (!algorithm.verify(signingInput, signature, selection.key)) return INVALID;
    return this.checkClaims(claims, now);
  }

  /**
   * The checks of the protected header, remembered per header: every token a key signs carries the
   * same one (Gatehouse encodes it once per key), so it is parsed once, not once per token. Only headers
   * that pass are kept, at most HEADER_CACHE_SIZE of them.
   */
  private header(encoded: string): AcceptedHeader | undefined {
    const cached = this.headers.get(encoded);
    if (cached !== undefined) return cached;
    const header = this.checkHeader(encoded);
    if (header !== undefined) {
      if (this.headers.size >= HEADER_CACHE_SIZE) this.headers.clear();
      this.headers.set(encoded, header);
    }
    return header;
  }

  private checkHeader(encoded: string): AcceptedHeader | undefined {
    const header = parseObject(encoded);
    if (header === undefined) return undefined;
    if (Object.hasOwn(header, 'crit') || Object.hasOwn(header, 'b64')) return undefined;
    const { alg, typ, kid } = header;
    if (typeof alg !== 'string' || !this.algorithms.has(alg)) return undefined;
    // RFC 9068 §4; compared as jose does: case-insensitive, "application/" optional.
    if (typeof typ !== 'string' || mediaType(typ) !== 'application/at+jwt') return undefined;
    const algorithm = jwsAlgorithm(alg);
    if (algorithm === undefined || (kid !== undefined && typeof kid !== 'string')) return undefined;
    return { alg, algorithm, kid };
  }

  private checkClaims(claims: JwtClaims, now: number): JwtVerification {
    for (const claim of this.requiredClaims) if (!Object.hasOwn(claims, claim)) return INVALID;
    const { iss, aud, exp, nbf, iat } = claims;
    if (iss !== this.options.issuer) return INVALID;
    if (!this.acceptsAudience(aud)) return WRONG_AUDIENCE;
    const tolerance = this.options.clockToleranceSeconds;
    if (typeof iat !== 'number') return INVALID;
    if (nbf !== undefined && (typeof nbf !== 'number' || nbf > now + tolerance)) return INVALID;
    if (typeof exp !== 'number') return INVALID;
    if (exp <= now - tolerance) return EXPIRED;
    if (typeof claims.client_id !== 'string' || typeof claims.sub !== 'string') return MALFORMED_CLAIMS;
    if (claims.scope !== undefined && typeof claims.scope !== 'string') return MALFORMED_CLAIMS;
    if (this.options.audiences === 'any' && !isAudience(aud)) return MALFORMED_CLAIMS;
    return { valid: true, claims };
  }

  private acceptsAudience(aud: unknown): boolean {
    const accepted = this.options.audiences;
    // Its shape is checked with the other claims' (checkClaims), after the expiry, as jose orders it.
    if (accepted === 'any') return true;
    if (typeof aud === 'string') return accepted.includes(aud);
    if (Array.isArray(aud)) return accepted.some((audience) => aud.includes(audience));
    return false;
  }
}

/** RFC 7519 §4.1.3: one audience, or an array of them. */
function isAudience(aud: unknown): boolean {
  return typeof aud === 'string' || (Array.isArray(aud) && aud.every((value) => typeof value === 'string'));
}
