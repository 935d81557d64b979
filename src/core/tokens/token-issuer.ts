import { randomUUID } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import { randomToken, sha256 } from '../../shared/crypto.js';
import type { KeyRing } from '../keys/key-ring.js';
import { deriveMacKey, type MacAlgorithm } from '../keys/mac.js';
import type { Client, Grant, RefreshToken } from '../model.js';
import type { RefreshTokenStore } from '../ports.js';
import { audienceOf } from '../scopes/resources.js';
import { formatScope } from '../scopes/scopes.js';

/** The JSON body of a successful token response (RFC 6749 §5.1), plus MAC fields when they apply. */
export interface TokenResponse {
  access_token: string;
  /** RFC 9449 §5: `DPoP` for a token bound to the key of the request's proof. */
  token_type: 'bearer' | 'mac' | 'DPoP';
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
  /**
   * RFC 9449 §6.1 (RFC 7800 §3.1): the DPoP key the token is bound to, as its RFC 7638 thumbprint;
   * only on DPoP tokens, which are refused as bearer tokens.
   */
  cnf?: { jkt: string };
  /** RFC 8693 §4.1: on tokens issued by a token exchange, who acts for `sub`. */
  act?: ActorClaim;
  /**
   * RFC 8693 §4.4: who may act for `sub` in a token exchange, by the actor's claims (`sub`,
   * `client_id`). Gatehouse issues none itself; one a token carries is honoured (decision 23).
   */
  may_act?: Readonly<Record<string, string>>;
  /**
   * RFC 9068 §2.2.1, RFC 9470 §4: when the user signed in and what that sign-in was worth, on tokens
   * issued on a user's sign-in (a code, the implicit flow, a device approval, and their refreshes,
   * which keep the original sign-in's); absent on others (client_credentials, the password grant).
   */
  auth_time?: number;
  acr?: string;
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
  /**
   * The sign-in the tokens descend from: the access token's `auth_time` and `acr` (RFC 9470 §4;
   * decision 36), and what the refresh token keeps for its refreshes (OpenID Connect Core §12.2).
   */
  authentication?: RefreshAuthentication;
  /**
   * RFC 9449: the thumbprint of the key of the request's DPoP proof. The access token is bound to it
   * (`cnf.jkt`, token_type DPoP), and a public client's refresh token too (§5).
   */
  dpopJkt?: string;
  /** RFC 8693 §4.1: the acting party, on a token issued by a token exchange. */
  act?: ActorClaim;
  /** The access token expires no later than this (a token exchange's subject token's `exp`). */
  notAfter?: number;
}

/**
 * The sign-in a refresh token descends from: what its refreshes' ID tokens (Core §12.2) and access
 * tokens (RFC 9470 §4, decision 36) repeat.
 */
export type RefreshAuthentication = Pick<RefreshToken, 'authTime' | 'sid' | 'acr' | 'amr'>;
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
      // RFC 9449 §5: a public client's refresh token is bound to the key, since nothing else
      // authenticates its holder; a confidential client's is bound by its authentication already.
      response.refresh_token = await this.issueRefreshToken(
        input.client,
        input.grant,
        kept.scope,
        input.authentication,
        kept.resources,
        input.client.isPublic ? (input.dpopJkt ?? null) : null,
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
    // RFC 9470 §4 (RFC 9068 §2.2.1): the sign-in's time and acr, for a resource server's step-up.
    const signIn = input.authentication;
    if (signIn?.authTime !== null && signIn?.authTime !== undefined) claims.auth_time = signIn.authTime;
    if (signIn?.acr !== null && signIn?.acr !== undefined) claims.acr = signIn.acr;
    if (input.act !== undefined) claims.act = input.act;
    // A DPoP-bound token is never a MAC token (the token endpoint refuses proofs from MAC clients).
    const dpop = input.dpopJkt !== undefined;
    const mac = !dpop && input.client.tokenType === 'mac';
    if (mac) claims.token_type = 'mac';
    if (dpop) claims.cnf = { jkt: input.dpopJkt as string };
    const response: TokenResponse = {
      access_token: await this.options.keyRing.sign(claims as unknown as Record<string, unknown>),
      token_type: dpop ? 'DPoP' : mac ? 'mac' : 'bearer',
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
    dpopJkt: string | null = null,
  ): Promise<string> {
    const { token, record } = this.newRefreshToken(client, grant, scope, authentication, resources, dpopJkt);
    await this.options.refreshTokens.insert(record);
    return token;
  }

  /**
   * A refresh token and the record to store for it, without storing it (rotation stores it
   * atomically). `authentication` is the sign-in it descends from (OpenID Connect Core §12.2);
   * `resources` those of the grant (RFC 8707 §2.2), which its refreshes may narrow; `dpopJkt` the DPoP
   * key it is bound to (RFC 9449 §5), or null.
   */
  newRefreshToken(
    client: Client,
    grant: Grant,
    scope: string[],
    authentication: RefreshAuthentication = NO_AUTHENTICATION,
    resources: readonly string[] = [],
    dpopJkt: string | null = null,
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
        // Absent when unknown, as the store reads a NULL (migration 0021).
        ...(authentication.acr === undefined || authentication.acr === null
          ? {}
          : { acr: authentication.acr }),
        ...(authentication.amr === undefined || authentication.amr === null
          ? {}
          : { amr: [...authentication.amr] }),
        resources: [...resources],
        dpopJkt,
      },
    };
  }
}
