import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import * as oauth from 'oauth4webapi';
import type { User } from '../../src/core/model.js';
import { backends } from '../helpers/backends.js';
import type { TestServer } from '../helpers/server.js';
import {
  pushedAuthorizationUrl,
  registerLibraryClient,
  signInAndAllow,
  startLibraryServer,
  type LibraryServer,
} from '../helpers/oauth4webapi.js';

// oauth4webapi (panva) as a DPoP client (RFC 9449), with its own proofs and nonce handling: discovery
// (dpop_signing_alg_values_supported), clientCredentialsGrantRequest with the DPoP option, the
// use_dpop_nonce answer the library recognises (isDPoPNonceError) and retries with the nonce it
// cached, then protectedResourceRequest against /v1 under the DPoP scheme, through the same
// nonce dance at the resource (401 WWW-Authenticate: DPoP error="use_dpop_nonce").

/**
 * The library signs proofs with the wall clock; the server runs on a manual clock that starts at
 * the wall time. Brought up to it before each exchange, so that a slow run ages no proof.
 */
function syncClock(server: TestServer): void {
  const wall = Math.floor(Date.now() / 1000);
  if (wall > server.clock.now()) server.clock.advance(wall - server.clock.now());
}

for (const backend of backends()) {
  for (const nonces of ['off', 'required'] as const) {
    describe(`interop: oauth4webapi DPoP, nonces ${nonces} (${backend})`, () => {
      let lib: LibraryServer;
      let alice: { user: User; password: string };

      before(async () => {
        lib = await startLibraryServer(backend, { algorithm: 'oauth2', config: { dpopNonce: nonces } });
        alice = await lib.server.user();
      });
      after(async () => {
        await lib?.close();
      });

      /** Runs `attempt`, and once more when the answer asks for a nonce (the library has cached it). */
      async function withNonceRetry<T>(attempt: () => Promise<T>): Promise<{ result: T; retried: boolean }> {
        try {
          syncClock(lib.server);
          return { result: await attempt(), retried: false };
        } catch (error) {
          if (!oauth.isDPoPNonceError(error)) throw error;
          syncClock(lib.server);
          return { result: await attempt(), retried: true };
        }
      }

      it('client_credentials and a /v1 request with DPoP, retrying once for a nonce where asked', async () => {
        const { server, as, issuer, options } = lib;
        assert.deepEqual(as.dpop_signing_alg_values_supported, [
          'ES256',
          'PS256',
          'RS256',
          'EdDSA',
          'Ed25519',
        ]);
        const { client, authentication } = await registerLibraryClient(server, {
          name: 'oauth4webapi dpop',
          grant_types: ['client_credentials'],
          scopes: ['admin'],
        });
        const keyPair = await oauth.generateKeyPair('ES256');
        const DPoP = oauth.DPoP(client, keyPair);

        const token = await withNonceRetry(async () =>
          oauth.processClientCredentialsResponse(
            as,
            client,
            await oauth.clientCredentialsGrantRequest(
              as,
              client,
              authentication,
              new URLSearchParams({ scope: 'admin' }),
              { ...options(), DPoP },
            ),
          ),
        );
        assert.equal(token.retried, nonces === 'required', 'a nonce was asked for exactly when required');
        assert.equal(token.result.token_type, 'dpop');
        assert.deepEqual(decodeJwt(token.result.access_token).cnf, { jkt: await DPoP.calculateThumbprint() });

        const resource = await withNonceRetry(async () => {
          const response = await oauth.protectedResourceRequest(
            token.result.access_token,
            'GET',
            new URL(`${issuer.origin}/v1/clients`),
            undefined,
            undefined,
            { ...options(), DPoP },
          );
          return response;
        });
        // With nonces required, the token endpoint's nonce is good here too: this server issues one.
        assert.equal(resource.retried, false);
        assert.equal(resource.result.status, 200);
        const listed = (await resource.result.json()) as { items: { client_id: string }[] };
        assert.ok(listed.items.some((item) => item.client_id === client.client_id));

        // The same token as a bearer token: refused, and the library reads both challenges (§7.1).
        await assert.rejects(
          oauth.protectedResourceRequest(
            token.result.access_token,
            'GET',
            new URL(`${issuer.origin}/v1/clients`),
            undefined,
            undefined,
            options(),
          ),
          (error: unknown) => {
            assert.ok(error instanceof oauth.WWWAuthenticateChallengeError);
            assert.equal(error.status, 401);
            const [bearer, dpop] = error.cause;
            assert.equal(bearer?.scheme, 'bearer');
            assert.equal(bearer?.parameters.error, 'invalid_token');
            assert.equal(dpop?.scheme, 'dpop');
            assert.equal(dpop?.parameters.algs, 'ES256 PS256 RS256 EdDSA Ed25519');
            return true;
          },
        );
      });

      it('a pushed request with a DPoP proof binds the code to the key (§10.1); the exchange needs it', async () => {
        const { server, as, options } = lib;
        const REDIRECT = 'https://rp.example/cb';
        const { client, authentication } = await registerLibraryClient(server, {
          name: 'oauth4webapi dpop par',
          redirect_uris: [REDIRECT],
          scopes: ['read'],
        });
        const DPoP = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));
        const verifier = oauth.generateRandomCodeVerifier();
        const parameters = new URLSearchParams({
          response_type: 'code',
          redirect_uri: REDIRECT,
          scope: 'read',
          code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
        });
        const pushed = await withNonceRetry(async () =>
          oauth.processPushedAuthorizationResponse(
            as,
            client,
            await oauth.pushedAuthorizationRequest(as, client, authentication, parameters, {
              ...options(),
              DPoP,
            }),
          ),
        );
        const authorizationUrl = pushedAuthorizationUrl(as, client.client_id, pushed.result.request_uri);
        const redirected = await signInAndAllow(server, alice, authorizationUrl, ['read']);
        const callback = oauth.validateAuthResponse(as, client, redirected, oauth.skipStateCheck);
        // Without the key, the code is refused (and stays unused).
        const unproven = await oauth.authorizationCodeGrantRequest(
          as,
          client,
          authentication,
          callback,
          REDIRECT,
          verifier,
          options(),
        );
        await assert.rejects(
          oauth.processAuthorizationCodeResponse(as, client, unproven),
          (error: unknown) => {
            assert.ok(error instanceof oauth.ResponseBodyError);
            assert.equal(error.error, 'invalid_grant');
            return true;
          },
        );
        const tokens = await withNonceRetry(async () =>
          oauth.processAuthorizationCodeResponse(
            as,
            client,
            await oauth.authorizationCodeGrantRequest(
              as,
              client,
              authentication,
              callback,
              REDIRECT,
              verifier,
              { ...options(), DPoP },
            ),
          ),
        );
        assert.equal(tokens.result.token_type, 'dpop');
        assert.deepEqual(decodeJwt(tokens.result.access_token).cnf, {
          jkt: await DPoP.calculateThumbprint(),
        });
      });
    });
  }
}
