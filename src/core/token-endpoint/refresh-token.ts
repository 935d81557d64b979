import { sha256 } from '../../shared/crypto.js';
import { adminOnly, currentScopeOf } from '../scopes/admin-scope.js';
import { invalidGrant, invalidRequest, invalidScope } from '../errors.js';
import { scopeForResources, urisOf } from '../scopes/resources.js';
import { isSubset, parseScope } from '../scopes/scopes.js';
import { isOpenIdScope } from '../scopes/claims.js';
import { authenticationOfRefreshToken } from '../tokens/token-endpoint-id-token.js';
import type { GrantHandler } from './grant-handler.js';
import { liveGrant } from '../grants/live-grant.js';

/**
 * RFC 6749 §6 with rotation (RFC 9700 §4.14). Concurrency policy: of concurrent refreshes with one
 * token exactly one wins; a retired token presented again by its client within the grace window is
 * refused but leaves the grant alive (a retry, two tabs); after the window, reuse revokes the grant.
 */
export const refreshTokenGrant = {
  grantType: 'refresh_token',
  allowsPublicClients: true,
  async handle(
    { client, params, resources: resourceValues, dpop },
    { storage, issuer, idTokens, clock, policy, resources },
  ) {
    const presented = params.refresh_token;
    if (presented === undefined || presented === '') throw invalidRequest('refresh_token is required');
    const hash = sha256(presented);
    const stored = await storage.refreshTokens.get(hash);
    const now = clock.now();
    // RFC 6749 §10.4: a refresh token is bound to the client it was issued to.
    if (stored === undefined || stored.clientId !== client.id) throw invalidGrant('unknown refresh token');
    if (stored.retiredAt !== null) {
      if (now - stored.retiredAt > policy.refreshReuseGraceSeconds) {
        await storage.grants.revoke(stored.grantId, now);
        throw invalidGrant('refresh token reused; the grant is revoked');
      }
      throw invalidGrant('refresh token already used');
    }
    if (stored.expiresAt !== null && stored.expiresAt <= now) throw invalidGrant('refresh token expired');
    // RFC 9449 §5: a bound refresh token (a public client's) is used only with a proof of its key.
    if (stored.dpopJkt !== null) {
      if (dpop === undefined) {
        throw invalidGrant('this refresh token is bound to a DPoP key: send a DPoP proof made with it');
      }
      if (dpop.jkt !== stored.dpopJkt) {
        throw invalidGrant('the DPoP proof is not made with the key this refresh token is bound to');
      }
    }

    // RFC 6749 §6: the scope may narrow the original grant but never widen it.
    const requested = parseScope(params.scope);
    const asked = requested === undefined || requested.length === 0 ? undefined : requested;
    if (asked !== undefined && !isSubset(asked, stored.scope)) {
      throw invalidScope('scope exceeds the original grant');
    }
    // RFC 6749 §3.3: the server issues only scopes the client may have now; what the operator has
    // removed from the client since the grant was made is dropped, never refreshed.
    // Decision 29: likewise `admin`, once the user is no longer an administrator. The new refresh
    // token goes without it too: giving the role back does not revive it (a new consent does).
    const registered = stored.scope.filter((name) => client.scopes.includes(name));
    const allowed = await currentScopeOf(storage, stored.userId, registered);
    if (allowed.length === 0 && registered.length > 0) throw adminOnly();
    if (asked !== undefined && !isSubset(asked, allowed)) {
      throw invalidScope('scope is no longer registered for this client');
    }
    if (allowed.length === 0 && stored.scope.length > 0) {
      throw invalidScope('none of the granted scopes is registered for this client any more');
    }
    // RFC 8707 §2.2: this access token may be for some of the grant's resources, never another;
    // by default for all of them. Its scope is what those resources offer.
    const targets = await resources.narrow(resourceValues, stored.resources);
    const scope = scopeForResources(asked, allowed, targets);

    const grant = await liveGrant(storage, stored.grantId, now);
    // The new refresh token keeps the original scope (RFC 6749 §6) and resources (RFC 8707 §2.2),
    // whatever this request narrowed, less what the client may no longer have, the sign-in it
    // descends from (Core §12.2) and the DPoP key it is bound to (RFC 9449 §5).
    const next = issuer.newRefreshToken(client, grant, allowed, stored, stored.resources, stored.dpopJkt);
    const retired = await storage.refreshTokens.rotate(hash, next.record, now);
    if (retired === undefined) throw invalidGrant('refresh token already used');
    const response = await issuer.issueAccessToken({
      client,
      subject: stored.userId,
      scope,
      resources: urisOf(targets),
      grant,
      withRefreshToken: false,
      // RFC 9470 §4 (decision 36): the original sign-in's auth_time and acr, never a newer one's.
      authentication: stored,
      // RFC 9449 §5: the new access token is bound to this request's proof, whatever the refresh
      // token is bound to (a confidential client's is not: its new key may be another).
      ...(dpop === undefined ? {} : { dpopJkt: dpop.jkt }),
    });
    response.refresh_token = next.token;
    const authentication = authenticationOfRefreshToken(stored);
    if (isOpenIdScope(scope) && authentication !== undefined) {
      // OpenID Connect Core §12.2: a new ID token for the same user and client, with the original
      // auth_time and sid, and no nonce (none was sent with this request).
      response.id_token = await idTokens.issue({
        client,
        userId: stored.userId,
        scope,
        ...authentication,
        accessToken: response.access_token,
        now,
      });
    }
    return response;
  },
} satisfies GrantHandler;
