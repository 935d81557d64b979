import { randomToken, sha256 } from '../../shared/crypto.js';

/** RFC 9126 §2.2: the form of the `request_uri` the pushed authorization request endpoint answers. */
export const PUSHED_REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:';

/**
 * Parameters that authenticate the client at POST /par (RFC 9126 §2: as at the token endpoint) and are
 * no part of the authorization request: never stored with it.
 */
export const CLIENT_AUTHENTICATION_PARAMS: readonly string[] = [
  'client_secret',
  'client_assertion',
  'client_assertion_type',
];

/** The random part of a `request_uri` (256 bits, base64url: RFC 9126 §7.1 asks it be unguessable). */
const RANDOM_PART = /^[A-Za-z0-9_-]{43}$/;

/** Whether `requestUri` has the form of the ones this server hands out (not whether it is live). */
export function isPushedRequestUri(requestUri: string): boolean {
  return requestUri.startsWith(PUSHED_REQUEST_URI_PREFIX);
}

/**
 * The stored key of a `request_uri` of ours: the SHA-256 of its random part, so that the store never
 * holds what opens the request. Undefined for a value that cannot be one.
 */
export function pushedRequestHash(requestUri: string): string | undefined {
  if (!isPushedRequestUri(requestUri)) return undefined;
  const random = requestUri.slice(PUSHED_REQUEST_URI_PREFIX.length);
  return RANDOM_PART.test(random) ? sha256(random) : undefined;
}

/** A new `request_uri` and the hash it is stored under. */
export function newPushedRequestUri(): { requestUri: string; hash: string } {
  const random = randomToken('');
  return { requestUri: `${PUSHED_REQUEST_URI_PREFIX}${random}`, hash: sha256(random) };
}

/**
 * How long a pushed request stays usable once /authorize first read it: the user's time to sign in
 * and answer the consent page, which may reload /authorize (docs/decisions.md, decision 18). The
 * request is consumed as soon as an answer goes back to the client.
 */
export const PUSHED_REQUEST_FLOW_SECONDS = 1800;
