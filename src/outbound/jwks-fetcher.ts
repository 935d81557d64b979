import type { JwksFetcher } from '../core/ports.js';
import { isNonPublicAddress } from '../shared/non-public-address.js';
import { DEFAULT_PUBLIC_FETCH_POLICY, getPublicJson, type PublicFetchPolicy } from './public-https-get.js';

/** What a jwks_uri fetch may do (docs/decisions.md, decision 21; GATEHOUSE_ALLOW_PRIVATE_JWKS_URI). */
export type JwksFetchPolicy = PublicFetchPolicy;

export const DEFAULT_JWKS_FETCH_POLICY: JwksFetchPolicy = DEFAULT_PUBLIC_FETCH_POLICY;

/** A fetch refused or failed; the message is for the log, never for the client. */
export class JwksFetchError extends Error {
  override name = 'JwksFetchError';
}

// Which addresses a fetch may not reach by default; pure, so core checks a literal address at
// registration with the same rule (docs/decisions.md, decision 21).
export { isNonPublicAddress };

/**
 * The jwks_uri fetcher (core's JwksFetcher port): one GET over https, within the policy's time and
 * size, redirects not followed (a redirect could lead anywhere the address check did not look), and
 * the answer parsed as JSON. Core checks that it is a JWK Set of public keys and caches it.
 */
export function createJwksFetcher(policy: JwksFetchPolicy = DEFAULT_JWKS_FETCH_POLICY): JwksFetcher {
  return {
    fetch(uri: string): Promise<unknown> {
      return getPublicJson(
        uri,
        policy,
        'application/jwk-set+json, application/json',
        (message) => new JwksFetchError(message),
      ).then((answer) => answer.body);
    },
  };
}
