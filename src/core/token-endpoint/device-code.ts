import { sha256 } from '../../shared/crypto.js';
import { userScope } from '../scopes/admin-scope.js';
import { SLOW_DOWN_SECONDS } from '../device/device-authorization.js';
import {
  accessDenied,
  authorizationPending,
  expiredToken,
  invalidGrant,
  invalidRequest,
  slowDown,
} from '../errors.js';
import { DEVICE_CODE_GRANT_TYPE } from '../model.js';
import { isOpenIdScope } from '../scopes/claims.js';
import { issuesRefreshToken } from '../tokens/token-endpoint-id-token.js';
import { scopeForResources, urisOf } from '../scopes/resources.js';
import type { GrantHandler } from './grant-handler.js';
import { liveGrant } from '../grants/live-grant.js';

const ALREADY_USED = 'the device code was already used';

/**
 * RFC 8628 §3.4-§3.5: the device polls with its device code until the user has decided. Every poll
 * is recorded in one statement of the shared store, so the interval holds across processes: a poll
 * sooner than the interval after the last one answers slow_down and adds five seconds to it, for
 * this and every later poll (§3.5). Approved, the code is consumed in one statement (of concurrent
 * polls exactly one gets tokens; the others invalid_grant), and the tokens live under the grant the
 * user's consent made, for the scope and lifetime they chose.
 */
export const deviceCodeGrant = {
  grantType: DEVICE_CODE_GRANT_TYPE,
  // RFC 8628 §3.4: devices are mostly public clients; client_id names them (RFC 6749 §3.2.1).
  allowsPublicClients: true,
  async handle(
    { client, params, resources: resourceValues, dpop },
    { storage, issuer, idTokens, clock, resources },
  ) {
    const deviceCode = params.device_code;
    if (deviceCode === undefined || deviceCode === '') throw invalidRequest('device_code is required');
    const hash = sha256(deviceCode);
    const now = clock.now();
    const polled = await storage.deviceAuthorizations.poll(hash, client.id, now, SLOW_DOWN_SECONDS);
    // Bound to its client (§3.4): another client's code is answered as an unknown one.
    if (polled === undefined) throw invalidGrant('unknown device_code');
    const { authorization, tooSoon } = polled;
    if (authorization.consumedAt !== null) throw invalidGrant(ALREADY_USED);
    if (authorization.expiresAt <= now) throw expiredToken();
    if (authorization.status === 'denied') throw accessDenied('the user denied the request');
    if (authorization.status === 'pending') {
      throw tooSoon ? slowDown(authorization.interval) : authorizationPending();
    }
    if (authorization.grantId === null || authorization.userId === null) {
      throw new Error('an approved device authorization names its grant and user');
    }

    // RFC 8707 §2.2, as for a code: the token may be for some of the resources the request named,
    // never another; its scope is what those offer of what the user allowed.
    const targets = await resources.narrow(resourceValues, authorization.resources);
    // Decision 29: a user who lost the administrator role since approving gets no `admin`.
    const scope = await userScope(
      storage,
      authorization.userId,
      scopeForResources(undefined, authorization.scope, targets),
    );
    const grant = await liveGrant(storage, authorization.grantId, now);
    const consumed = await storage.deviceAuthorizations.consume(hash, client.id, now);
    if (consumed === undefined) throw invalidGrant(ALREADY_USED);

    const tokens = {
      client,
      subject: grant.userId,
      scope,
      resources: urisOf(targets),
      grant,
      refresh: { scope: consumed.scope, resources: consumed.resources },
      // RFC 9449 §5: bound to the proof's key, the access token and a public client's refresh token.
      ...(dpop === undefined ? {} : { dpopJkt: dpop.jkt }),
    };
    // RFC 9470 §4 (decision 36): the access token says when and how the approving user signed in.
    const signIn =
      consumed.authTime === null
        ? undefined
        : {
            authTime: consumed.authTime,
            sid: consumed.sid,
            acr: consumed.acr ?? null,
            amr: consumed.amr ?? null,
          };
    if (!isOpenIdScope(consumed.scope) || consumed.authTime === null || consumed.sid === null) {
      return issuer.issue({
        ...tokens,
        withRefreshToken: client.grantTypes.includes('refresh_token'),
        ...(signIn === undefined ? {} : { authentication: signIn }),
      });
    }
    // OpenID Connect: an ID token beside the access token, as the code grant gives (Core §3.1.3.3),
    // for the sign-in that approved the request; no nonce (the device request has none), and a
    // refresh token only with offline_access (docs/decisions.md, decision 17).
    const authentication = {
      authTime: consumed.authTime,
      sid: consumed.sid,
      acr: consumed.acr ?? null,
      amr: consumed.amr ?? null,
    };
    const response = await issuer.issue({
      ...tokens,
      withRefreshToken: issuesRefreshToken(client, consumed.scope),
      authentication,
    });
    response.id_token = await idTokens.issue({
      client,
      userId: grant.userId,
      scope: consumed.scope,
      ...authentication,
      accessToken: response.access_token,
      now,
    });
    return response;
  },
} satisfies GrantHandler;
