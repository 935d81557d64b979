import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oauth from 'oauth4webapi';
import type { User } from '../../src/core/model.js';
import { FormBrowser } from '../authorize/form-browser.js';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { trustingFetch } from '../helpers/trusting-fetch.js';
import { freePort } from '../ops/support/spawned-server.js';

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
    let server: TestServer;
    let issuer: URL;
    let https: ReturnType<typeof trustingFetch>;
    let as: oauth.AuthorizationServer;
    let alice: { user: User; password: string };
    let client: oauth.Client;
    let authentication: oauth.ClientAuth;
    const options = () => ({ [oauth.customFetch]: https.fetch });

    before(async () => {
      // The library requires the metadata's issuer to be the URL it was fetched from (RFC 8414 §3.3).
      const port = await freePort();
      issuer = new URL(`https://localhost:${port}`);
      server = await startTestServer(backend, { port, issuer: issuer.origin });
      https = trustingFetch(server.ca);
      alice = await server.user();
      const { resources } = server.gatehouse.engine;
      await resources.create({ uri: ORDERS, scopes: ['orders'] });
      await resources.create({ uri: BILLING, scopes: ['billing'] });
      const registered = await server.client({
        name: 'oauth4webapi resources',
        redirect_uris: [REDIRECT],
        grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
        scopes: ['orders', 'billing'],
      });
      client = { client_id: registered.client.id };
      authentication = oauth.ClientSecretBasic(registered.secret);
      as = await oauth.processDiscoveryResponse(
        issuer,
        await oauth.discoveryRequest(issuer, { ...options(), algorithm: 'oauth2' }),
      );
    });
    after(async () => {
      https?.close();
      await server?.close();
    });

    /** What a resource server does with oauth4webapi: validate the bearer token as `audience`. */
    function validateAs(audience: string, accessToken: string): Promise<oauth.JWTAccessTokenClaims> {
      const request = new Request(`${audience}/things`, {
        headers: { authorization: `Bearer ${accessToken}` },
      });
      return oauth.validateJwtAccessToken(as, request, audience, options());
    }

    /** Alice signs in and allows what was asked, by HTTP with a session as a browser would. */
    async function browse(authorizationUrl: URL, scope: string[]): Promise<URL> {
      const browser = new FormBrowser(server);
      const signInPage = await browser.get(authorizationUrl.pathname + authorizationUrl.search);
      assert.equal(signInPage.status, 200, signInPage.text.slice(0, 300));
      const signedIn = await browser.post('/sign-in', {
        csrf_token: FormBrowser.hidden(signInPage, 'csrf_token'),
        next: FormBrowser.hidden(signInPage, 'next'),
        username: alice.user.username,
        password: alice.password,
      });
      assert.equal(signedIn.status, 303);
      const consentPage = await browser.get(String(signedIn.headers.location));
      const allowed = await browser.post('/consent', {
        csrf_token: FormBrowser.hidden(consentPage, 'csrf_token'),
        request: FormBrowser.hidden(consentPage, 'request'),
        decision: 'allow',
        lifetime: '3600',
        scope,
      });
      assert.equal(allowed.status, 302, allowed.text.slice(0, 300));
      return new URL(String(allowed.headers.location));
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
      const authorizationUrl = new URL(String(as.authorization_endpoint));
      authorizationUrl.searchParams.set('client_id', client.client_id);
      authorizationUrl.searchParams.set('request_uri', pushed.request_uri);
      // RFC 9207: the library checks iss in the response against the metadata.
      const callback = oauth.validateAuthResponse(
        as,
        client,
        await browse(authorizationUrl, ['orders', 'billing']),
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
