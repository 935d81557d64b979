import type { OAuthError } from '../errors.js';

/** Where the response parameters travel: the query (code flow) or the fragment (implicit, §4.2.2). */
export type ResponseMode = 'query' | 'fragment';

/**
 * The registered redirect URI with the response parameters added. A query the URI was registered
 * with is kept (RFC 6749 §3.1.2); registered URIs never carry a fragment, so the fragment is ours.
 * Parameters whose value is undefined are left out (state only when the request had it, §4.1.2).
 */
export function authorizationResponseUrl(
  redirectUri: string,
  mode: ResponseMode,
  params: Record<string, string | undefined>,
): string {
  const url = new URL(redirectUri);
  const target = mode === 'query' ? url.searchParams : new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) target.append(name, value);
  }
  if (mode === 'fragment') url.hash = target.toString();
  return url.toString();
}

/** An error response (RFC 6749 §4.1.2.1, §4.2.2.1) at a redirect URI already verified as registered. */
export function authorizationErrorUrl(
  redirectUri: string,
  mode: ResponseMode,
  error: OAuthError,
  state: string | undefined,
): string {
  return authorizationResponseUrl(redirectUri, mode, {
    error: error.code,
    error_description: error.description,
    state,
  });
}
