import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oauth from 'oauth4webapi';
import type { User } from '../../src/core/model.js';
import { FormBrowser } from '../authorize/form-browser.js';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { trustingFetch } from '../helpers/trusting-fetch.js';
import { freePort } from '../ops/support/spawned-server.js';

// oauth4webapi (panva), used directly, as the client of RFC 9126 pushed authorization requests: RFC 8414
// discovery, pushedAuthorizationRequest and processPushedAuthorizationResponse (the library checks the
// 201 and the response's members), the authorization URL with client_id and request_uri only, the
// browser step by HTTP with a signed-in session (FormBrowser), validateAuthResponse, and the code
// exchange with PKCE, for a confidential client (client_secret_basic) and a public one.

const REDIRECT = 'https://rp.example/cb';

for (const backend of backends()) {
  describe(`interop: oauth4webapi pushes its authorization requests (${backend})`, () => {
    let server: TestServer;
    let issuer: URL;
    let https: ReturnType<typeof trustingFetch>;
    let as: oauth.AuthorizationServer;
    let alice: { user: User; password: string };
    const options = () => ({ [oauth.customFetch]: https.fetch });

    before(async () => {
      // The library requires the metadata's issuer to be the URL it was fetched from (RFC 8414 §3.3).
      const port = await freePort();
      issuer = new URL(`https://localhost:${port}`);
      server = await startTestServer(backend, { port, issuer: issuer.origin });
      https = trustingFetch(server.ca);
      alice = await server.user();
      as = await oauth.processDiscoveryResponse(
        issuer,
        await oauth.discoveryRequest(issuer, { ...options(), algorithm: 'oauth2' }),
      );
    });
    after(async () => {
      https?.close();
      await server?.close();
    });

    /** The user's part, as a browser signed in as alice would do it: sign-in, then Allow. */
    async function browse(authorizationUrl: URL): Promise<URL> {
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
        scope: ['read'],
      });
      assert.equal(allowed.status, 302, allowed.text.slice(0, 300));
      return new URL(String(allowed.headers.location));
    }

    for (const kind of ['confidential (client_secret_basic)', 'public (none)'] as const) {
      it(`${kind}: pushedAuthorizationRequest, the authorization URL, validateAuthResponse, the code exchange`, async () => {
        assert.equal(as.pushed_authorization_request_endpoint, `${issuer.origin}/par`);
        const isPublic = kind.startsWith('public');
        const registered = await server.client({
          name: `oauth4webapi ${kind}`,
          redirect_uris: [REDIRECT],
          scopes: ['read'],
          public: isPublic,
          require_pushed_authorization_requests: true,
        });
        const client: oauth.Client = { client_id: registered.client.id };
        const authentication = isPublic ? oauth.None() : oauth.ClientSecretBasic(registered.secret);
        const verifier = oauth.generateRandomCodeVerifier();
        const state = oauth.generateRandomState();
        const parameters = new URLSearchParams({
          response_type: 'code',
          redirect_uri: REDIRECT,
          scope: 'read',
          state,
          code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
        });
        const pushed = await oauth.processPushedAuthorizationResponse(
          as,
          client,
          await oauth.pushedAuthorizationRequest(as, client, authentication, parameters, options()),
        );
        assert.match(pushed.request_uri, /^urn:ietf:params:oauth:request_uri:/);
        assert.equal(pushed.expires_in, 60);

        const authorizationUrl = new URL(String(as.authorization_endpoint));
        authorizationUrl.searchParams.set('client_id', client.client_id);
        authorizationUrl.searchParams.set('request_uri', pushed.request_uri);
        const callback = oauth.validateAuthResponse(as, client, await browse(authorizationUrl), state);
        const tokens = await oauth.processAuthorizationCodeResponse(
          as,
          client,
          await oauth.authorizationCodeGrantRequest(
            as,
            client,
            authentication,
            callback,
            REDIRECT,
            verifier,
            options(),
          ),
        );
        assert.equal(tokens.token_type.toLowerCase(), 'bearer');
        assert.equal(tokens.scope, 'read');
        assert.equal(typeof tokens.access_token, 'string');
      });
    }

    it('an error at /par reaches the library as the RFC 6749 §5.2 error it is (RFC 9126 §2.3)', async () => {
      const registered = await server.client({
        name: 'oauth4webapi errors',
        redirect_uris: [REDIRECT],
        scopes: ['read'],
      });
      const client: oauth.Client = { client_id: registered.client.id };
      const response = await oauth.pushedAuthorizationRequest(
        as,
        client,
        oauth.ClientSecretBasic(registered.secret),
        new URLSearchParams({ response_type: 'code', redirect_uri: REDIRECT, scope: 'admin' }),
        options(),
      );
      await assert.rejects(
        oauth.processPushedAuthorizationResponse(as, client, response),
        (error: unknown) => {
          assert.ok(error instanceof oauth.ResponseBodyError);
          assert.equal(error.status, 400);
          assert.equal(error.error, 'invalid_scope');
          return true;
        },
      );
    });
  });
}
