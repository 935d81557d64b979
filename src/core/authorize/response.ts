import type { OAuthError } from '../errors.js';

/**
 * Where the response parameters travel: the query (code flow, RFC 6749 §4.1.2), the fragment
 * (implicit, §4.2.2; every response type that returns a token or an ID token, OAuth 2.0 Multiple
 * Response Type Encoding Practices §5), or a form the browser posts to the redirect URI (OAuth 2.0 Form
 * Post Response Mode §2).
 */
export type ResponseMode = 'query' | 'fragment' | 'form_post';

/** Listed as discovery advertises them (`response_modes_supported`). */
export const RESPONSE_MODES: readonly ResponseMode[] = ['query', 'fragment', 'form_post'];

/**
 * The response types (RFC 6749 §3.1.1; OAuth 2.0 Multiple Response Type Encoding Practices §3, §5),
 * each with its parts in their canonical order. Those with `id_token` exist only in OpenID Connect
 * requests. Listed as discovery advertises them (`response_types_supported`): OAuth's two, then
 * OpenID Connect's.
 */
export const RESPONSE_TYPES = [
  'code',
  'token',
  'id_token',
  'id_token token',
  'code id_token',
  'code token',
  'code id_token token',
] as const;
export type ResponseType = (typeof RESPONSE_TYPES)[number];

/** What a response type returns from the authorization endpoint. */
export interface ResponseParts {
  code: boolean;
  idToken: boolean;
  token: boolean;
}

export function responseParts(type: ResponseType): ResponseParts {
  const parts = type.split(' ');
  return {
    code: parts.includes('code'),
    idToken: parts.includes('id_token'),
    token: parts.includes('token'),
  };
}

/**
 * The response type a `response_type` value names (its parts space-separated, in any order), or
 * undefined when it names none this request may use: an OAuth 2.0 request has `code` and `token`
 * (RFC 6749 §3.1.1), an OpenID Connect one also every combination with `id_token` (Core §3; OAuth 2.0
 * Multiple Response Type Encoding Practices §3, §5).
 */
export function parseResponseType(value: string | undefined, openid: boolean): ResponseType | undefined {
  if (value === undefined) return undefined;
  if (!openid) return value === 'code' || value === 'token' ? value : undefined;
  const parts = value.split(' ').filter((part) => part !== '');
  if (new Set(parts).size !== parts.length) return undefined;
  const canonical = ['code', 'id_token', 'token'].filter((part) => parts.includes(part)).join(' ');
  if (canonical.split(' ').length !== parts.length) return undefined;
  return (RESPONSE_TYPES as readonly string[]).includes(canonical) ? (canonical as ResponseType) : undefined;
}

/** The default response mode (Multiple Response Types §5): the query for `code` alone, else the fragment. */
export function defaultResponseMode(type: ResponseType): ResponseMode {
  return type === 'code' ? 'query' : 'fragment';
}

/** Multiple Response Types §5: a token or an ID token never travels in the query. */
export function modeAllowed(mode: ResponseMode, type: ResponseType): boolean {
  const parts = responseParts(type);
  return mode !== 'query' || (!parts.token && !parts.idToken);
}

/** An answer to an authorization request, success or error, addressed to a verified redirect URI. */
export interface AuthorizationResponse {
  /** The registered redirect URI, as registered (its own query kept, RFC 6749 §3.1.2). */
  redirectUri: string;
  mode: ResponseMode;
  /** The response parameters, in order; those the response does not have are left out. */
  params: [string, string][];
}

/**
 * The response to an authorization request. Parameters whose value is undefined are left out (state
 * only when the request had it, §4.1.2). RFC 9207 §2: every response, success or error, names the
 * issuer in `iss`, so a client that talks to several servers can tell which one answered (mix-up
 * attacks, RFC 9700 §4.4).
 */
export function authorizationResponse(
  redirectUri: string,
  mode: ResponseMode,
  params: Record<string, string | undefined>,
  issuer: string,
): AuthorizationResponse {
  const present = Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined);
  present.push(['iss', issuer]);
  return { redirectUri, mode, params: present };
}

/**
 * Where a query or fragment response sends the browser: the registered redirect URI with the
 * parameters added. A query the URI was registered with is kept (RFC 6749 §3.1.2); registered URIs
 * never carry a fragment, so the fragment is ours. A form_post response has no such address: it is a
 * page (see the browser pages' form-post page).
 */
export function responseLocation(response: AuthorizationResponse): string {
  if (response.mode === 'form_post') throw new Error('a form_post response is a page, not a redirect');
  const url = new URL(response.redirectUri);
  const target = response.mode === 'query' ? url.searchParams : new URLSearchParams();
  for (const [name, value] of response.params) target.append(name, value);
  if (response.mode === 'fragment') url.hash = target.toString();
  return url.toString();
}

/** The query or fragment URL of a response (kept for callers that only ever redirect). */
export function authorizationResponseUrl(
  redirectUri: string,
  mode: Exclude<ResponseMode, 'form_post'>,
  params: Record<string, string | undefined>,
  issuer: string,
): string {
  return responseLocation(authorizationResponse(redirectUri, mode, params, issuer));
}

/** An error response (RFC 6749 §4.1.2.1, §4.2.2.1) at a redirect URI already verified as registered. */
export function authorizationErrorResponse(
  redirectUri: string,
  mode: ResponseMode,
  error: OAuthError,
  state: string | undefined,
  issuer: string,
): AuthorizationResponse {
  return authorizationResponse(
    redirectUri,
    mode,
    { error: error.code, error_description: error.description, state },
    issuer,
  );
}
