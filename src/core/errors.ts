/**
 * RFC 6749 §5.2 / §4.1.2.1 error codes, plus RFC 6750, RFC 7009, RFC 8707 and RFC 8628 ones used by
 * Gatehouse, the authorization endpoint's OpenID Connect errors (Core §3.1.2.6) and RFC 7591's
 * registration errors.
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'unsupported_response_type'
  | 'server_error'
  | 'temporarily_unavailable'
  | 'unsupported_token_type'
  | 'invalid_token'
  | 'insufficient_scope'
  | 'rate_limited'
  | 'login_required'
  | 'consent_required'
  | 'interaction_required'
  | 'request_not_supported'
  | 'request_uri_not_supported'
  /**
   * OpenID Connect Unmet Authentication Requirements 1.0 §2: an essential `acr` (Core §5.5.1.1) could
   * not be met (docs/decisions.md, decision 36).
   */
  | 'unmet_authentication_requirements'
  /** RFC 8707 §2: a `resource` that is malformed, unknown, or not what the grant allows. */
  | 'invalid_target'
  /** RFC 9449 §5: a DPoP proof that is missing where required, malformed or wrong. */
  | 'invalid_dpop_proof'
  /** RFC 9449 §8: the proof must carry the nonce the response's DPoP-Nonce header holds. */
  | 'use_dpop_nonce'
  // RFC 7591 §3.2.2, the registration endpoint's.
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  /** RFC 8628 §3.5: the device grant's polling answers. */
  | 'authorization_pending'
  | 'slow_down'
  | 'expired_token';

/** An error the client is meant to see, with the HTTP status it travels with. */
export class OAuthError extends Error {
  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
    readonly status: number = 400,
    /** Seconds the client should wait before retrying (429 only). */
    readonly retryAfter?: number,
    /** Response headers the error travels with (RFC 9449 §8: `DPoP-Nonce`). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(`${code}: ${description}`);
    this.name = 'OAuthError';
  }

  toJSON(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.code, error_description: this.description };
  }
}

export const invalidRequest = (description: string): OAuthError =>
  new OAuthError('invalid_request', description);
// docs/decisions.md, decision 1: bad client credentials answer 401 with WWW-Authenticate: Basic.
export const invalidClient = (description: string): OAuthError =>
  new OAuthError('invalid_client', description, 401);
export const invalidGrant = (description: string, status = 400): OAuthError =>
  new OAuthError('invalid_grant', description, status);
export const unauthorizedClient = (description: string): OAuthError =>
  new OAuthError('unauthorized_client', description);
export const unsupportedGrantType = (description: string): OAuthError =>
  new OAuthError('unsupported_grant_type', description);
export const invalidScope = (description: string): OAuthError => new OAuthError('invalid_scope', description);
/** RFC 8707 §2: 400 at the token endpoint, an error redirect at the authorization endpoint. */
export const invalidTarget = (description: string): OAuthError =>
  new OAuthError('invalid_target', description);
/**
 * The token endpoint's 429 (with Retry-After). Not `slow_down`, which RFC 8628 §3.5 gives the device
 * grant's polling, nor `temporarily_unavailable`, which RFC 6749 §4.1.2.1 defines for the authorization
 * endpoint and which says the server is at fault: this is the caller's own limit.
 */
export const RATE_LIMITED = 'rate_limited';
export const tooManyAttempts = (retryAfter: number): OAuthError =>
  new OAuthError(
    RATE_LIMITED,
    'too many failed attempts; retry after the delay in Retry-After',
    429,
    retryAfter,
  );

/**
 * RFC 9449 §5, §8: a refused DPoP proof at the token endpoint (or /par) is a 400; `use_dpop_nonce`
 * carries the nonce to use in its DPoP-Nonce header.
 */
export const dpopProofError = (
  code: 'invalid_dpop_proof' | 'use_dpop_nonce',
  description: string,
  nonce?: string,
): OAuthError =>
  new OAuthError(code, description, 400, undefined, nonce === undefined ? {} : { 'dpop-nonce': nonce });

/** RFC 8628 §3.5: the device grant's polling answers, each 400 (RFC 6749 §5.2). */
export const authorizationPending = (): OAuthError =>
  new OAuthError('authorization_pending', 'the user has not yet approved or denied the request');
export const slowDown = (interval: number): OAuthError =>
  new OAuthError('slow_down', `polling too often; wait at least ${interval} seconds between requests`);
export const expiredToken = (): OAuthError =>
  new OAuthError('expired_token', 'the device code has expired; start a new device authorization');
export const accessDenied = (description: string): OAuthError => new OAuthError('access_denied', description);
