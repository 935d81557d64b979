import { sha256 } from '../../shared/crypto.js';
import { userScope } from '../scopes/admin-scope.js';
import { invalidGrant, invalidRequest } from '../errors.js';
import { verifyCodeVerifier } from '../authorize/pkce.js';
import { scopeForResources, urisOf } from '../scopes/resources.js';
import { isOpenIdScope } from '../scopes/claims.js';
import {
  accessTokenSignInOfCode,
  authenticationOfCode,
  issuesRefreshToken,
} from '../tokens/token-endpoint-id-token.js';
import type { GrantHandler } from './grant-handler.js';
import { assertLiveGrant } from '../grants/live-grant.js';

const UNKNOWN_CODE = 'unknown authorization code';

/** RFC 6749 §4.1.3 with RFC 7636 PKCE and RFC 9700's replay rule. */
export const authorizationCodeGrant = {
  grantType: 'authorization_code',
  allowsPublicClients: true,
  async handle(
    { client, params, resources: resourceValues, dpop },
    { storage, issuer, idTokens, clock, resources },
  ) {
    const { code, redirect_uri: redirectUri, code_verifier: verifier } = params;
    if (code === undefined || code === '') throw invalidRequest('code is required');
    // Seed §4.2: redirect_uri is required and must equal the one used at the authorization endpoint.
    if (redirectUri === undefined) throw invalidRequest('redirect_uri is required');

    const hash = sha256(code);
    const found = await storage.codes.getWithGrant(hash);
    const now = clock.now();
    // RFC 6749 §4.1.3: the code is bound to its client. Checked first and answered exactly like an
    // unknown code, so another client learns nothing about it (not even that it is valid) and cannot
    // set off the replay rule below to revoke the owner's grant.
    if (found === undefined || found.code.clientId !== client.id) throw invalidGrant(UNKNOWN_CODE);
    const stored = found.code;
    if (stored.consumedAt !== null) {
      // RFC 6749 §4.1.2: a code used twice by its client revokes every token it issued.
      await storage.grants.revoke(stored.grantId, now);
      throw invalidGrant('authorization code already used; tokens issued from it are revoked');
    }
    // Validate everything before consuming, so a bad request changes nothing.
    if (stored.expiresAt <= now) throw invalidGrant('authorization code expired');
    if (stored.redirectUri !== redirectUri) {
      throw invalidGrant('redirect_uri does not match the authorization request');
    }
    if (stored.codeChallenge !== null) {
      // RFC 7636 §4.3: a challenge without a method is "plain". Never skip a stored challenge.
      const method = stored.codeChallengeMethod ?? 'plain';
      if (verifier === undefined) throw invalidGrant('code_verifier is required');
      if (!verifyCodeVerifier(verifier, stored.codeChallenge, method)) {
        throw invalidGrant('code_verifier does not match the code challenge');
      }
    } else if (verifier !== undefined) {
      // RFC 9700 §2.1.1: a verifier without a challenge is a downgrade attempt.
      throw invalidGrant('code_verifier sent but no code_challenge was used');
    } else if (client.isPublic) {
      throw invalidGrant('public clients must use PKCE');
    }
    // RFC 9449 §10: a code issued for a dpop_jkt is redeemed only with a proof made with that key.
    if (stored.dpopJkt !== null) {
      if (dpop === undefined) {
        throw invalidGrant(
          'this authorization code is bound to a DPoP key (dpop_jkt): send a DPoP proof made with it',
        );
      }
      if (dpop.jkt !== stored.dpopJkt) {
        throw invalidGrant(
          'the DPoP proof is not made with the key the authorization request named (dpop_jkt)',
        );
      }
    }

    // RFC 8707 §2.2: the token may be for some of the resources the authorization request named,
    // never another; by default for all of them. Its scope is what those resources offer of the code's.
    const targets = await resources.narrow(resourceValues, stored.resources);
    // Decision 29: a user who lost the administrator role since the consent gets no `admin`.
    const scope = await userScope(
      storage,
      stored.userId,
      scopeForResources(undefined, stored.scope, targets),
    );

    const grant = assertLiveGrant(found.grant, now);
    const consumed = await storage.codes.consume(hash, now);
    if (consumed === undefined) {
      // Lost the race to a concurrent redemption of the same code: that is a replay too.
      await storage.grants.revoke(stored.grantId, now);
      throw invalidGrant('authorization code already used; tokens issued from it are revoked');
    }
    // The refresh token keeps all of the code's scope and resources, whatever this token narrowed.
    const tokens = {
      client,
      subject: consumed.userId,
      scope,
      resources: urisOf(targets),
      grant,
      refresh: { scope: consumed.scope, resources: consumed.resources },
      // RFC 9449 §5: bound to the proof's key, the access token and a public client's refresh token.
      ...(dpop === undefined ? {} : { dpopJkt: dpop.jkt }),
    };
    if (!isOpenIdScope(consumed.scope)) {
      // RFC 9470 §4 (decision 36): the access token still says when and how the user signed in.
      const signIn = accessTokenSignInOfCode(consumed);
      return issuer.issue({
        ...tokens,
        withRefreshToken: client.grantTypes.includes('refresh_token'),
        ...(signIn === undefined ? {} : { authentication: signIn }),
      });
    }
    // OpenID Connect Core §3.1.3.3: an ID token beside the access token, with the nonce, auth_time and
    // sid the authorization endpoint recorded with the code; its refresh token carries the sign-in on.
    const authentication = authenticationOfCode(consumed);
    const response = await issuer.issue({
      ...tokens,
      withRefreshToken: issuesRefreshToken(client, consumed.scope),
      authentication,
    });
    response.id_token = await idTokens.issue({
      client,
      userId: consumed.userId,
      scope: consumed.scope,
      ...(consumed.nonce === null ? {} : { nonce: consumed.nonce }),
      ...authentication,
      // Core §3.1.3.6 makes at_hash optional here; sent so the relying party can bind the two.
      accessToken: response.access_token,
      now,
    });
    return response;
  },
} satisfies GrantHandler;
