import { nodeFetch, type FetchLike } from './node-fetch.js';
import { sha256Base64url } from './sha256.js';

/** RFC 8693 §2.1 and §3: the grant type, and the one token type exchanged. */
export const TOKEN_EXCHANGE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

/**
 * Adds a client's credentials to a token request: sets headers (HTTP Basic) and/or form parameters
 * (`client_assertion` for private_key_jwt, RFC 7523 §2.2). Called once per request sent.
 */
export type ClientAuthenticator = (request: {
  headers: Record<string, string>;
  body: URLSearchParams;
  tokenEndpoint: string;
}) => void | Promise<void>;

export interface TokenExchangerOptions {
  /** The authorization server; the token endpoint is `<issuer>/token` unless `tokenEndpoint` says. */
  issuer?: string;
  tokenEndpoint?: string;
  /** This service's client, registered at the authorization server for token exchange. */
  clientId: string;
  /** Its secret, sent with HTTP Basic (RFC 6749 §2.3.1); or `clientAuthentication` instead. */
  clientSecret?: string;
  clientAuthentication?: ClientAuthenticator;
  /** Use this fetch (then `ca` is ignored). */
  fetch?: FetchLike;
  /** Certificate authorities to trust for the token endpoint (a private CA, a dev certificate). */
  ca?: string | Buffer | Array<string | Buffer>;
  /** Most exchanged tokens kept; the least recently used goes first. Default 1,000; `0`: no cache. */
  cacheSize?: number;
  /** A cached token is given out until this many seconds before it expires. Default 30. */
  refreshBeforeExpirySeconds?: number;
  /** Milliseconds since the epoch; `Date.now` by default (a test gives its own clock). */
  now?: () => number;
}

export interface ExchangeOptions {
  /** RFC 8707 / RFC 8693 §2.1 `resource`: the URI(s) of the service to call. */
  resource?: string | string[];
  /** RFC 8693 §2.1 `audience`: the logical name(s) of the service to call. */
  audience?: string | string[];
  /** The scope wanted, space-separated or as a list; the subject token's by default. */
  scope?: string | string[];
}

/** A token from an exchange, as the token endpoint answered it (RFC 8693 §2.2.1). */
export interface ExchangedToken {
  accessToken: string;
  tokenType: string;
  /** Milliseconds since the epoch, by the exchanger's clock. */
  expiresAt: number;
  scope?: string;
  issuedTokenType: string;
}

/** The token endpoint refused (an RFC 6749 §5.2 error), or could not be reached or understood. */
export class TokenExchangeError extends Error {
  constructor(
    /** The RFC 6749 §5.2 `error`, or `unavailable` when no OAuth answer came back. */
    readonly code: string,
    readonly description: string,
    readonly status?: number,
  ) {
    super(`token exchange failed: ${code}${description === '' ? '' : ` (${description})`}`);
    this.name = 'TokenExchangeError';
  }
}

const DEFAULT_CACHE_SIZE = 1000;
const DEFAULT_REFRESH_BEFORE_EXPIRY_SECONDS = 30;

function list(value: string | string[] | undefined): string[] {
  return value === undefined ? [] : [value].flat().filter((item) => item !== '');
}

function scopeOf(value: string | string[] | undefined): string | undefined {
  const names = [value ?? []]
    .flat()
    .flatMap((item) => item.split(' '))
    .filter((name) => name !== '');
  return names.length === 0 ? undefined : [...new Set(names)].sort().join(' ');
}

/** RFC 6749 §2.3.1: id and secret are form-encoded before they are joined for HTTP Basic. */
export function clientSecretBasic(clientId: string, clientSecret: string): ClientAuthenticator {
  const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
  const basic = Buffer.from(`${encode(clientId)}:${encode(clientSecret)}`).toString('base64');
  return ({ headers }) => {
    headers.authorization = `Basic ${basic}`;
  };
}

/**
 * The helper a service uses to call the next one on its caller's behalf (RFC 8693): it exchanges
 * the access token it received for one aimed at the next service, with at most the scope it needs.
 * Tokens are cached in memory per (incoming token, resource, audience, scope) until shortly before
 * they expire, the least recently used dropped first; concurrent identical exchanges share one
 * request. Incoming tokens are kept only as SHA-256 hashes (the cache key). Framework-agnostic.
 */
export class TokenExchanger {
  private readonly tokenEndpoint: string;
  private readonly authenticate: ClientAuthenticator;
  private readonly fetch: FetchLike;
  private readonly closeFetch: () => void;
  private readonly cacheSize: number;
  private readonly refreshBeforeMs: number;
  private readonly now: () => number;
  private readonly cache = new Map<string, ExchangedToken>();
  private readonly pending = new Map<string, Promise<ExchangedToken>>();

  constructor(private readonly options: TokenExchangerOptions) {
    const endpoint =
      options.tokenEndpoint ??
      (options.issuer === undefined ? undefined : `${options.issuer.replace(/\/$/, '')}/token`);
    if (endpoint === undefined) throw new TypeError('createTokenExchanger needs issuer or tokenEndpoint');
    this.tokenEndpoint = endpoint;
    if (options.clientAuthentication !== undefined) this.authenticate = options.clientAuthentication;
    else if (options.clientSecret !== undefined) {
      this.authenticate = clientSecretBasic(options.clientId, options.clientSecret);
    } else throw new TypeError('createTokenExchanger needs clientSecret or clientAuthentication');
    if (options.fetch !== undefined) {
      this.fetch = options.fetch;
      this.closeFetch = () => undefined;
    } else {
      const node = nodeFetch(options.ca);
      this.fetch = node.fetch;
      this.closeFetch = () => node.close();
    }
    this.cacheSize = Math.max(0, options.cacheSize ?? DEFAULT_CACHE_SIZE);
    this.refreshBeforeMs =
      1000 * (options.refreshBeforeExpirySeconds ?? DEFAULT_REFRESH_BEFORE_EXPIRY_SECONDS);
    this.now = options.now ?? Date.now;
  }

  /** The access token for the next service: `exchangeToken(...).accessToken`. */
  async exchange(incomingToken: string, options: ExchangeOptions = {}): Promise<string> {
    return (await this.exchangeToken(incomingToken, options)).accessToken;
  }

  /** The exchanged token with its type, expiry and scope, from the cache when it is fresh there. */
  async exchangeToken(incomingToken: string, options: ExchangeOptions = {}): Promise<ExchangedToken> {
    if (incomingToken === '') throw new TypeError('exchange needs the incoming access token');
    const resources = list(options.resource);
    const audiences = list(options.audience);
    const scope = scopeOf(options.scope);
    const key = JSON.stringify([sha256Base64url(incomingToken), resources, audiences, scope ?? null]);
    const cached = this.cache.get(key);
    if (cached !== undefined) {
      this.cache.delete(key);
      if (cached.expiresAt - this.refreshBeforeMs > this.now()) {
        this.cache.set(key, cached); // most recently used last
        return cached;
      }
    }
    const inFlight = this.pending.get(key);
    if (inFlight !== undefined) return inFlight;
    const request = this.request(incomingToken, resources, audiences, scope).finally(() =>
      this.pending.delete(key),
    );
    this.pending.set(key, request);
    const token = await request;
    this.remember(key, token);
    return token;
  }

  /** Forgets every cached token (after a key compromise, say). */
  clear(): void {
    this.cache.clear();
  }

  /** The number of tokens cached now. */
  get size(): number {
    return this.cache.size;
  }

  /** Closes the keep-alive connections of the built-in fetch. */
  close(): void {
    this.closeFetch();
  }

  private remember(key: string, token: ExchangedToken): void {
    if (this.cacheSize === 0 || token.expiresAt - this.refreshBeforeMs <= this.now()) return;
    this.cache.set(key, token);
    while (this.cache.size > this.cacheSize) {
      const oldest = this.cache.keys().next().value;
      if (oldest === undefined) break;
      this.cache.delete(oldest);
    }
  }

  private async request(
    subjectToken: string,
    resources: string[],
    audiences: string[],
    scope: string | undefined,
  ): Promise<ExchangedToken> {
    const body = new URLSearchParams({
      grant_type: TOKEN_EXCHANGE_GRANT_TYPE,
      subject_token: subjectToken,
      subject_token_type: ACCESS_TOKEN_TYPE,
      requested_token_type: ACCESS_TOKEN_TYPE,
    });
    for (const resource of resources) body.append('resource', resource);
    for (const audience of audiences) body.append('audience', audience);
    if (scope !== undefined) body.set('scope', scope);
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    };
    await this.authenticate({ headers, body, tokenEndpoint: this.tokenEndpoint });
    if (!body.has('client_id') && headers.authorization === undefined)
      body.set('client_id', this.options.clientId);
    const sentAt = this.now();
    let response: Response;
    let answer: Record<string, unknown>;
    try {
      response = await this.fetch(this.tokenEndpoint, { method: 'POST', headers, body: body.toString() });
      answer = (await response.json()) as Record<string, unknown>;
    } catch {
      throw new TokenExchangeError('unavailable', 'the token endpoint cannot be reached or answered no JSON');
    }
    if (typeof answer !== 'object' || answer === null) {
      throw new TokenExchangeError(
        'unavailable',
        'the token endpoint answered no JSON object',
        response.status,
      );
    }
    if (response.status !== 200) {
      const code = typeof answer.error === 'string' ? answer.error : 'unavailable';
      const description = typeof answer.error_description === 'string' ? answer.error_description : '';
      throw new TokenExchangeError(code, description, response.status);
    }
    const { access_token, token_type, expires_in, scope: granted, issued_token_type } = answer;
    if (
      typeof access_token !== 'string' ||
      access_token === '' ||
      typeof token_type !== 'string' ||
      (issued_token_type !== undefined && typeof issued_token_type !== 'string') ||
      (expires_in !== undefined && typeof expires_in !== 'number') ||
      (granted !== undefined && typeof granted !== 'string')
    ) {
      throw new TokenExchangeError(
        'unavailable',
        'the token endpoint answered a malformed token response',
        200,
      );
    }
    const token: ExchangedToken = {
      accessToken: access_token,
      tokenType: token_type,
      // Without expires_in (RFC 6749 §5.1: RECOMMENDED) the token is used once and not cached.
      expiresAt: sentAt + 1000 * (expires_in ?? 0),
      issuedTokenType: issued_token_type ?? ACCESS_TOKEN_TYPE,
    };
    if (granted !== undefined) token.scope = granted;
    return token;
  }
}

/** A TokenExchanger (see there). */
export function createTokenExchanger(options: TokenExchangerOptions): TokenExchanger {
  return new TokenExchanger(options);
}
