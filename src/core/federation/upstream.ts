import type { IdentityProvider } from '../model.js';

/**
 * What an upstream provider proved about a person (decision 40), once the upstream flow checked out:
 * the ID token's signature, `iss`, `aud`, `exp` and `nonce`, the authorization response's `state` and
 * RFC 9207 `iss`, and userinfo's `sub` against the ID token's. Claims are read through the provider's
 * claim mapping; the link is (issuer, subject).
 */
export interface UpstreamIdentity {
  /** The upstream issuer, or `urn:gatehouse:idp:<provider id>` for a plain OAuth 2.0 provider. */
  issuer: string;
  subject: string;
  username: string | null;
  email: string | null;
  /** True only when the upstream said so with a boolean `true`. */
  emailVerified: boolean;
  name: string | null;
  /** The ID token's `amr` and `acr` as sent (a plain OAuth 2.0 provider has neither). */
  amr: string[] | null;
  acr: string | null;
}

/** What this server asks of the upstream sign-in, passed through from the authorization request. */
export interface UpstreamRequest {
  /** OpenID Connect Core §3.1.2.1 `acr_values`: the provider's required acr, or a step-up's. */
  acrValues?: readonly string[];
  /** `max_age`, passed through so a stale upstream session signs in again. */
  maxAge?: number;
  /** `prompt=login`: a re-authentication here is one at the upstream too. */
  prompt?: 'login';
  loginHint?: string;
}

/** The authorization request sent upstream, and what its callback must match (kept by the browser). */
export interface UpstreamAuthorization {
  url: string;
  state: string;
  /** Null for a plain OAuth 2.0 provider (no ID token). */
  nonce: string | null;
  codeVerifier: string;
  /**
   * The `max_age` sent, when one was (OpenID Connect Core §3.1.2.1): the ID token's `auth_time` is then
   * checked against it. Kept with the rest, so an upstream that ignored it is caught.
   */
  maxAge?: number;
}

/**
 * Why an upstream sign-in failed, in words a person may read (never a secret, never upstream HTML):
 * - `denied`: the person (or the upstream) refused, `error=access_denied` (RFC 6749 §4.1.2.1);
 * - `upstream-error`: any other error the upstream answered, its `error` code in `detail`;
 * - `wrong-issuer`: RFC 9207 `iss` or the ID token's `iss` names another provider (a mix-up);
 * - `invalid-response`: a state, nonce, signature, audience, expiry or subject that does not check out;
 * - `unreachable`: the upstream did not answer in time, answered too much, or not over TLS it trusts.
 */
export type UpstreamFailureKind =
  'denied' | 'upstream-error' | 'wrong-issuer' | 'invalid-response' | 'unreachable';

export class UpstreamError extends Error {
  constructor(
    readonly kind: UpstreamFailureKind,
    /** A short, safe explanation (an OAuth error code, which check failed); shown on the failure page. */
    readonly detail: string,
  ) {
    super(`${kind}: ${detail}`);
    this.name = 'UpstreamError';
  }
}

/** OpenID Provider metadata this server uses, as discovery found it (OpenID Connect Discovery 1.0 §3). */
export interface DiscoveredProvider {
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  userinfoEndpoint: string | null;
}

/**
 * The upstream flow (the port; outbound/upstream-client.ts implements it with openid-client): the
 * code flow with PKCE, `state` and `nonce`, RFC 9207 `iss`. Sealed secrets are opened by the
 * implementation, which holds the key-encryption key.
 */
export interface UpstreamProviders {
  /** Looks an OpenID Provider up by discovery: what `idps create --issuer` checks and stores. */
  discover(issuer: string): Promise<DiscoveredProvider>;
  /** The URL to send the browser to, with fresh `state`, `nonce` and PKCE verifier. */
  begin(
    provider: IdentityProvider,
    redirectUri: string,
    request: UpstreamRequest,
  ): Promise<UpstreamAuthorization>;
  /**
   * Checks the callback (`callbackUrl` as the browser reached it) against what begin() made, redeems
   * the code and reads the person's claims. Throws UpstreamError on every failure.
   */
  finish(
    provider: IdentityProvider,
    redirectUri: string,
    callbackUrl: URL,
    expected: Omit<UpstreamAuthorization, 'url'>,
  ): Promise<UpstreamIdentity>;
}

/** The link issuer of a plain OAuth 2.0 provider, which has no issuer of its own. */
export function upstreamIssuer(provider: Pick<IdentityProvider, 'id' | 'issuer'>): string {
  return provider.issuer ?? `urn:gatehouse:idp:${provider.id}`;
}

/**
 * The AES-GCM associated data an identity provider's sealed client secret and private key are sealed
 * under (sealed-box.ts), with the key `identityProviderKey` derived from the server secret: a value
 * sealed for one provider, or as the other kind, does not open as another.
 */
export const sealContext = {
  clientSecret: (providerId: string) => `identity-provider:${providerId}:client-secret`,
  privateKey: (providerId: string) => `identity-provider:${providerId}:private-key`,
};
