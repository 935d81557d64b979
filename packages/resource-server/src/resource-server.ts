import type { JWTPayload } from 'jose';
import { JwksCache } from './jwks-cache.js';
import { JwtVerifier, type JwtVerification } from './jwt-verifier.js';
import {
  checkMacFreshness,
  macAlgorithmNamed,
  macOrigin,
  macReplay,
  macRequestTime,
  MemoryNonceStore,
  parseMacHeader,
  verifyBodyHash,
  verifyMacSignature,
  type NonceStore,
} from './mac.js';
import { DpopProofChecker, type DpopOptions } from './dpop.js';
import { nodeFetch, type FetchLike } from './node-fetch.js';
import { ProtectedResource, type BearerMethod } from './protected-resource.js';
import {
  checkTokenSyntax,
  extractCredential,
  isToken68,
  missingScopes,
  TokenError,
  userAuthenticationProblem,
  type AuthenticationRequirements,
} from './rfc6750.js';
import { presentationProblem, TOKEN_PRESENTATION_ERRORS } from './token-presentation.js';

export interface ResourceServerOptions {
  /** The authorization server's issuer URL: tokens must carry it as `iss`. */
  issuer: string;
  /**
   * Accepted `aud` values; Gatehouse's tokens are addressed to its issuer, the default. With
   * `resource` set, the audience is the resource and this option may only repeat it.
   */
  audience?: string | string[];
  /**
   * This service's resource identifier (RFC 8707, RFC 9728 §1.2), e.g. `https://mcp.example.com/mcp`:
   * an https URL without fragment or query (http only on a loopback host), used in the canonical form
   * Gatehouse gives resource URIs (lower-case host, no default port, no "/" after a bare origin), which
   * is what the `aud` of its tokens for this resource says. When set, a token is
   * accepted only if its `aud` is or contains it (a token asked for with `resource=` this URL), the
   * adapters publish RFC 9728 protected resource metadata at
   * `/.well-known/oauth-protected-resource` (and the path-inserted form of §3.1), and every Bearer
   * challenge names that document as `resource_metadata` (RFC 9728 §5.1).
   */
  resource?: string;
  /** `authorization_servers` in the metadata (RFC 9728 §2); default: the issuer. Needs `resource`. */
  authorizationServers?: string[];
  /** `scopes_supported` in the metadata: the scopes clients should ask for. Needs `resource`. */
  scopesSupported?: string[];
  /**
   * `bearer_methods_supported` in the metadata. Default: `header` and `body` (RFC 6750 §2.1 and §2.2,
   * the latter where the framework parses form bodies), and `query` when `allowQueryToken` is on.
   */
  bearerMethodsSupported?: BearerMethod[];
  /** `resource_name`: a name for people, e.g. on a consent page. Needs `resource`. */
  resourceName?: string;
  /** `resource_documentation`: a URL of documentation for developers. Needs `resource`. */
  resourceDocumentation?: string;
  /** `resource_policy_uri`. Needs `resource`. */
  resourcePolicyUri?: string;
  /** `resource_tos_uri`. Needs `resource`. */
  resourceTosUri?: string;
  /** Default: `<issuer>/jwks`. */
  jwksUri?: string;
  /**
   * The only signature algorithms accepted (RFC 8725 §3.1): a token cannot choose its own.
   * Default: ES256, EdDSA and RS256, the algorithms Gatehouse signs with (RFC 9068 §2.1 requires
   * RS256). Any of ES256/384/512, RS256/384/512, PS256/384/512, EdDSA (Ed25519) may be listed.
   */
  algorithms?: string[];
  /** The realm of WWW-Authenticate challenges. */
  realm?: string;
  /**
   * Confirm every token by RFC 7662 introspection with this resource server's own client
   * credentials (revocation seen at once, at one round trip per request). MAC tokens always need it:
   * introspection is how their key is obtained (the client needs scope `mac-keys` at Gatehouse).
   */
  introspection?: { clientId: string; clientSecret: string; endpoint?: string };
  /** RFC 6750 §2.3; off by default. */
  allowQueryToken?: boolean;
  /** Certificate authorities to trust for the JWKS and introspection (a private CA, a dev certificate). */
  ca?: string | Buffer | Array<string | Buffer>;
  /** Use this fetch instead (then `ca` is ignored). */
  fetch?: FetchLike;
  /** Seconds of clock skew tolerated on exp/iat. Default 5. */
  clockToleranceSeconds?: number;
  /** Seconds before an unknown `kid` may trigger another JWKS fetch. Default 5. */
  jwksCooldownSeconds?: number;
  mac?: {
    /**
     * This service's public origin as clients address it, e.g. `https://api.example.com` (or several,
     * when it answers under more than one name): MAC signatures cover host and port, and they are
     * checked against these, never against the request's Host header, which the sender chooses.
     * Required to accept MAC tokens; without it MAC requests are refused.
     */
    origin?: string | string[];
    /** How far a MAC request's time may be from this server's clock, either way. Default 300. */
    timestampWindowSeconds?: number;
    /** Where seen nonces are kept; the default is a MemoryNonceStore in this process. */
    nonceStore?: NonceStore;
  };
  /**
   * RFC 9449 DPoP: accept `Authorization: DPoP` with a proof (set `origin`). Whether or not this is
   * set, a DPoP-bound token (one with `cnf.jkt`) is never accepted as a bearer token.
   */
  dpop?: DpopOptions;
  /**
   * How many validated tokens to remember (default 10,000; 0 turns it off). A client presents the
   * same access token on many requests; a token seen before is not verified again, only checked for
   * expiry. Exact revocation still needs `introspection`, which is never cached.
   */
  verifiedTokenCacheSize?: number;
  /** The current time in epoch seconds; for tests. */
  now?: () => number;
}

/** What the resource server knows about the request, whatever the framework. */
export interface RequestInfo {
  method: string;
  /** Path and query exactly as sent (MAC signs it). */
  url: string;
  /** The Host header's value, possibly with a port. */
  host: string;
  protocol: 'http' | 'https';
  authorization: string | undefined;
  /** The parsed body when it was application/x-www-form-urlencoded. */
  formBody?: Record<string, unknown>;
  query?: Record<string, unknown>;
  /** The raw body, when the framework kept it (MAC bodyhash). */
  rawBody?: Buffer;
  /** False when the request has no body (no Content-Length or Transfer-Encoding): then it is empty. */
  hasBody?: boolean;
  /** Every `DPoP` header field value, as sent (RFC 9449 §4.3 item 1: a second one is refused). */
  dpop?: string[];
}

/** A token that passed every check, as attached to the request. */
export interface VerifiedToken {
  token: string;
  /** `dpop`: a DPoP-bound token, presented with a proof of its key (RFC 9449 §7). */
  tokenType: 'bearer' | 'mac' | 'dpop';
  claims: JWTPayload & { client_id: string; scope?: string; jti: string; sub: string };
  scopes: string[];
  subject: string;
  clientId: string;
  /** From introspection, when it ran and the token acts for a user. */
  username?: string;
  /** RFC 9449: the thumbprint of the key a DPoP-bound token is bound to (`cnf.jkt`). */
  jkt?: string;
  /** RFC 9449 §9: the nonce the adapters send back in `DPoP-Nonce`, when nonces are on. */
  dpopNonce?: string;
}

/** Introspection could not be completed; the adapters answer 503 rather than let the request through. */
export class IntrospectionUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IntrospectionUnavailableError';
  }
}

interface IntrospectionResult {
  active: boolean;
  username?: string;
  token_type?: string;
  mac_key?: string;
  mac_algorithm?: string;
  jti?: string;
}

const DEFAULT_ALGORITHMS = ['ES256', 'EdDSA', 'RS256'];

/**
 * A resource server for tokens from one Gatehouse (or any RFC 9068 issuer): local JWT validation
 * against the issuer's JWKS (kept in memory, refetched when an unknown kid appears), optional
 * introspection, MAC request signatures, and required scopes per route.
 */
export class ResourceServer {
  readonly realm: string;
  /** The RFC 9728 metadata and where it lives, when the `resource` option is set. */
  readonly protectedResource: ProtectedResource | undefined;
  private readonly jwks: JwksCache;
  private readonly jwtVerifier: JwtVerifier;
  private readonly fetch: FetchLike;
  private readonly closeFetch: () => void;
  private readonly nonces: NonceStore;
  private readonly macOrigins: { host: string; port: string }[];
  private readonly dpop: DpopProofChecker | undefined;
  private readonly dpopOrigins: string[];
  private readonly verified = new Map<string, { token: VerifiedToken; exp: number }>();

  constructor(private readonly options: ResourceServerOptions) {
    const issuer = options.issuer.replace(/\/$/, '');
    this.realm = options.realm ?? 'api';
    this.protectedResource = protectedResourceFor(options, issuer);
    this.jwtVerifier = new JwtVerifier({
      algorithms: options.algorithms ?? DEFAULT_ALGORITHMS,
      issuer,
      audiences: audiencesFor(options, issuer, this.protectedResource),
      clockToleranceSeconds: options.clockToleranceSeconds ?? 5,
    });
    if (options.fetch !== undefined) {
      this.fetch = options.fetch;
      this.closeFetch = () => undefined;
    } else {
      const node = nodeFetch(options.ca);
      this.fetch = node.fetch;
      this.closeFetch = node.close;
    }
    this.jwks = new JwksCache({
      uri: new URL(options.jwksUri ?? `${issuer}/jwks`).href,
      fetch: this.fetch,
      cooldownSeconds: options.jwksCooldownSeconds ?? 5,
    });
    this.nonces = options.mac?.nonceStore ?? new MemoryNonceStore();
    // Parsed now, so that a malformed origin fails at start-up rather than on the first MAC request.
    this.macOrigins = [options.mac?.origin ?? []].flat().map(macOrigin);
    // Without an origin of its own, DPoP takes the resource identifier's (RFC 9728), when set.
    const resourceOrigin = options.resource === undefined ? [] : [new URL(options.resource).origin];
    this.dpopOrigins = [options.dpop?.origin ?? resourceOrigin].flat().map(dpopOrigin);
    this.dpop =
      options.dpop === undefined
        ? undefined
        : new DpopProofChecker(options.dpop, options.clockToleranceSeconds ?? 5);
  }

  /** The algorithms of the DPoP challenge (RFC 9449 §7.1 `algs`); undefined when DPoP is not accepted. */
  get dpopAlgorithms(): readonly string[] | undefined {
    return this.dpopOrigins.length === 0 ? undefined : this.dpop?.algorithms;
  }

  private now(): number {
    return this.options.now?.() ?? Math.floor(Date.now() / 1000);
  }

  /**
   * Authenticates the request and checks that its token has every scope in `requiredScopes` and, when
   * `requirements` are given, that the sign-in behind it meets them (RFC 9470 §3: its `acr` one of
   * those listed, its `auth_time` no older than `maxAge`), else insufficient_user_authentication.
   */
  async authorize(
    request: RequestInfo,
    requiredScopes: readonly string[] = [],
    requirements: AuthenticationRequirements = {},
  ): Promise<VerifiedToken> {
    const credential = extractCredential({
      authorization: request.authorization,
      formBody: request.formBody,
      method: request.method,
      query: request.query,
      allowQuery: this.options.allowQueryToken ?? false,
      // The token68 scan of a header token waits until the token is refused (a JWT that verifies has
      // the syntax): a token's length of regular expression work saved per request (issue 17).
      deferTokenSyntax: true,
    });
    if (credential === undefined) throw new TokenError(undefined, 'an access token is required');
    // A bearer token whose key is in hand is checked without a promise hop (issue 17): only the
    // schemes and options that wait for something (a proof's replay store, introspection) await.
    let verified: VerifiedToken;
    try {
      const pending =
        credential.scheme === 'mac'
          ? this.verifyMacRequest(request, credential.macHeader ?? '')
          : credential.scheme === 'dpop'
            ? this.verifyDpopRequest(request, credential.token)
            : this.verifyBearer(credential.token);
      verified = pending instanceof Promise ? await pending : pending;
    } catch (error) {
      // A malformed header is invalid_request (RFC 6750 §3.1), whatever else its token failed.
      checkTokenSyntax(credential);
      throw error;
    }
    const missing =
      requiredScopes.length === 0 ? [] : missingScopes(verified.scopes.join(' '), requiredScopes);
    if (missing.length > 0) {
      throw new TokenError('insufficient_scope', `the access token lacks the scope ${missing.join(' ')}`, {
        scheme: credential.scheme,
        scope: requiredScopes.join(' '),
      });
    }
    if (requirements.acr !== undefined || requirements.maxAge !== undefined) {
      const problem = userAuthenticationProblem(verified.claims, requirements, this.now(), credential.scheme);
      if (problem !== undefined) throw problem;
    }
    return verified;
  }

  private verifyBearer(token: string): VerifiedToken | Promise<VerifiedToken> {
    const verified = this.verifyJwt(token, 'bearer');
    return verified instanceof Promise
      ? verified.then((value) => this.acceptBearer(token, value))
      : this.acceptBearer(token, verified);
  }

  /** A signed token presented as Bearer: refused if it is bound to a key or a MAC token, else introspected if configured. */
  private acceptBearer(token: string, verified: VerifiedToken): VerifiedToken | Promise<VerifiedToken> {
    // RFC 9449 §7.2: a bound token is worthless without its key; as a bearer token it is refused.
    const refused = presentationProblem('bearer', {
      mac: verified.claims.token_type === 'mac',
      bound: verified.claims.cnf !== undefined,
      jkt: undefined,
    });
    if (refused !== undefined) throw new TokenError('invalid_token', refused);
    if (this.options.dpop?.required === true) {
      throw new TokenError('invalid_token', 'this resource takes only DPoP-bound access tokens');
    }
    if (this.options.introspection !== undefined) return this.introspected(token, verified);
    return verified;
  }

  private async introspected(token: string, verified: VerifiedToken): Promise<VerifiedToken> {
    const result = await this.introspect(token);
    if (!result.active) throw new TokenError('invalid_token', 'the access token is no longer active');
    if (result.username !== undefined) verified.username = result.username;
    return verified;
  }

  /** RFC 9449 §7.1: a DPoP-bound token with the request's proof of its key. */
  private async verifyDpopRequest(request: RequestInfo, token: string): Promise<VerifiedToken> {
    const fail = (description: string) => new TokenError('invalid_token', description, { scheme: 'dpop' });
    if (this.dpop === undefined || this.dpopOrigins.length === 0) {
      throw fail('DPoP tokens need the dpop.origin option, which is not set');
    }
    const jwt = this.verifyJwt(token, 'dpop');
    const verified = jwt instanceof Promise ? await jwt : jwt;
    const jkt = confirmationKey(verified.claims.cnf);
    // This path judges a token by its `cnf.jkt` alone (its token_type unread), as it always has: a
    // token without one is refused as not DPoP-bound.
    const refused = presentationProblem('dpop', { mac: false, bound: jkt !== undefined, jkt });
    if (refused !== undefined || jkt === undefined)
      throw fail(refused ?? TOKEN_PRESENTATION_ERRORS.unboundAsDpop);
    const path = request.url.split('?', 1)[0] ?? '/';
    await this.dpop.check({
      proofs: request.dpop ?? [],
      method: request.method,
      urls: this.dpopOrigins.map((origin) => `${origin}${path}`),
      accessToken: token,
      jkt,
      now: this.now(),
    });
    if (this.options.introspection !== undefined) {
      const result = await this.introspect(token);
      if (!result.active) throw fail('the access token is no longer active');
      if (result.username !== undefined) verified.username = result.username;
    }
    verified.jkt = jkt;
    if (this.options.dpop?.nonce !== undefined) {
      const nonce = await this.dpop.nonce();
      if (nonce !== undefined) verified.dpopNonce = nonce;
    }
    return verified;
  }

  private async verifyMacRequest(request: RequestInfo, header: string): Promise<VerifiedToken> {
    const credentials = parseMacHeader(header);
    const verified = await this.verifyJwt(credentials.id, 'mac');
    if (verified.claims.token_type !== 'mac') {
      throw new TokenError('invalid_token', 'this token is not a MAC token', { scheme: 'mac' });
    }
    if (this.options.introspection === undefined) {
      throw new TokenError('invalid_token', 'MAC tokens need introspection, which is not configured', {
        scheme: 'mac',
      });
    }
    if (this.macOrigins.length === 0) {
      throw new TokenError('invalid_token', 'MAC tokens need the mac.origin option, which is not set', {
        scheme: 'mac',
      });
    }
    const result = await this.introspect(credentials.id);
    if (!result.active) {
      throw new TokenError('invalid_token', 'the access token is no longer active', { scheme: 'mac' });
    }
    if (result.mac_key === undefined) {
      throw new TokenError('invalid_token', 'the authorization server gave no MAC key for this token', {
        scheme: 'mac',
      });
    }
    // The algorithm is the token's, as the authorization server tells it; Gatehouse issues
    // hmac-sha-256 and always says so.
    const algorithm = macAlgorithmNamed(result.mac_algorithm ?? 'hmac-sha-256');
    if (algorithm === undefined) {
      throw new TokenError('invalid_token', 'the token has an unsupported MAC algorithm', { scheme: 'mac' });
    }
    const signed = (origin: { host: string; port: string }) => {
      try {
        verifyMacSignature(
          credentials,
          { method: request.method, uri: request.url, ...origin },
          result.mac_key ?? '',
          algorithm,
        );
        return true;
      } catch {
        return false;
      }
    };
    if (!this.macOrigins.some(signed)) {
      throw new TokenError('invalid_token', 'the MAC does not match the request', { scheme: 'mac' });
    }
    verifyBodyHash(
      credentials,
      algorithm,
      request.rawBody ?? (request.hasBody === false ? Buffer.alloc(0) : undefined),
    );
    const now = this.now();
    const window = this.options.mac?.timestampWindowSeconds ?? 300;
    const time = macRequestTime(credentials, Number(verified.claims.iat));
    checkMacFreshness(time, now, window);
    if (!(await this.nonces.remember(verified.claims.jti, credentials.nonce, time + window, now))) {
      throw macReplay();
    }
    if (result.username !== undefined) verified.username = result.username;
    return verified;
  }

  /** A value, not a promise, when the key is in hand (the common case). */
  private verifyJwt(
    token: string,
    scheme: 'bearer' | 'mac' | 'dpop',
  ): VerifiedToken | Promise<VerifiedToken> {
    // Off: not even the look-up, which hashes the whole token.
    if ((this.options.verifiedTokenCacheSize ?? 10_000) <= 0) return this.verifyJwtSignature(token, scheme);
    const key = `${scheme} ${token}`;
    const cached = this.verified.get(key);
    if (cached !== undefined) {
      if (cached.exp + (this.options.clockToleranceSeconds ?? 5) > this.now()) {
        return { ...cached.token, claims: { ...cached.token.claims }, scopes: [...cached.token.scopes] };
      }
      this.verified.delete(key);
    }
    const verified = this.verifyJwtSignature(token, scheme);
    if (!(verified instanceof Promise)) {
      this.remember(key, verified);
      return verified;
    }
    return verified.then((value) => {
      this.remember(key, value);
      return value;
    });
  }

  private remember(key: string, token: VerifiedToken): void {
    const size = this.options.verifiedTokenCacheSize ?? 10_000;
    if (size <= 0 || typeof token.claims.exp !== 'number') return;
    // Oldest first out: a Map keeps insertion order.
    while (this.verified.size >= size) {
      const oldest = this.verified.keys().next().value;
      if (oldest === undefined) break;
      this.verified.delete(oldest);
    }
    this.verified.set(key, { token: { ...token, scopes: [...token.scopes] }, exp: token.claims.exp });
  }

  /** A value, not a promise, when the key is in hand: the common path takes no extra promise hop. */
  private verifyJwtSignature(
    token: string,
    scheme: 'bearer' | 'mac' | 'dpop',
  ): VerifiedToken | Promise<VerifiedToken> {
    const now = Math.floor(this.now());
    const result = this.jwtVerifier.verify(token, this.jwks.current(), now);
    // A token that cannot be a JWT (not even its syntax) causes no fetch, however its header reads.
    if (result.valid || result.reason !== 'unknown-key' || !isToken68(token)) {
      return this.verifiedToken(token, scheme, result);
    }
    // A key rotated in at the issuer since the set was fetched (or the first token seen).
    return this.jwks
      .refreshForUnknownKey()
      .then((keys) => this.verifiedToken(token, scheme, this.jwtVerifier.verify(token, keys, now)));
  }

  private verifiedToken(
    token: string,
    scheme: 'bearer' | 'mac' | 'dpop',
    result: JwtVerification,
  ): VerifiedToken {
    if (!result.valid) throw new TokenError('invalid_token', describeFailure(result), { scheme });
    const claims = result.claims as VerifiedToken['claims'];
    return {
      token,
      tokenType: scheme,
      claims,
      scopes: (claims.scope ?? '').split(' ').filter((scope) => scope !== ''),
      subject: claims.sub,
      clientId: claims.client_id,
    };
  }

  private async introspect(token: string): Promise<IntrospectionResult> {
    const config = this.options.introspection;
    if (config === undefined) throw new Error('introspection is not configured');
    const endpoint = config.endpoint ?? `${this.options.issuer.replace(/\/$/, '')}/introspect`;
    // RFC 6749 §2.3.1: id and secret are form-encoded before they are joined for HTTP Basic.
    const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
    const basic = Buffer.from(`${encode(config.clientId)}:${encode(config.clientSecret)}`).toString('base64');
    let response: Response;
    try {
      response = await this.fetch(endpoint, {
        method: 'POST',
        headers: {
          authorization: `Basic ${basic}`,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
        signal: AbortSignal.timeout(5000),
      });
    } catch {
      throw new IntrospectionUnavailableError('the introspection endpoint cannot be reached');
    }
    if (response.status !== 200) {
      throw new IntrospectionUnavailableError(`introspection answered ${response.status}`);
    }
    const body = (await response.json()) as IntrospectionResult;
    if (typeof body.active !== 'boolean') throw new IntrospectionUnavailableError('malformed introspection');
    return body;
  }

  /** Releases the keep-alive connections to the authorization server. */
  close(): void {
    this.closeFetch();
  }
}

/** RFC 9449 §6.1: the thumbprint a token's `cnf` confirms, when it is a DPoP confirmation. */
function confirmationKey(cnf: unknown): string | undefined {
  if (typeof cnf !== 'object' || cnf === null) return undefined;
  const jkt = (cnf as { jkt?: unknown }).jkt;
  return typeof jkt === 'string' && jkt !== '' ? jkt : undefined;
}

/** An origin (scheme, host, port) as a proof's `htu` starts with it; refused at start-up when malformed. */
function dpopOrigin(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`dpop.origin must be an absolute URL such as https://api.example.com, got ${value}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new Error(`dpop.origin must be an http(s) origin, got ${value}`);
  }
  // Its path, if any, is where this service is mounted under the origin.
  return `${url.origin}${url.pathname.replace(/\/$/, '')}`;
}

/** The RFC 9728 options, checked together; metadata options without `resource` are a mistake. */
function protectedResourceFor(options: ResourceServerOptions, issuer: string): ProtectedResource | undefined {
  if (options.resource === undefined) {
    const stray = (
      [
        'authorizationServers',
        'scopesSupported',
        'bearerMethodsSupported',
        'resourceName',
        'resourceDocumentation',
        'resourcePolicyUri',
        'resourceTosUri',
      ] as const
    ).filter((name) => options[name] !== undefined);
    if (stray.length > 0) throw new Error(`${stray.join(', ')} describe a resource: set resource too`);
    return undefined;
  }
  return new ProtectedResource({
    resource: options.resource,
    authorizationServers: options.authorizationServers ?? [issuer],
    scopesSupported: options.scopesSupported,
    bearerMethodsSupported:
      options.bearerMethodsSupported ??
      (options.allowQueryToken === true ? ['header', 'body', 'query'] : ['header', 'body']),
    resourceName: options.resourceName,
    resourceDocumentation: options.resourceDocumentation,
    resourcePolicyUri: options.resourcePolicyUri,
    resourceTosUri: options.resourceTosUri,
  });
}

/**
 * The `aud` values a token may carry. A resource server with a resource identifier accepts only
 * tokens issued for it (RFC 8707 §2: the authorization server audience-restricts them; RFC 9068 §4:
 * the resource server checks `aud` names it), so an `audience` option beside it may only repeat it:
 * anything else would let a token for another resource, or an unrestricted one, through.
 */
function audiencesFor(
  options: ResourceServerOptions,
  issuer: string,
  resource: ProtectedResource | undefined,
): string[] {
  const audience = options.audience === undefined ? undefined : [options.audience].flat();
  if (resource === undefined) return audience ?? [issuer];
  if (
    audience !== undefined &&
    audience.some((value) => value !== options.resource && value !== resource.resource)
  ) {
    throw new Error(
      'with resource set, tokens must be addressed to it: leave audience out (it defaults to the resource)',
    );
  }
  return [resource.resource];
}

function describeFailure(result: JwtVerification & { valid: false }): string {
  switch (result.reason) {
    case 'expired':
      return 'the access token has expired';
    case 'wrong-audience':
      return 'the access token was not issued for this resource (aud)';
    case 'malformed-claims':
      return 'the access token has malformed claims';
    default:
      return 'the access token is not valid';
  }
}

/** Host and port as MAC signs them; the port defaults from the scheme. */
export function splitHost(hostHeader: string, protocol: 'http' | 'https'): { host: string; port: string } {
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(hostHeader.trim());
  const host = (match?.[1] ?? hostHeader).toLowerCase();
  return { host, port: match?.[2] ?? (protocol === 'https' ? '443' : '80') };
}
