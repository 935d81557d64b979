import type { AuthorizationCode, Client, RefreshToken } from '../model.js';
import { isOpenIdScope, OFFLINE_ACCESS_SCOPE } from '../scopes/claims.js';
import type { RefreshAuthentication } from './token-issuer.js';

/**
 * Whether the token endpoint issues a refresh token for a grant of `scope` (docs/decisions.md,
 * decision 17). Plain OAuth is unchanged: a client registered for the refresh_token grant gets one.
 * An OpenID Connect grant (`openid` in the scope) gets one only when `offline_access` was granted too
 * (Core §11: a refresh token that outlives the user's presence is what that scope asks for). The
 * authorization endpoint keeps it only where the user is asked (prompt=consent, or the consent page,
 * which lists it to be allowed or unticked), so a grant holds it only when the user allowed it.
 */
export function issuesRefreshToken(client: Client, scope: readonly string[]): boolean {
  if (!client.grantTypes.includes('refresh_token')) return false;
  return !isOpenIdScope(scope) || scope.includes(OFFLINE_ACCESS_SCOPE);
}

/**
 * The sign-in an OpenID Connect code records, for its ID token and the refresh tokens it leads to
 * (Core §12.2). The authorization endpoint records `auth_time` and `sid` with every code it issues
 * for an `openid` request; a code without them (one issued before it did) falls back to its own
 * issue time, which no sign-in came after, and to its grant's id as the session.
 */
export function authenticationOfCode(code: AuthorizationCode): SignInOfToken {
  return {
    authTime: code.authTime ?? code.createdAt,
    sid: code.sid ?? code.grantId,
    acr: code.acr ?? null,
    amr: code.amr ?? null,
  };
}

/** A sign-in as the token endpoint's ID tokens and refresh tokens repeat it (decision 36). */
export interface SignInOfToken {
  authTime: number;
  sid: string;
  acr: string | null;
  amr: string[] | null;
}

/**
 * The sign-in a code of a plain OAuth 2.0 request records (decision 36): its time, `acr` and `amr`
 * for the access tokens (RFC 9470 §4), no session (no ID token comes of it); none for a code issued
 * before the authorization endpoint recorded them.
 */
export function accessTokenSignInOfCode(code: AuthorizationCode): RefreshAuthentication | undefined {
  if (code.authTime === null) return undefined;
  return { authTime: code.authTime, sid: null, acr: code.acr ?? null, amr: code.amr ?? null };
}

/**
 * The sign-in behind a refresh token, when it has one: tokens from the code flow of an `openid`
 * request. Refresh tokens from the password grant, or from before OpenID Connect, have none, and
 * their refreshes return no ID token (Core §12.2 wants the original auth_time, which they lack).
 */
export function authenticationOfRefreshToken(token: RefreshToken): SignInOfToken | undefined {
  if (token.authTime === null || token.sid === null) return undefined;
  return { authTime: token.authTime, sid: token.sid, acr: token.acr ?? null, amr: token.amr ?? null };
}
