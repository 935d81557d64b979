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

// oauth4webapi (panva), used directly, as the client of RFC 9126 pushed authorization requests: RFC 8414
// discovery, pushedAuthorizationRequest and processPushedAuthorizationResponse (the library checks the
// 201 and the response's members), the authorization URL with client_id and request_uri only, the
// browser step by HTTP with a signed-in session (FormBrowser), validateAuthResponse, and the code
// exchange with PKCE, for a confidential client (client_secret_basic) and a public one.

const REDIRECT = 'https://rp.example/cb';

for (const backend of backends()) {
  describe(`interop: oauth4webapi pushes its authorization requests (${backend})`, () => {
    let lib: LibraryServer;
    let alice: { user: User; password: string };

    before(async () => {
      lib = await startLibraryServer(backend, { algorithm: 'oauth2' });
      alice = await lib.server.user();
    });
    after(async () => {
      await lib?.close();
    });

    for (const kind of ['confidential (client_secret_basic)', 'public (none)'] as const) {
      it(`${kind}: pushedAuthorizationRequest, the authorization URL, validateAuthResponse, the code exchange`, async () => {
        const { server, as, issuer, options } = lib;
        assert.equal(as.pushed_authorization_request_endpoint, `${issuer.origin}/par`);
        const { client, authentication } = await registerLibraryClient(server, {
          name: `oauth4webapi ${kind}`,
          redirect_uris: [REDIRECT],
          scopes: ['read'],
          public: kind.startsWith('public'),
          require_pushed_authorization_requests: true,
        });
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

        const authorizationUrl = pushedAuthorizationUrl(as, client.client_id, pushed.request_uri);
        const redirected = await signInAndAllow(server, alice, authorizationUrl, ['read']);
        const callback = oauth.validateAuthResponse(as, client, redirected, state);
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
      const { server, as, options } = lib;
      const { client, authentication } = await registerLibraryClient(server, {
        name: 'oauth4webapi errors',
        redirect_uris: [REDIRECT],
        scopes: ['read'],
      });
      const response = await oauth.pushedAuthorizationRequest(
        as,
        client,
        authentication,
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
