import type { Clock } from '../../shared/clock.js';
import { sha256 } from '../../shared/crypto.js';
import {
  AccessTokenValidator,
  InvalidAccessTokenError,
  type ValidAccessToken,
} from './access-token-validation.js';
import { isGrantLive } from '../grants/liveness.js';
import { deriveMacKey, type MacAlgorithm } from '../keys/mac.js';
import type { Client } from '../model.js';
import type { Storage } from '../ports.js';
import { formatScope } from '../scopes/scopes.js';
import type { AccessTokenClaims, ActorClaim } from './token-issuer.js';

/**
 * The client scope that lets a confidential client (a resource server) receive the MAC key of MAC
 * tokens issued to other clients, which it needs to check their request signatures. Only a client
 * an operator registered with this scope gets keys it was not itself issued.
 */
export const MAC_KEY_SCOPE = 'mac-keys';

/** RFC 7662 §2.2 response; `mac_key`/`mac_algorithm` only for MAC tokens and entitled callers. */
export interface IntrospectionResponse {
  active: boolean;
  scope?: string;
  client_id?: string;
  username?: string;
  /** RFC 9449 §6.2: `DPoP` for a DPoP-bound token. */
  token_type?: 'bearer' | 'mac' | 'DPoP';
  exp?: number;
  iat?: number;
  sub?: string;
  /** RFC 7662 §2.2: the resources the token is for (RFC 8707), or the issuer. */
  aud?: string | string[];
  iss?: string;
  jti?: string;
  /** RFC 9449 §6.2 (RFC 7800 §3.1): the key a DPoP-bound token is bound to. */
  cnf?: { jkt: string };
  mac_key?: string;
  mac_algorithm?: MacAlgorithm;
  /** RFC 8693 §4.1, §2.2 of RFC 7662: who acts for `sub`, on a token issued by a token exchange. */
  act?: ActorClaim;
  /**
   * RFC 9470 §4 (RFC 7662 §2.2 allows any claim): when the user signed in and what that sign-in was
   * worth, for a token issued on a user's sign-in (decision 36).
   */
  auth_time?: number;
  acr?: string;
}

export interface TokenIntrospectorOptions {
  validator: AccessTokenValidator;
  storage: Pick<Storage, 'refreshTokens' | 'grants' | 'users'>;
  clock: Clock;
  issuer: string;
  macSecret: Buffer;
}

const INACTIVE: IntrospectionResponse = Object.freeze({ active: false });

export class TokenIntrospector {
  /** Answers that depend on the token's claims alone, by claims object (see accessToken). */
  private readonly claimsOnly = new WeakMap<AccessTokenClaims, IntrospectionResponse>();

  constructor(private readonly options: TokenIntrospectorOptions) {}

  /**
   * RFC 7662 §2.1: the hint only orders the look-ups; an unknown, expired, revoked or foreign
   * token is simply `{"active": false}` (§2.2), never an error that would tell why.
   */
  async introspect(token: string, hint: string | undefined, caller: Client): Promise<IntrospectionResponse> {
    const lookups =
      hint === 'refresh_token'
        ? [() => this.refreshToken(token), () => this.accessToken(token, caller)]
        : [() => this.accessToken(token, caller), () => this.refreshToken(token)];
    for (const lookup of lookups) {
      const found = await lookup();
      if (found !== undefined) return found;
    }
    return INACTIVE;
  }

  private async accessToken(token: string, caller: Client): Promise<IntrospectionResponse | undefined> {
    if (token.split('.').length !== 3) return undefined;
    try {
      // Resource servers introspect the tokens issued for them: any audience is answered.
      const { claims, tokenType } = await this.options.validator.validate(token, 'any');
      // Without a user to name or a MAC key to hand out, the answer is the claims' alone: made once
      // per verified claims object, which the validator's cache hands out again for the same token.
      if (claims.gid === undefined && tokenType !== 'mac') {
        let shared = this.claimsOnly.get(claims);
        if (shared === undefined) {
          shared = Object.freeze(describe(claims, tokenType));
          this.claimsOnly.set(claims, shared);
        }
        return shared;
      }
      const response = describe(claims, tokenType);
      if (claims.gid !== undefined) {
        const user = await this.options.storage.users.get(claims.sub);
        if (user !== undefined) response.username = user.username;
      }
      // A MAC token's key is a shared secret: it goes to the client that holds the token anyway,
      // or to a confidential resource server the operator entitled with MAC_KEY_SCOPE.
      if (
        tokenType === 'mac' &&
        !caller.isPublic &&
        (caller.id === claims.client_id || caller.scopes.includes(MAC_KEY_SCOPE))
      ) {
        response.mac_key = deriveMacKey(this.options.macSecret, claims.jti);
        response.mac_algorithm = 'hmac-sha-256';
      }
      return response;
    } catch (error) {
      if (error instanceof InvalidAccessTokenError) return INACTIVE;
      throw error;
    }
  }

  private async refreshToken(token: string): Promise<IntrospectionResponse | undefined> {
    const { storage, clock, issuer } = this.options;
    const stored = await storage.refreshTokens.get(sha256(token));
    if (stored === undefined) return undefined;
    const now = clock.now();
    if (stored.retiredAt !== null || (stored.expiresAt !== null && stored.expiresAt <= now)) return INACTIVE;
    const grant = await storage.grants.get(stored.grantId);
    if (grant === undefined || !isGrantLive(grant, now)) return INACTIVE;
    const user = await storage.users.get(stored.userId);
    // token_type is left out: RFC 7662 defines it by RFC 6749 §7.1 access-token types, which a
    // refresh token has none of.
    const response: IntrospectionResponse = {
      active: true,
      scope: formatScope(stored.scope),
      client_id: stored.clientId,
      iat: stored.createdAt,
      sub: stored.userId,
      iss: issuer,
    };
    if (stored.expiresAt !== null) response.exp = stored.expiresAt;
    // RFC 9470 §4: the sign-in the refresh token descends from (decision 36).
    if (stored.authTime !== null) response.auth_time = stored.authTime;
    if (stored.acr !== undefined && stored.acr !== null) response.acr = stored.acr;
    if (user !== undefined) response.username = user.username;
    return response;
  }
}

/** RFC 7662 §2.2: what an active access token's claims say. */
function describe(
  claims: AccessTokenClaims,
  tokenType: ValidAccessToken['tokenType'],
): IntrospectionResponse {
  const response: IntrospectionResponse = {
    active: true,
    scope: claims.scope,
    client_id: claims.client_id,
    token_type: tokenType === 'dpop' ? 'DPoP' : tokenType,
    exp: claims.exp,
    iat: claims.iat,
    sub: claims.sub,
    aud: claims.aud,
    iss: claims.iss,
    jti: claims.jti,
  };
  // RFC 9449 §6.2: a resource server learns the key to check the request's proof against.
  if (claims.cnf !== undefined) response.cnf = { jkt: claims.cnf.jkt };
  if (claims.act !== undefined) response.act = claims.act;
  // RFC 9470 §4: a resource server that introspects can step up as one that reads the JWT.
  if (claims.auth_time !== undefined) response.auth_time = claims.auth_time;
  if (claims.acr !== undefined) response.acr = claims.acr;
  return response;
}

/** Serialised answers, by answer object: a shared one (INACTIVE, a claims-only one) is written once. */
const serialised = new WeakMap<IntrospectionResponse, string>();

/**
 * The response body: `response` as JSON (RFC 7662 §2.2). Only a frozen answer's JSON is kept: it cannot
 * change after it is written, and the shared answers are exactly the frozen ones.
 */
export function introspectionJson(response: IntrospectionResponse): string {
  if (!Object.isFrozen(response)) return JSON.stringify(response);
  let json = serialised.get(response);
  if (json === undefined) {
    json = JSON.stringify(response);
    serialised.set(response, json);
  }
  return json;
}
