import type { User } from '../model.js';

/** The scope that makes an authorization request an OpenID Connect one (Core §3.1.2.1). */
export const OPENID_SCOPE = 'openid';
/** Core §11: asks for a refresh token that works while the user is away (docs/decisions.md, decision 17). */
export const OFFLINE_ACCESS_SCOPE = 'offline_access';

/**
 * Core §5.4's scope values for claims Gatehouse does not keep. Core §3.1.2.1: scope values not
 * understood SHOULD be ignored, so an OpenID request naming one is served without it (unless an
 * operator registered a scope of that name for the client, which then means what they said).
 */
export const UNSERVED_STANDARD_SCOPES: readonly string[] = ['address', 'phone'];

/** Whether a scope list makes the request, or what it was granted, an OpenID Connect one. */
export function isOpenIdScope(scope: readonly string[]): boolean {
  return scope.includes(OPENID_SCOPE);
}

/** The standard claims (Core §5.1) each scope value releases (Core §5.4), of those Gatehouse has. */
const SCOPE_CLAIMS: Readonly<Record<string, readonly string[]>> = {
  profile: ['name', 'preferred_username', 'updated_at'],
  email: ['email', 'email_verified'],
};

/** Every claim the provider may release: Discovery §3 `claims_supported`. */
export const SUPPORTED_CLAIMS: readonly string[] = [
  'sub',
  'iss',
  'aud',
  'exp',
  'iat',
  'auth_time',
  // Core §2, RFC 8176: what the sign-in was worth (decision 36).
  'acr',
  'amr',
  'nonce',
  'azp',
  'at_hash',
  'c_hash',
  'sid',
  ...Object.values(SCOPE_CLAIMS).flat(),
];

/** The user claims of Core §5.4's scope values that `scope` grants. */
export interface UserClaims {
  name?: string;
  preferred_username?: string;
  updated_at?: number;
  email?: string;
  email_verified?: boolean;
}

/**
 * The claims the granted scopes release about `user`, as UserInfo (Core §5.3.2) and an ID token
 * without an access token (Core §5.4) answer them. A claim without a value is left out, not sent as
 * null (Core §5.3.2). `email_verified` is true only once the user followed a link Gatehouse mailed to
 * the address (Core §5.1: "verified by the provider"; docs/decisions.md, decision 35).
 */
export function userClaims(user: User, scope: readonly string[]): UserClaims {
  const claims: UserClaims = {};
  if (scope.includes('profile')) {
    if (user.name !== null) claims.name = user.name;
    claims.preferred_username = user.username;
    claims.updated_at = user.updatedAt;
  }
  if (scope.includes('email') && user.email !== null) {
    claims.email = user.email;
    claims.email_verified = user.emailVerified;
  }
  return claims;
}
