import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { User } from '../../src/core/model.js';
import { sha256 } from '../../src/shared/crypto.js';
import { backends } from '../helpers/backends.js';
import { basicAuth, formBody } from '../helpers/https-client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { assertOAuthError, assertTokenSuccess } from '../helpers/token-responses.js';

const REDIRECT = 'https://app.example/callback';

for (const backend of backends()) {
  describe(`token endpoint: request handling (${backend})`, () => {
    let server: TestServer;
    let user: User;
    let credentials: { id: string; secret: string };
    before(async () => {
      server = await startTestServer(backend);
      ({ user } = await server.user());
      const { client, secret } = await server.client({
        redirect_uris: [REDIRECT],
        grant_types: ['authorization_code', 'client_credentials'],
        scopes: ['read'],
      });
      credentials = { id: client.id, secret };
    });
    after(async () => {
      await server.close();
    });

    /** A fresh code for the shared client, to show that a refused request left it redeemable. */
    async function freshCode(): Promise<string> {
      const client = await server.store.storage.clients.get(credentials.id);
      assert.ok(client);
      return (await server.seedCode({ client, user })).code;
    }

    async function assertCodeStillRedeemable(code: string): Promise<void> {
      const stored = await server.store.storage.codes.get(sha256(code));
      assert.equal(stored?.consumedAt, null, 'a refused request must not consume the code');
      assertTokenSuccess(
        await server.http.token(
          { grant_type: 'authorization_code', code, redirect_uri: REDIRECT },
          credentials,
        ),
      );
    }

    it('answers a JSON body with 415 and an OAuth error, consuming nothing', async () => {
      const code = await freshCode();
      const res = await server.http.request('/token', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: basicAuth(credentials.id, credentials.secret),
        },
        body: JSON.stringify({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT }),
      });
      assertOAuthError(res, 415, 'invalid_request');
      await assertCodeStillRedeemable(code);
    });

    it('answers a body that claims JSON but is not, or is empty, with 415 too', async () => {
      for (const body of ['grant_type=client_credentials', '', '{"grant_type":']) {
        const res = await server.http.request('/token', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: basicAuth(credentials.id, credentials.secret),
          },
          body,
        });
        assertOAuthError(res, 415, 'invalid_request');
      }
    });

    it('answers other content types and a missing one with 415', async () => {
      for (const contentType of ['text/plain', 'application/xml', 'multipart/form-data; boundary=x']) {
        const res = await server.http.request('/token', {
          method: 'POST',
          headers: {
            'content-type': contentType,
            authorization: basicAuth(credentials.id, credentials.secret),
          },
          body: 'grant_type=client_credentials',
        });
        assertOAuthError(res, 415, 'invalid_request');
      }
      const none = await server.http.request('/token', {
        method: 'POST',
        headers: { authorization: basicAuth(credentials.id, credentials.secret) },
      });
      assertOAuthError(none, 415, 'invalid_request');
    });

    it('accepts the form content type with a charset parameter', async () => {
      const res = await server.http.request('/token', {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded; charset=UTF-8',
          authorization: basicAuth(credentials.id, credentials.secret),
        },
        body: 'grant_type=client_credentials',
      });
      assertTokenSuccess(res);
    });

    it('refuses a repeated parameter with invalid_request (RFC 6749 §3.2), consuming nothing', async () => {
      const code = await freshCode();
      const repeatedCode = await server.http.token(
        { grant_type: 'authorization_code', code: [code, code], redirect_uri: REDIRECT },
        credentials,
      );
      assertOAuthError(repeatedCode, 400, 'invalid_request');
      const repeatedGrantType = await server.http.token(
        { grant_type: ['authorization_code', 'authorization_code'], code, redirect_uri: REDIRECT },
        credentials,
      );
      assertOAuthError(repeatedGrantType, 400, 'invalid_request');
      await assertCodeStillRedeemable(code);
    });

    it('refuses a missing grant_type with invalid_request', async () => {
      assertOAuthError(await server.http.token({ scope: 'read' }, credentials), 400, 'invalid_request');
      assertOAuthError(await server.http.token({ grant_type: '' }, credentials), 400, 'invalid_request');
    });

    it('refuses an unknown grant_type with unsupported_grant_type', async () => {
      for (const grantType of ['magic', 'implicit', 'urn:ietf:params:oauth:grant-type:saml2-bearer']) {
        const res = await server.http.token({ grant_type: grantType }, credentials);
        assertOAuthError(res, 400, 'unsupported_grant_type');
      }
    });

    it('answers a body over 16 KiB with 413, consuming nothing', async () => {
      const code = await freshCode();
      const body = formBody({
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        padding: 'x'.repeat(17 * 1024),
      });
      const res = await server.http.request('/token', {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: basicAuth(credentials.id, credentials.secret),
        },
        body,
      });
      assertOAuthError(res, 413, 'invalid_request');
      await assertCodeStillRedeemable(code);
    });

    it('accepts client_secret_post', async () => {
      const res = await server.http.token({
        grant_type: 'client_credentials',
        client_id: credentials.id,
        client_secret: credentials.secret,
      });
      assertTokenSuccess(res);
      const wrong = await server.http.token({
        grant_type: 'client_credentials',
        client_id: credentials.id,
        client_secret: credentials.secret + 'x',
      });
      assertOAuthError(wrong, 401, 'invalid_client');
    });

    it('refuses a confidential client that sends only its client_id', async () => {
      const res = await server.http.token({ grant_type: 'client_credentials', client_id: credentials.id });
      assertOAuthError(res, 401, 'invalid_client');
    });

    it('decodes form-urlencoded id and secret in HTTP Basic (RFC 6749 §2.3.1)', async () => {
      // The registry only makes URL-safe ids and secrets, so store a client whose id and secret need
      // encoding, as an imported or hand-provisioned client could have.
      const id = 'svc:one/ü+%&=x y';
      const secret = 'pa:ss+wo/rd%&=é ~!';
      const now = server.clock.now();
      await server.store.storage.clients.insert({
        id,
        name: 'special characters',
        secretHash: sha256(secret),
        redirectUris: [],
        grantTypes: ['client_credentials'],
        scopes: [],
        tokenType: 'bearer',
        isPublic: false,
        idTokenSignedResponseAlg: 'RS256',
        postLogoutRedirectUris: [],
        tokenEndpointAuthMethod: 'client_secret_basic',
        jwks: null,
        jwksUri: null,
        registration: 'operator',
        registrationAccessTokenHash: null,
        registrationScopes: null,
        firstGrantedAt: null,
        documentExpiresAt: null,
        requirePushedAuthorizationRequests: false,
        dpopBoundAccessTokens: false,
        requireMfa: false,
        identityProviders: null,
        tokenExchangeTargets: [],
        createdAt: now,
        updatedAt: now,
      });
      const body = assertTokenSuccess(
        await server.http.token({ grant_type: 'client_credentials' }, { id, secret }),
      );
      assert.ok(body.access_token);
      // The raw, unencoded form is not what §2.3.1 sends: '+' would decode to a space.
      const raw = 'Basic ' + Buffer.from(`${id}:${secret}`).toString('base64');
      const res = await server.http.request('/token', {
        form: { grant_type: 'client_credentials' },
        headers: { authorization: raw },
      });
      assertOAuthError(res, 401, 'invalid_client');
      // client_secret_post carries the same values through ordinary form encoding.
      assertTokenSuccess(
        await server.http.token({ grant_type: 'client_credentials', client_id: id, client_secret: secret }),
      );
    });

    it('matches the Basic scheme name case-insensitively', async () => {
      const header = basicAuth(credentials.id, credentials.secret).replace(/^Basic/, 'bAsIc');
      const res = await server.http.request('/token', {
        form: { grant_type: 'client_credentials' },
        headers: { authorization: header },
      });
      assertTokenSuccess(res);
    });

    it('answers malformed Basic credentials with 401 invalid_client', async () => {
      for (const header of ['Basic', 'Basic !!!', 'Basic ' + Buffer.from('no-colon').toString('base64')]) {
        const res = await server.http.request('/token', {
          form: { grant_type: 'client_credentials' },
          headers: { authorization: header },
        });
        assertOAuthError(res, 401, 'invalid_client');
      }
    });

    it('refuses Basic together with client_secret in the form (invalid_request), consuming nothing', async () => {
      const code = await freshCode();
      const res = await server.http.token(
        {
          grant_type: 'authorization_code',
          code,
          redirect_uri: REDIRECT,
          client_secret: credentials.secret,
        },
        credentials,
      );
      assertOAuthError(res, 400, 'invalid_request');
      await assertCodeStillRedeemable(code);
    });

    it('answers unknown paths and methods with a JSON error', async () => {
      const res = await server.http.request('/token', { method: 'GET' });
      assert.ok(res.status === 404 || res.status === 405, `status ${res.status}`);
      const body = res.json as { error?: unknown };
      assert.equal(typeof body.error, 'string');
    });
  });
}
