import type { AuditLog } from '../audit/audit-log.js';
import type { AccessTokenValidator } from '../tokens/access-token-validation.js';
import type { Clock } from '../../shared/clock.js';
import type { DpopProof } from '../tokens/dpop.js';
import type { Client, GrantType } from '../model.js';
import type { IdTokenIssuer } from '../tokens/id-token.js';
import type { Storage } from '../ports.js';
import type { MfaPolicy } from '../users/second-factor-policy.js';
import type { ResourceTargets } from '../scopes/resources.js';
import type { TokenIssuer, TokenResponse } from '../tokens/token-issuer.js';

export interface TokenRequest {
  client: Client;
  /** Form parameters, each present at most once (the HTTP layer rejects repeats), but `resource`. */
  params: Readonly<Record<string, string | undefined>>;
  /** Every `resource` value sent (RFC 8707 §2: the one parameter that may repeat); empty for none. */
  resources: readonly string[];
  /** Every `audience` value sent (RFC 8693 §2.1, repeatable); absent or empty for none. */
  audiences?: readonly string[];
  /** The address the request came from (behind a trusted proxy, the one it reports). */
  address: string;
  /** The request's DPoP proof, verified (RFC 9449 §5); undefined when it sent none. */
  dpop: DpopProof | undefined;
}

export interface GrantPolicy {
  refreshReuseGraceSeconds: number;
  passwordFailuresPerUsername: number;
  /** Failed passwords per source address across user names (the per-(user name, source) count aside). */
  passwordFailuresPerSource: number;
  passwordFailureWindowSeconds: number;
  accessTokenTtl: number;
  refreshTokenTtl: number;
  /** RFC 6749 §4.3 for clients without a secret; off unless the operator turns it on. */
  allowPublicPasswordGrant?: boolean;
  /** GATEHOUSE_REQUIRE_MFA: who the password grant refuses, being unable to ask for a second factor. */
  requireMfa?: MfaPolicy;
}

export interface GrantContext {
  storage: Storage;
  issuer: TokenIssuer;
  /** ID tokens for grants whose scope has `openid` (OpenID Connect Core §3.1.3.3, §12.2). */
  idTokens: Pick<IdTokenIssuer, 'issue'>;
  clock: Clock;
  policy: GrantPolicy;
  /** The registered resources a `resource` parameter may name (RFC 8707). */
  resources: ResourceTargets;
  /** Exact validation of this server's access tokens: the subject and actor tokens of RFC 8693. */
  accessTokens: Pick<AccessTokenValidator, 'validate'>;
  /** Where the password grant's failed sign-ins are recorded (decision 41). */
  audit?: Pick<AuditLog, 'record'>;
}

/** One grant type's rules at the token endpoint (RFC 6749 §4, §6). */
export interface GrantHandler {
  readonly grantType: GrantType;
  /** Whether a public client (no secret) may use this grant. */
  readonly allowsPublicClients: boolean;
  handle(request: TokenRequest, context: GrantContext): Promise<TokenResponse>;
}
