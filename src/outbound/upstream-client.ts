import { request, Agent, type RequestOptions } from 'node:https';
import { rootCertificates } from 'node:tls';
import { importPKCS8 } from 'jose';
import * as client from 'openid-client';
import type { IdentityProvider, UpstreamClaimMapping } from '../core/model.js';
import { open } from '../core/keys/sealed-box.js';
import {
  sealContext,
  upstreamIssuer,
  UpstreamError,
  type DiscoveredProvider,
  type UpstreamAuthorization,
  type UpstreamIdentity,
  type UpstreamProviders,
  type UpstreamRequest,
} from '../core/federation/upstream.js';
import { systemClock, type Clock } from '../shared/clock.js';

/** What a call to an upstream provider may do (docs/decisions.md, decision 38). */
export interface UpstreamFetchPolicy {
  /** Each request (connection, TLS, answer) must be done within this many milliseconds. */
  timeoutMs: number;
  /** An answer longer than this many bytes is refused. */
  maxBytes: number;
  /** Certificates (PEM) trusted beside the system's roots; tests give their own CA. */
  ca?: string;
}

export const DEFAULT_UPSTREAM_FETCH_POLICY: UpstreamFetchPolicy = {
  timeoutMs: 10_000,
  // Discovery documents, JWK Sets, token responses and userinfo are a few kilobytes; a large
  // provider's discovery document is under 10 KiB.
  maxBytes: 256 * 1024,
};

export interface OpenIdUpstreamProvidersOptions {
  /** deriveServerKeys(secret).identityProviderKey: opens the providers' sealed secrets and keys. */
  identityProviderKey: Buffer;
  policy?: UpstreamFetchPolicy;
  /** The time ID tokens' `exp`, `iat` and `auth_time` are checked against. */
  clock?: Clock;
  /** How long a discovered provider's metadata is reused, in seconds. */
  discoveryTtlSeconds?: number;
}

/** A request that did not complete (network, TLS, timeout, size); its message is for no one. */
class OutboundFailure extends Error {
  override name = 'OutboundFailure';
  constructor(readonly detail: string) {
    super(detail);
  }
}

/** OpenID Connect Core §2: `sub` "MUST NOT exceed 255 ASCII characters in length". */
const MAX_SUBJECT_LENGTH = 255;
/** An OAuth error code shown on the failure page: RFC 6749 §4.1.2.1 `error` is printable ASCII. */
const ERROR_CODE = /^[\x20-\x7e]{1,64}$/;

const DEFAULT_MAPPING: UpstreamClaimMapping = {
  subject: 'sub',
  username: 'preferred_username',
  email: 'email',
  emailVerified: 'email_verified',
  name: 'name',
};

type JwksCache = ReturnType<typeof client.getJwksCache>;

interface CachedMetadata {
  /** The provider's `updatedAt` when discovered: an edited provider is discovered again. */
  version: number;
  expiresAt: number;
  metadata: Promise<client.ServerMetadata>;
}

/**
 * The upstream flow (core's UpstreamProviders port) with openid-client (decision 38): discovery, the
 * code flow with PKCE, `state` and `nonce`, RFC 9207 `iss`, the ID token checked (signature against the
 * upstream's JWK Set, `iss`, `aud`, `exp`, `nonce`), userinfo with its `sub` checked. Every request
 * goes through this class's fetch, which trusts the configured CA beside the system's, bounds each
 * request in time and each answer in size, and follows no redirect. Every failure leaves as an
 * UpstreamError whose detail is one of this module's own short phrases or a checked OAuth error code;
 * nothing an upstream sent (a description, a page) and nothing secret reaches it.
 */
export class OpenIdUpstreamProviders implements UpstreamProviders {
  private readonly policy: UpstreamFetchPolicy;
  private readonly clock: Clock;
  private readonly discoveryTtl: number;
  private readonly agent: Agent | undefined;
  /**
   * Discovered metadata per provider id, and the upstream's JWK Set per issuer. Both are copies of
   * what the upstream publishes, not state of this server, so each process keeps its own and the
   * store holds neither; an edited provider (a new `updatedAt`) is discovered again.
   */
  private readonly discovered = new Map<string, CachedMetadata>();
  private readonly jwksCaches = new Map<string, JwksCache>();

  constructor(private readonly options: OpenIdUpstreamProvidersOptions) {
    this.policy = options.policy ?? DEFAULT_UPSTREAM_FETCH_POLICY;
    this.clock = options.clock ?? systemClock;
    this.discoveryTtl = options.discoveryTtlSeconds ?? 300;
    // Without a CA of its own the default agent is used, which trusts what Node trusts
    // (NODE_EXTRA_CA_CERTS included); `ca` replaces the roots, so they are given again beside it.
    this.agent =
      this.policy.ca === undefined
        ? undefined
        : new Agent({ ca: [...rootCertificates, this.policy.ca], keepAlive: false });
  }

  async discover(issuer: string): Promise<DiscoveredProvider> {
    const metadata = await guarded(() => this.fetchMetadata(issuer));
    return {
      issuer: metadata.issuer,
      authorizationEndpoint: requireHttps(metadata.authorization_endpoint, 'authorization endpoint'),
      tokenEndpoint: requireHttps(metadata.token_endpoint, 'token endpoint'),
      userinfoEndpoint:
        metadata.userinfo_endpoint === undefined
          ? null
          : requireHttps(metadata.userinfo_endpoint, 'userinfo endpoint'),
    };
  }

  async begin(
    provider: IdentityProvider,
    redirectUri: string,
    request: UpstreamRequest,
  ): Promise<UpstreamAuthorization> {
    return guarded(async () => {
      // The client's credentials are opened now, so a provider whose secret does not open fails
      // before the person signs in upstream for nothing.
      const config = await this.configuration(provider);
      const codeVerifier = client.randomPKCECodeVerifier();
      const state = client.randomState();
      const nonce = provider.kind === 'oidc' ? client.randomNonce() : null;
      const scopes = new Set(provider.scopes);
      if (provider.kind === 'oidc') scopes.add('openid');
      const parameters: Record<string, string> = {
        redirect_uri: redirectUri,
        response_type: 'code',
        scope: [...scopes].join(' '),
        state,
        // RFC 7636 §4.2: S256 always; the verifier stays with the browser's pending sign-in.
        code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
      };
      if (nonce !== null) parameters.nonce = nonce;
      // OpenID Connect Core §3.1.2.1: the provider's own requirement first, then a step-up's.
      const acrValues = [
        ...new Set([
          ...(provider.requiredAcr === null ? [] : [provider.requiredAcr]),
          ...(request.acrValues ?? []),
        ]),
      ];
      if (acrValues.length > 0) parameters.acr_values = acrValues.join(' ');
      if (request.maxAge !== undefined) parameters.max_age = String(request.maxAge);
      if (request.prompt !== undefined) parameters.prompt = request.prompt;
      if (request.loginHint !== undefined) parameters.login_hint = request.loginHint;
      const url = client.buildAuthorizationUrl(config, parameters);
      return {
        url: url.href,
        state,
        nonce,
        codeVerifier,
        ...(request.maxAge === undefined || provider.kind !== 'oidc' ? {} : { maxAge: request.maxAge }),
      };
    });
  }

  async finish(
    provider: IdentityProvider,
    redirectUri: string,
    callbackUrl: URL,
    expected: Omit<UpstreamAuthorization, 'url'>,
  ): Promise<UpstreamIdentity> {
    return guarded(async () => {
      const config = await this.configuration(provider);
      const metadata = config.serverMetadata();
      const parameters = new URLSearchParams(callbackUrl.search);
      checkCallback(provider, metadata, parameters, expected.state);

      // The code is redeemed at the redirect URI as registered (RFC 6749 §4.1.3), whatever host or
      // extra parameters the browser's URL carried; the parameters checked above go with it.
      const current = new URL(redirectUri);
      for (const [name, value] of parameters) current.searchParams.append(name, value);
      const oidc = provider.kind === 'oidc';
      if (oidc && expected.nonce === null) throw new UpstreamError('invalid-response', 'no nonce was kept');
      const tokens = await client.authorizationCodeGrant(config, current, {
        expectedState: expected.state,
        pkceCodeVerifier: expected.codeVerifier,
        ...(oidc
          ? {
              expectedNonce: expected.nonce ?? undefined,
              idTokenExpected: true,
              ...(expected.maxAge === undefined ? {} : { maxAge: expected.maxAge }),
            }
          : {}),
      });
      this.keepJwks(config);

      if (oidc) {
        const idToken = tokens.claims();
        if (idToken === undefined) throw new UpstreamError('invalid-response', 'no ID token');
        let userinfo: Record<string, unknown> = {};
        if (metadata.userinfo_endpoint !== undefined) {
          // OpenID Connect Core §5.3.2: userinfo's `sub` must be the ID token's.
          userinfo = await client.fetchUserInfo(config, tokens.access_token, idToken.sub);
        }
        const identity = mapClaims(provider.claimMapping, { ...userinfo, ...idToken });
        return {
          ...identity,
          // The issuer as stored (discovery found it equal to the metadata's, and the ID token's `iss`
          // was checked against that): links are keyed by it.
          issuer: upstreamIssuer(provider),
          amr: stringList(idToken.amr),
          acr: typeof idToken.acr === 'string' ? idToken.acr : null,
        };
      }

      if (provider.userinfoEndpoint === null) {
        throw new UpstreamError('invalid-response', 'the provider has no userinfo endpoint');
      }
      const response = await client.fetchProtectedResource(
        config,
        tokens.access_token,
        new URL(provider.userinfoEndpoint),
        'GET',
        undefined,
        new Headers({ accept: 'application/json' }),
      );
      if (response.status !== 200)
        throw new UpstreamError('upstream-error', `userinfo answered ${response.status}`);
      let body: unknown;
      try {
        body = JSON.parse(await response.text()) as unknown;
      } catch {
        throw new UpstreamError('invalid-response', 'userinfo is not JSON');
      }
      if (!isObject(body)) throw new UpstreamError('invalid-response', 'userinfo is not a JSON object');
      return {
        ...mapClaims(provider.claimMapping, body),
        issuer: upstreamIssuer(provider),
        amr: null,
        acr: null,
      };
    });
  }

  /** Drops the connections this instance keeps (none stay open between requests). */
  close(): void {
    this.agent?.destroy();
  }

  /** A Configuration for one flow step: metadata (cached), the client's credentials, this clock. */
  private async configuration(provider: IdentityProvider): Promise<client.Configuration> {
    const metadata = await this.providerMetadata(provider);
    const config = new client.Configuration(
      metadata,
      provider.clientId,
      {
        // oauth4webapi checks `exp`, `iat` and `auth_time` against Date.now() + clockSkew: the skew
        // makes that this server's clock.
        [client.clockSkew]: this.clock.now() - Math.floor(Date.now() / 1000),
      },
      await this.clientAuthentication(provider),
    );
    config[client.customFetch] = this.fetch;
    // The fetch bounds each request itself; openid-client's own timeout (whole seconds) only backs it.
    config.timeout = Math.ceil(this.policy.timeoutMs / 1000) + 1;
    // OpenID Connect Core §3.1.3.7: the ID token's signature is checked against the upstream's JWK
    // Set, not only trusted for arriving over TLS from the token endpoint.
    if (provider.kind === 'oidc') {
      client.enableNonRepudiationChecks(config);
      const cache = this.jwksCaches.get(metadata.issuer);
      if (cache !== undefined) client.setJwksCache(config, cache);
    }
    return config;
  }

  private keepJwks(config: client.Configuration): void {
    const cache = client.getJwksCache(config);
    if (cache !== undefined) this.jwksCaches.set(config.serverMetadata().issuer, cache);
  }

  private providerMetadata(provider: IdentityProvider): Promise<client.ServerMetadata> {
    if (provider.kind === 'oauth2') {
      if (provider.authorizationEndpoint === null || provider.tokenEndpoint === null) {
        return Promise.reject(new UpstreamError('invalid-response', 'the provider has no endpoints'));
      }
      // A plain OAuth 2.0 provider has no issuer; the link's own name stands in (no ID token is
      // expected, so nothing is compared with it).
      return Promise.resolve({
        issuer: upstreamIssuer(provider),
        authorization_endpoint: requireHttps(provider.authorizationEndpoint, 'authorization endpoint'),
        token_endpoint: requireHttps(provider.tokenEndpoint, 'token endpoint'),
      });
    }
    if (provider.issuer === null) {
      return Promise.reject(new UpstreamError('invalid-response', 'the provider has no issuer'));
    }
    const issuer = provider.issuer;
    const now = this.clock.now();
    const cached = this.discovered.get(provider.id);
    if (cached !== undefined && cached.version === provider.updatedAt && cached.expiresAt > now) {
      return cached.metadata;
    }
    const metadata = this.fetchMetadata(issuer);
    this.discovered.set(provider.id, {
      version: provider.updatedAt,
      expiresAt: now + this.discoveryTtl,
      metadata,
    });
    // A failed discovery is not kept: the next sign-in tries again.
    metadata.catch(() => {
      if (this.discovered.get(provider.id)?.metadata === metadata) this.discovered.delete(provider.id);
    });
    return metadata;
  }

  /** OpenID Connect Discovery 1.0 §4: the document, whose `issuer` must be the one asked for. */
  private async fetchMetadata(issuer: string): Promise<client.ServerMetadata> {
    let url: URL;
    try {
      url = new URL(issuer);
    } catch {
      throw new UpstreamError('invalid-response', 'the issuer is not a URL');
    }
    const config = await client.discovery(url, 'discovery', undefined, client.None(), {
      [client.customFetch]: this.fetch,
      timeout: Math.ceil(this.policy.timeoutMs / 1000) + 1,
    });
    return { ...config.serverMetadata() };
  }

  private async clientAuthentication(provider: IdentityProvider): Promise<client.ClientAuth> {
    const key = this.options.identityProviderKey;
    switch (provider.clientAuth) {
      case 'none':
        return client.None();
      case 'client_secret_basic':
      case 'client_secret_post': {
        if (provider.clientSecretSealed === null) {
          throw new UpstreamError('unreachable', 'the provider has no client secret');
        }
        let secret: string;
        try {
          secret = open(key, provider.clientSecretSealed, sealContext.clientSecret(provider.id)).toString(
            'utf8',
          );
        } catch {
          throw new UpstreamError('unreachable', 'the client secret does not open with this server secret');
        }
        return provider.clientAuth === 'client_secret_basic'
          ? client.ClientSecretBasic(secret)
          : client.ClientSecretPost(secret);
      }
      case 'private_key_jwt': {
        if (provider.privateKeySealed === null || provider.publicJwk === null) {
          throw new UpstreamError('unreachable', 'the provider has no private key');
        }
        let der: Buffer;
        try {
          der = open(key, provider.privateKeySealed, sealContext.privateKey(provider.id));
        } catch {
          throw new UpstreamError('unreachable', 'the private key does not open with this server secret');
        }
        const jwk = provider.publicJwk;
        const alg = typeof jwk.alg === 'string' ? jwk.alg : defaultAlgorithm(jwk);
        let cryptoKey: CryptoKey;
        try {
          const pem = `-----BEGIN PRIVATE KEY-----\n${der.toString('base64')}\n-----END PRIVATE KEY-----`;
          cryptoKey = await importPKCS8(pem, alg);
        } catch {
          throw new UpstreamError('unreachable', 'the private key cannot sign');
        }
        // RFC 7523 §3 and OpenID Connect Core §9: the assertion names its key, as registered upstream.
        return client.PrivateKeyJwt(
          typeof jwk.kid === 'string' ? { key: cryptoKey, kid: jwk.kid } : cryptoKey,
        );
      }
    }
  }

  /**
   * Every request openid-client makes (discovery, JWK Set, token, userinfo): https only, this
   * instance's CA, one timer over the whole request, the answer cut at maxBytes, no redirect followed.
   * Private and loopback addresses are reached: an operator configured the provider (decision 38).
   */
  private readonly fetch: client.CustomFetch = async (url, options) => {
    const target = new URL(url);
    if (target.protocol !== 'https:') throw new OutboundFailure('only https is used');
    const body = await bodyBytes(options.body);
    const { timeoutMs, maxBytes } = this.policy;
    return new Promise<Response>((resolve, reject) => {
      let settled = false;
      const settle = (error: Error | undefined, response?: Response) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        if (error === undefined && response !== undefined) resolve(response);
        else reject(error instanceof OutboundFailure ? error : new OutboundFailure('the request failed'));
      };
      const fail = (detail: string) => {
        settle(new OutboundFailure(detail));
        req.destroy();
      };
      const onAbort = () => fail('the request was abandoned');
      const headers: Record<string, string> = { 'user-agent': 'Gatehouse', ...options.headers };
      if (body !== undefined) headers['content-length'] = String(body.length);
      const requestOptions: RequestOptions = {
        method: options.method,
        headers,
        maxHeaderSize: 16 * 1024,
        ...(this.agent === undefined ? {} : { agent: this.agent }),
      };
      const req = request(target, requestOptions, (res) => {
        const declared = Number(res.headers['content-length']);
        if (Number.isFinite(declared) && declared > maxBytes) {
          fail(`an answer larger than ${maxBytes} bytes`);
          return;
        }
        const chunks: Buffer[] = [];
        let length = 0;
        res.on('data', (chunk: Buffer) => {
          length += chunk.length;
          if (length > maxBytes) {
            fail(`an answer larger than ${maxBytes} bytes`);
            return;
          }
          chunks.push(chunk);
        });
        res.on('error', () => fail('the answer was cut'));
        res.on('end', () => {
          try {
            const responseHeaders = new Headers();
            for (const [name, value] of Object.entries(res.headers)) {
              for (const item of Array.isArray(value) ? value : value === undefined ? [] : [value]) {
                responseHeaders.append(name, item);
              }
            }
            const status = res.statusCode ?? 0;
            const nullBody = status === 204 || status === 304 || (status >= 100 && status < 200);
            settle(
              undefined,
              new Response(nullBody ? null : Buffer.concat(chunks), { status, headers: responseHeaders }),
            );
          } catch {
            settle(new OutboundFailure('an answer that is not HTTP'));
          }
        });
      });
      const timer = setTimeout(() => fail(`no answer within ${timeoutMs} ms`), timeoutMs);
      if (options.signal?.aborted === true) {
        onAbort();
        return;
      }
      options.signal?.addEventListener('abort', onAbort, { once: true });
      req.on('error', (error: NodeJS.ErrnoException) => settle(new OutboundFailure(networkDetail(error))));
      req.end(body);
    });
  };
}

/**
 * RFC 9207 §2.4, RFC 6749 §4.1.2 and §10.12, checked before anything is redeemed so that each failure
 * gets its own kind: a callback naming another issuer is a mix-up; one whose `state` is not the
 * browser's is not this sign-in's; an error answered upstream is shown by its code alone.
 */
function checkCallback(
  provider: IdentityProvider,
  metadata: client.ServerMetadata,
  parameters: URLSearchParams,
  expectedState: string,
): void {
  if (provider.kind === 'oidc') {
    const iss = parameters.getAll('iss');
    if (iss.length > 1 || (iss.length === 1 && iss[0] !== metadata.issuer)) {
      throw new UpstreamError('wrong-issuer', 'the response names another issuer');
    }
    if (iss.length === 0 && metadata.authorization_response_iss_parameter_supported === true) {
      throw new UpstreamError('wrong-issuer', 'the response does not name its issuer');
    }
  } else {
    // A plain OAuth 2.0 provider is known by its endpoints, not an issuer: an `iss` it sends has
    // nothing to be compared with (RFC 9207 §2.4 applies to clients that know the issuer).
    parameters.delete('iss');
  }
  const state = parameters.getAll('state');
  if (state.length !== 1 || state[0] !== expectedState) {
    throw new UpstreamError('invalid-response', 'the state does not match this sign-in');
  }
  if (parameters.has('response')) throw new UpstreamError('invalid-response', 'an unexpected JWT response');
  const error = parameters.get('error');
  if (error !== null) throw callbackError(error);
  if (parameters.getAll('code').length !== 1)
    throw new UpstreamError('invalid-response', 'no authorization code');
}

/** RFC 6749 §4.1.2.1: `access_denied` is a refusal; any other code is shown as it is when printable. */
function callbackError(code: string): UpstreamError {
  if (code === 'access_denied') return new UpstreamError('denied', 'access_denied');
  return new UpstreamError('upstream-error', ERROR_CODE.test(code) ? code : 'an unreadable error code');
}

/** Runs a flow step; whatever it throws leaves as an UpstreamError with a safe detail. */
async function guarded<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    throw toUpstreamError(error);
  }
}

/** The codes oauth4webapi and openid-client give their errors (their messages are not shown). */
const CODE = {
  timeout: 'OAUTH_TIMEOUT',
  abort: 'OAUTH_ABORT',
  httpForbidden: 'OAUTH_HTTP_REQUEST_FORBIDDEN',
  protocolForbidden: 'OAUTH_REQUEST_PROTOCOL_FORBIDDEN',
  notConform: 'OAUTH_RESPONSE_IS_NOT_CONFORM',
  notJson: 'OAUTH_RESPONSE_IS_NOT_JSON',
  parse: 'OAUTH_PARSE_ERROR',
  claim: 'OAUTH_JWT_CLAIM_COMPARISON_FAILED',
  attribute: 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED',
  timestamp: 'OAUTH_JWT_TIMESTAMP_CHECK_FAILED',
  keySelection: 'OAUTH_KEY_SELECTION_FAILED',
  missingMetadata: 'OAUTH_MISSING_SERVER_METADATA',
  invalidMetadata: 'OAUTH_INVALID_SERVER_METADATA',
  invalidResponse: 'OAUTH_INVALID_RESPONSE',
  unsupported: 'OAUTH_UNSUPPORTED_OPERATION',
} as const;

export function toUpstreamError(error: unknown): UpstreamError {
  if (error instanceof UpstreamError) return error;
  const failure = causes(error).find((cause) => cause instanceof OutboundFailure);
  if (failure instanceof OutboundFailure) return new UpstreamError('unreachable', failure.detail);
  if (error instanceof client.AuthorizationResponseError) return callbackError(error.error);
  if (error instanceof client.ResponseBodyError) {
    // RFC 6749 §5.2: the token endpoint's error code (invalid_grant for a code used twice or expired).
    return new UpstreamError(
      'upstream-error',
      ERROR_CODE.test(error.error) ? error.error : `HTTP ${error.status}`,
    );
  }
  if (error instanceof client.WWWAuthenticateChallengeError) {
    const code = error.cause[0]?.parameters.error;
    return new UpstreamError(
      'upstream-error',
      code !== undefined && ERROR_CODE.test(code) ? code : `HTTP ${error.status}`,
    );
  }
  const coded = causes(error).find((cause) => typeof (cause as { code?: unknown }).code === 'string') as
    { code: string; cause?: unknown } | undefined;
  // What a comparison failed on (oauth4webapi puts it in its error's cause): a claim or an attribute.
  const detail = (causes(error).find((cause) => 'claim' in cause || 'attribute' in cause) ?? {}) as {
    claim?: unknown;
    attribute?: unknown;
    body?: unknown;
  };
  const status = statusOf(error);
  switch (coded?.code) {
    case CODE.timeout:
    case CODE.abort:
      return new UpstreamError('unreachable', 'no answer in time');
    case CODE.httpForbidden:
    case CODE.protocolForbidden:
      return new UpstreamError('unreachable', 'only https is used');
    case CODE.notConform:
      return new UpstreamError(
        'upstream-error',
        status === undefined ? 'an unexpected answer' : `HTTP ${status}`,
      );
    case CODE.claim:
      if (detail.claim === 'iss')
        return new UpstreamError('wrong-issuer', 'the ID token names another issuer');
      return new UpstreamError(
        'invalid-response',
        typeof detail.claim === 'string' && /^[a-z_]{1,20}$/.test(detail.claim)
          ? `the ID token's ${detail.claim} does not match`
          : 'the ID token does not match',
      );
    case CODE.attribute:
      if (detail.attribute === 'issuer') {
        // Discovery §4.3: the operator is told which issuer the document does name, the usual
        // mistake being a trailing slash or another host name for the same server.
        const named = (detail.body as { issuer?: unknown } | undefined)?.issuer;
        return new UpstreamError(
          'wrong-issuer',
          typeof named === 'string' && named.length <= 200 && /^https:\/\/[\x21-\x7e]+$/.test(named)
            ? `the discovery document names the issuer "${named}"`
            : 'the discovery document names another issuer',
        );
      }
      if (detail.attribute === 'sub') {
        return new UpstreamError('invalid-response', "userinfo's sub is not the ID token's");
      }
      return new UpstreamError('invalid-response', 'an answer does not match');
    case CODE.timestamp:
      // OpenID Connect Core §3.1.2.1: an upstream sign-in older than the max_age asked for.
      if (detail.claim === 'auth_time') {
        return new UpstreamError('invalid-response', 'the upstream sign-in is older than max_age');
      }
      return new UpstreamError('invalid-response', 'the ID token is expired or not yet valid');
    case CODE.keySelection:
      return new UpstreamError('invalid-response', 'no upstream key verifies the ID token');
    case CODE.notJson:
    case CODE.parse:
      return new UpstreamError('invalid-response', 'an answer is not what was asked for');
    case CODE.missingMetadata:
    case CODE.invalidMetadata:
      return new UpstreamError('invalid-response', 'the provider metadata is incomplete');
    case CODE.invalidResponse:
    case CODE.unsupported:
    default:
      return new UpstreamError('invalid-response', 'an answer does not check out');
  }
}

/** The error and its causes, outermost first (bounded: a cause chain can loop). */
function causes(error: unknown): object[] {
  const chain: object[] = [];
  let current: unknown = error;
  while (typeof current === 'object' && current !== null && chain.length < 8 && !chain.includes(current)) {
    chain.push(current);
    current = (current as { cause?: unknown }).cause;
  }
  return chain;
}

function statusOf(error: unknown): number | undefined {
  for (const cause of causes(error)) {
    const status = (cause as { status?: unknown }).status;
    if (typeof status === 'number') return status;
    if (cause instanceof Response) return cause.status;
  }
  return undefined;
}

function networkDetail(error: NodeJS.ErrnoException): string {
  const code = typeof error.code === 'string' ? error.code : '';
  if (code.startsWith('ERR_TLS') || /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|HOSTNAME/.test(code)) {
    return 'its TLS certificate is not trusted';
  }
  if (code === 'ECONNREFUSED') return 'the connection was refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'its name does not resolve';
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'the connection was reset';
  return 'the connection failed';
}

/** The person's claims through the provider's mapping (dotted paths), checked and typed. */
function mapClaims(
  mapping: UpstreamClaimMapping,
  claims: Record<string, unknown>,
): Omit<UpstreamIdentity, 'issuer' | 'amr' | 'acr'> {
  const paths = { ...DEFAULT_MAPPING, ...mapping };
  const subject = claimAt(claims, paths.subject);
  // A number is accepted as a subject (GitHub's user ids are); it is linked by its decimal string.
  const subjectText =
    typeof subject === 'string'
      ? subject
      : typeof subject === 'number' && Number.isSafeInteger(subject)
        ? String(subject)
        : undefined;
  if (subjectText === undefined || subjectText.length === 0) {
    throw new UpstreamError('invalid-response', 'the answer names no subject');
  }
  if (subjectText.length > MAX_SUBJECT_LENGTH) {
    throw new UpstreamError('invalid-response', 'the subject is too long');
  }
  return {
    subject: subjectText,
    username: stringOrNull(claimAt(claims, paths.username)),
    email: stringOrNull(claimAt(claims, paths.email)),
    // Only a JSON `true`: "true", 1 or an absent claim is not a verified address.
    emailVerified: claimAt(claims, paths.emailVerified) === true,
    name: stringOrNull(claimAt(claims, paths.name)),
  };
}

/** A dotted path into nested objects, own properties only (no `__proto__` or `constructor`). */
function claimAt(claims: Record<string, unknown>, path: string): unknown {
  let current: unknown = claims;
  for (const part of path.split('.')) {
    if (!isObject(current) || !Object.hasOwn(current, part)) return undefined;
    current = current[part];
  }
  return current;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' && value.length > 0 ? value : null;
}

function stringList(value: unknown): string[] | null {
  return Array.isArray(value) && value.every((item) => typeof item === 'string') ? [...value] : null;
}

function requireHttps(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new UpstreamError('invalid-response', `the provider has no ${what}`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UpstreamError('invalid-response', `the ${what} is not a URL`);
  }
  if (url.protocol !== 'https:') throw new UpstreamError('invalid-response', `the ${what} is not https`);
  return value;
}

function defaultAlgorithm(jwk: Record<string, unknown>): string {
  if (jwk.kty === 'RSA') return 'RS256';
  if (jwk.kty === 'OKP') return 'EdDSA';
  if (jwk.crv === 'P-384') return 'ES384';
  if (jwk.crv === 'P-521') return 'ES512';
  return 'ES256';
}

async function bodyBytes(body: client.FetchBody): Promise<Buffer | undefined> {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || body instanceof URLSearchParams) return Buffer.from(body.toString());
  if (body instanceof Uint8Array) return Buffer.from(body);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  return Buffer.from(await new Response(body).arrayBuffer());
}
