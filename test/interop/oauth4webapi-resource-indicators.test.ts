import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oauth from 'oauth4webapi';
import type { User } from '../../src/core/model.js';
import { backends } from '../helpers/backends.js';
import {
  pushedAuthorizationUrl,
  registerLibraryClient,
  signInAndAllow,
  startLibraryServer,
  type LibraryServer,
} from '../helpers/oauth4webapi.js';

// oauth4webapi (panva) as the client of RFC 8707 resource indicators, and as the resource server that
// checks the tokens: `resource` pushed with the authorization request (RFC 9126) and sent again at the
// token endpoint, then narrowed on refresh; the library's own RFC 9068 validation
// (validateJwtAccessToken) accepting the token as the resource it names and refusing it as another;
// client_credentials with `resource`; and invalid_target reaching the library as the error it is.

const REDIRECT = 'https://rp.example/cb';
const ORDERS = 'https://orders.example/api';
const BILLING = 'https://billing.example/api';

for (const backend of backends()) {
  describe(`interop: oauth4webapi with resource indicators (${backend})`, () => {
    let lib: LibraryServer;
    let as: oauth.AuthorizationServer;
    let alice: { user: User; password: string };
    let client: oauth.Client;
    let authentication: oauth.ClientAuth;
    const options = () => lib.options();

    before(async () => {
      lib = await startLibraryServer(backend, { algorithm: 'oauth2' });
      as = lib.as;
      alice = await lib.server.user();
      const { resources } = lib.server.gatehouse.engine;
      await resources.create({ uri: ORDERS, scopes: ['orders'] });
      await resources.create({ uri: BILLING, scopes: ['billing'] });
      ({ client, authentication } = await registerLibraryClient(lib.server, {
        name: 'oauth4webapi resources',
        redirect_uris: [REDIRECT],
        grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
        scopes: ['orders', 'billing'],
      }));
    });
    after(async () => {
      await lib?.close();
    });

    /** What a resource server does with oauth4webapi: validate the bearer token as `audience`. */
    function validateAs(audience: string, accessToken: string): Promise<oauth.JWTAccessTokenClaims> {
      const request = new Request(`${audience}/things`, {
        headers: { authorization: `Bearer ${accessToken}` },
      });
      return oauth.validateJwtAccessToken(as, request, audience, options());
    }

    it('code flow for two resources, the token for one, refreshed for the other; validated by the library as each', async () => {
      const verifier = oauth.generateRandomCodeVerifier();
      const state = oauth.generateRandomState();
      const parameters = new URLSearchParams({
        response_type: 'code',
        redirect_uri: REDIRECT,
        scope: 'orders billing',
        state,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      });
      parameters.append('resource', ORDERS);
      parameters.append('resource', BILLING);
      const pushed = await oauth.processPushedAuthorizationResponse(
        as,
        client,
        await oauth.pushedAuthorizationRequest(as, client, authentication, parameters, options()),
      );
      const authorizationUrl = pushedAuthorizationUrl(as, client.client_id, pushed.request_uri);
      // RFC 9207: the library checks iss in the response against the metadata.
      const callback = oauth.validateAuthResponse(
        as,
        client,
        await signInAndAllow(lib.server, alice, authorizationUrl, ['orders', 'billing']),
        state,
      );
      const tokens = await oauth.processAuthorizationCodeResponse(
        as,
        client,
        await oauth.authorizationCodeGrantRequest(as, client, authentication, callback, REDIRECT, verifier, {
          ...options(),
          additionalParameters: { resource: ORDERS },
        }),
      );
      const claims = await validateAs(ORDERS, tokens.access_token);
      assert.equal(claims.aud, ORDERS, 'narrowed to the one resource asked for at the token endpoint');
      assert.equal(claims.sub, alice.user.id);
      await assert.rejects(validateAs(BILLING, tokens.access_token), (error: unknown) => {
        assert.ok(error instanceof oauth.OperationProcessingError, String(error));
        assert.match(error.message, /aud/);
        return true;
      });

      // A refresh may name the other resource the grant was for (RFC 8707 §2.2), never a new one.
      assert.ok(tokens.refresh_token);
      const refreshed = await oauth.processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(as, client, authentication, tokens.refresh_token, {
          ...options(),
          additionalParameters: { resource: BILLING, scope: 'billing' },
        }),
      );
      assert.equal((await validateAs(BILLING, refreshed.access_token)).aud, BILLING);
      assert.equal(refreshed.scope, 'billing');
      assert.ok(refreshed.refresh_token);
      const widened = await oauth.refreshTokenGrantRequest(
        as,
        client,
        authentication,
        refreshed.refresh_token,
        {
          ...options(),
          additionalParameters: { resource: 'https://elsewhere.example/api' },
        },
      );
      await assert.rejects(oauth.processRefreshTokenResponse(as, client, widened), (error: unknown) => {
        assert.ok(error instanceof oauth.ResponseBodyError);
        assert.equal(error.status, 400);
        assert.equal(error.error, 'invalid_target');
        return true;
      });
    });

    it('client_credentials for a resource: aud is the resource; a scope it does not offer is invalid_target', async () => {
      const tokens = await oauth.processClientCredentialsResponse(
        as,
        client,
        await oauth.clientCredentialsGrantRequest(
          as,
          client,
          authentication,
          { resource: BILLING, scope: 'billing' },
          options(),
        ),
      );
      const claims = await validateAs(BILLING, tokens.access_token);
      assert.equal(claims.aud, BILLING);
      assert.equal(claims.client_id, client.client_id);

      const refused = await oauth.clientCredentialsGrantRequest(
        as,
        client,
        authentication,
        { resource: BILLING, scope: 'orders' },
        options(),
      );
      await assert.rejects(oauth.processClientCredentialsResponse(as, client, refused), (error: unknown) => {
        assert.ok(error instanceof oauth.ResponseBodyError);
        assert.equal(error.error, 'invalid_target');
        return true;
      });
    });
  });
}
