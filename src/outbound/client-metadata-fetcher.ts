import type { IncomingHttpHeaders } from 'node:http';
import type { ClientMetadataFetcher, FetchedClientMetadata } from '../core/ports.js';
import { DEFAULT_PUBLIC_FETCH_POLICY, getPublicJson, type PublicFetchPolicy } from './public-https-get.js';

/**
 * The Client ID Metadata Document fetch's limits (decision 46): those of a `jwks_uri` (decision 21), the
 * private addresses under their own switch (GATEHOUSE_ALLOW_PRIVATE_CLIENT_METADATA).
 */
export const DEFAULT_CLIENT_METADATA_FETCH_POLICY: PublicFetchPolicy = DEFAULT_PUBLIC_FETCH_POLICY;

/**
 * Seconds an answer's HTTP caching lets it be used (RFC 9111 §4.2.1): `no-store` and `no-cache` say 0,
 * `max-age` (or `s-maxage`, a shared cache's) its value, else `Expires` less `Date`; undefined when the
 * answer says nothing. Core holds the result to its bounds.
 */
export function freshnessSeconds(headers: IncomingHttpHeaders): number | undefined {
  const cacheControl = (headers['cache-control'] ?? '').toLowerCase();
  const directives = new Map<string, string | undefined>();
  for (const part of cacheControl.split(',')) {
    const [name = '', value] = part.trim().split('=', 2);
    if (name !== '') directives.set(name, value?.replace(/^"(.*)"$/, '$1'));
  }
  if (directives.has('no-store') || directives.has('no-cache')) return 0;
  for (const name of ['s-maxage', 'max-age']) {
    const value = directives.get(name);
    if (value !== undefined && /^\d+$/.test(value)) return Number(value);
  }
  const expires = headers.expires === undefined ? NaN : Date.parse(headers.expires);
  if (Number.isNaN(expires)) return headers.expires === undefined ? undefined : 0;
  const date = headers.date === undefined ? NaN : Date.parse(headers.date);
  const now = Number.isNaN(date) ? Date.now() : date;
  return Math.max(0, Math.floor((expires - now) / 1000));
}

/**
 * The Client ID Metadata Document fetcher (core's ClientMetadataFetcher port): one GET over https under
 * the policy (see public-https-get.ts), the answer's JSON and its freshness. Core checks the document.
 */
export function createClientMetadataFetcher(
  policy: PublicFetchPolicy = DEFAULT_CLIENT_METADATA_FETCH_POLICY,
): ClientMetadataFetcher {
  return {
    async fetch(url: string): Promise<FetchedClientMetadata> {
      const answer = await getPublicJson(url, policy, 'application/json');
      return { document: answer.body, maxAgeSeconds: freshnessSeconds(answer.headers) };
    },
  };
}
