import { randomUUID } from 'node:crypto';
import type { Clock } from '../shared/clock.js';
import { randomToken, sha256 } from '../shared/crypto.js';
import type { KeyRing } from './key-ring.js';
import { deriveMacKey, type MacAlgorithm } from './mac.js';
import type { Client, Grant, RefreshToken } from './model.js';
import type { RefreshTokenStore } from './ports.js';
import { audienceOf } from './resources.js';
import { formatScope } from './scopes.js';

/** The JSON body of a successful token response (RFC 6749 §5.1), plus MAC fields when they apply. */
export interface TokenResponse {
  access_token: string;
  token_type: 'bearer' | 'mac';
  expires_in: number;
  refresh_token?: string;
  scope?: string;
  /** OpenID Connect Core §3.1.3.3: when the grant's scope has `openid`. */
  id_token?: string;
  mac_key?: string;
  mac_algorithm?: MacAlgorithm;
  /** RFC 8693 §2.2.1: the type of the token issued by a token exchange. */
  issued_token_type?: string;
}

/**
 * RFC 8693 §4.1: the party acting for the subject; `act` nests the parties that acted before it,
 * the outermost being the current one.
 */
export interface ActorClaim {
  sub: string;
  client_id?: string;
  act?: ActorClaim;
}

export interface AccessTokenClaims {
  iss: string;
  sub: string;
  /** The resources the token is for (RFC 8707 §2), or the issuer when it names none (audienceOf). */
  aud: string | string[];
  client_id: string;
  scope: string;
  iat: number;
  exp: number;
  jti: string;
  /** Grant id: lets introspection see a revoked grant. Absent for client_credentials. */
  gid?: string;
  /** Present ("mac") only on MAC tokens, so a MAC token is never accepted as a bearer token. */
  token_type?: 'mac';
  /** RFC 8693 §4.1: on tokens issued by a token exchange, who acts for `sub`. */
  act?: ActorClaim;
}

export interface TokenIssuerOptions {
  keyRing: KeyRing;
  clock: Clock;
  refreshTokens: RefreshTokenStore;
  /** The issuer URL; also the audience of a token for no resource (RFC 9068 §2.2). */
  issuer: string;
  accessTokenTtl: number;
  refreshTokenTtl: number;
  macSecret: Buffer;
}

export interface IssueInput {
  client: Client;
  /** The user the token acts for; the client itself for client_credentials. */
  subject: string;
  scope: string[];
  /** The resources the access token is for (RFC 8707), canonical URIs; none: the issuer's own API. */
  resources?: readonly string[];
  /** The grant the tokens live under; absent for client_credentials. */
  grant?: Grant;
  withRefreshToken: boolean;
  /**
   * What the refresh token keeps when the access token was narrowed to less (RFC 8707 §2.2: the
   * refresh token stays bound to all of the grant's resources); the access token's by default.
   */
  refresh?: { scope: string[]; resources: readonly string[] };
  /** The sign-in the refresh token descends from (OpenID Connect Core §12.2); none outside OpenID Connect. */
  authentication?: RefreshAuthentication;
  /** RFC 8693 §4.1: the acting party, on a token issued by a token exchange. */
  act?: ActorClaim;
  /** The access token expires no later than this (a token exchange's subject token's `exp`). */
  notAfter?: number;
}

/** The sign-in a refresh token descends from: what its refreshes' ID tokens repeat (Core §12.2). */
export type RefreshAuthentication = Pick<RefreshToken, 'authTime' | 'sid'>;
const NO_AUTHENTICATION: RefreshAuthentication = { authTime: null, sid: null };

/** The earlier of two expiry times, where null means "never". */
export function earliest(a: number, b: number | null): number {
  return b === null ? a : Math.min(a, b);
}

export class TokenIssuer {
  constructor(private readonly options: TokenIssuerOptions) {}

  /** Issues an access token and, when asked, a refresh token bounded by the grant's lifetime. */
  async issue(input: IssueInput): Promise<TokenResponse> {
    const response = await this.issueAccessToken(input);
    if (input.withRefreshToken && input.grant !== undefined) {
      const kept = input.refresh ?? { scope: input.scope, resources: input.resources ?? [] };
      response.refresh_token = await this.issueRefreshToken(
        input.client,
        input.grant,
        kept.scope,
        input.authentication,
        kept.resources,
      );
    }
    return response;
  }

  /** Access token only: what the implicit flow and client_credentials return. No store write. */
  async issueAccessToken(input: IssueInput): Promise<TokenResponse> {
    const now = this.options.clock.now();
    const exp = earliest(
      earliest(now + this.options.accessTokenTtl, input.grant?.expiresAt ?? null),
      input.notAfter ?? null,
    );
    const jti = randomUUID();
    const claims: AccessTokenClaims = {
      iss: this.options.issuer,
      sub: input.subject,
      aud: audienceOf(input.resources ?? [], this.options.issuer),
      client_id: input.client.id,
      scope: formatScope(input.scope),
      iat: now,
      exp,
      jti,
    };
    if (input.grant !== undefined) claims.gid = input.grant.id;
    if (input.act !== undefined) claims.act = input.act;
    const mac = input.client.tokenType === 'mac';
    if (mac) claims.token_type = 'mac';
    const response: TokenResponse = {
      access_token: await this.options.keyRing.sign(claims as unknown as Record<string, unknown>),
      token_type: mac ? 'mac' : 'bearer',
      expires_in: Math.max(0, exp - now),
    };
    if (claims.scope !== '') response.scope = claims.scope;
    if (mac) {
      response.mac_key = deriveMacKey(this.options.macSecret, jti);
      response.mac_algorithm = 'hmac-sha-256';
    }
    return response;
  }

  async issueRefreshToken(
    client: Client,
    grant: Grant,
    scope: string[],
    authentication: RefreshAuthentication = NO_AUTHENTICATION,
    resources: readonly string[] = [],
  ): Promise<string> {
    const { token, record } = this.newRefreshToken(client, grant, scope, authentication, resources);
    await this.options.refreshTokens.insert(record);
    return token;
  }

  /**
   * A refresh token and the record to store for it, without storing it (rotation stores it
   * atomically). `authentication` is the sign-in it descends from (OpenID Connect Core §12.2);
   * `resources` those of the grant (RFC 8707 §2.2), which its refreshes may narrow.
   */
  newRefreshToken(
    client: Client,
    grant: Grant,
    scope: string[],
    authentication: RefreshAuthentication = NO_AUTHENTICATION,
    resources: readonly string[] = [],
  ): { token: string; record: RefreshToken } {
    const now = this.options.clock.now();
    const token = randomToken('rt_');
    return {
      token,
      record: {
        hash: sha256(token),
        grantId: grant.id,
        clientId: client.id,
        userId: grant.userId,
        scope,
        createdAt: now,
        expiresAt: earliest(now + this.options.refreshTokenTtl, grant.expiresAt),
        retiredAt: null,
        authTime: authentication.authTime,
        sid: authentication.sid,
        resources: [...resources],
      },
    };
  }
}
