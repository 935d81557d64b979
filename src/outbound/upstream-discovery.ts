import { UpstreamError, type DiscoveredProvider } from '../core/sign-in/upstream.js';
import { createJwksFetcher } from './jwks-fetcher.js';

/** How an upstream's discovery document is fetched (decision 39): the jwks_uri rules' time and size. */
export interface UpstreamDiscoveryPolicy {
  /** The whole fetch (connection, TLS, answer) within this many milliseconds. */
  timeoutMs: number;
  /** A document longer than this is refused. */
  maxBytes: number;
  /**
   * Certificates (PEM) trusted beside the system's roots: tests give their upstream's. Operators use
   * NODE_EXTRA_CA_CERTS, which Node adds to the roots itself.
   */
  ca?: string;
}

const WELL_KNOWN = '/.well-known/openid-configuration';

/** OpenID Connect Discovery 1.0 §4: the metadata's place under an issuer (a trailing "/" removed first). */
export function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/$/, '')}${WELL_KNOWN}`;
}

function httpsMember(metadata: Record<string, unknown>, name: string, required: true): string;
function httpsMember(metadata: Record<string, unknown>, name: string, required: false): string | null;
function httpsMember(metadata: Record<string, unknown>, name: string, required: boolean): string | null {
  const value = metadata[name];
  if (value === undefined || value === null) {
    if (required) throw new UpstreamError('invalid-response', `its metadata has no ${name}`);
    return null;
  }
  let url: URL | undefined;
  try {
    url = typeof value === 'string' ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  if (url?.protocol !== 'https:') {
    throw new UpstreamError('invalid-response', `its metadata's ${name} is not an https URL`);
  }
  return value as string;
}

/**
 * OpenID Connect Discovery 1.0 for `gatehouse idps create --issuer` and /v1/identity-providers: one GET
 * of the issuer's metadata over https, by the fetch rules of jwks_uri (decision 21: a time limit, a size
 * limit, no redirect followed) except that a private or loopback address is allowed, since the operator,
 * not a client, names the issuer (decision 39). The document must name exactly that issuer (§4.3) and
 * the endpoints of the code flow. Every failure is an UpstreamError whose detail says what went wrong.
 */
export function createUpstreamDiscovery(policy: UpstreamDiscoveryPolicy): {
  discover(issuer: string): Promise<DiscoveredProvider>;
} {
  // The jwks_uri fetcher is a GET of JSON under those rules: one fetch, whatever the document.
  const fetcher = createJwksFetcher({
    allowPrivateAddresses: true,
    timeoutMs: policy.timeoutMs,
    maxBytes: policy.maxBytes,
    ca: policy.ca,
  });
  return {
    async discover(issuer) {
      const url = discoveryUrl(issuer);
      let document: unknown;
      try {
        document = await fetcher.fetch(url);
      } catch (error) {
        // The issuer is named by whoever reports the failure; the document's place and what went wrong here.
        throw new UpstreamError('unreachable', `${WELL_KNOWN}: ${(error as Error).message}`);
      }
      if (typeof document !== 'object' || document === null || Array.isArray(document)) {
        throw new UpstreamError('invalid-response', `${WELL_KNOWN} is not a JSON object`);
      }
      const metadata = document as Record<string, unknown>;
      // §4.3: "MUST be identical to the issuer URL that was used as the prefix to /.well-known".
      if (metadata.issuer !== issuer) {
        throw new UpstreamError(
          'wrong-issuer',
          `its metadata names the issuer ${JSON.stringify(metadata.issuer)}, not ${issuer}`,
        );
      }
      const responseTypes = metadata.response_types_supported;
      if (Array.isArray(responseTypes) && !responseTypes.includes('code')) {
        throw new UpstreamError('invalid-response', 'it does not offer the code flow (response type code)');
      }
      return {
        issuer,
        authorizationEndpoint: httpsMember(metadata, 'authorization_endpoint', true),
        tokenEndpoint: httpsMember(metadata, 'token_endpoint', true),
        userinfoEndpoint: httpsMember(metadata, 'userinfo_endpoint', false),
      };
    },
  };
}
