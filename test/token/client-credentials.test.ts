import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { assertOAuthError, assertTokenSuccess, verifyAccessToken } from '../helpers/token-responses.js';

for (const backend of backends()) {
  describe(`client_credentials grant (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(backend);
    });
    after(async () => {
      await server.close();
    });

    it('issues a JWT access token that jose verifies against /jwks, without a refresh token', async () => {
      const { client, secret } = await server.client({ scopes: ['read', 'write'] });
      const res = await server.http.token(
        { grant_type: 'client_credentials', scope: 'read' },
        { id: client.id, secret },
      );
      assert.equal(res.status, 200);
      assert.equal(res.headers['content-type'], 'application/json;charset=UTF-8');
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(res.headers.pragma, 'no-cache');
      const body = res.json as Record<string, unknown>;
      assert.equal(body.token_type, 'bearer');
      assert.equal(body.expires_in, 3600);
      assert.equal(body.scope, 'read');
      assert.equal(body.refresh_token, undefined);
      const jwks = (await server.http.request('/jwks')).json as Parameters<typeof createLocalJWKSet>[0];
      const { payload, protectedHeader } = await jwtVerify(
        body.access_token as string,
        createLocalJWKSet(jwks),
        {
          issuer: 'https://gatehouse.test',
          audience: 'https://gatehouse.test',
          typ: 'at+jwt',
          currentDate: new Date(server.clock.now() * 1000),
        },
      );
      assert.equal(protectedHeader.alg, 'ES256');
      assert.equal(payload.sub, client.id);
      assert.equal(payload.client_id, client.id);
      assert.equal(payload.scope, 'read');
      assert.equal(typeof payload.jti, 'string');
    });

    it('answers wrong credentials with 401 invalid_client and WWW-Authenticate: Basic', async () => {
      const { client } = await server.client({});
      const res = await server.http.token(
        { grant_type: 'client_credentials' },
        { id: client.id, secret: 'wrong' },
      );
      assert.equal(res.status, 401);
      assert.match(String(res.headers['www-authenticate']), /^Basic realm=/);
      assert.equal((res.json as { error: string }).error, 'invalid_client');
    });

    it('answers an unknown client and a missing authentication with 401 invalid_client', async () => {
      assertOAuthError(
        await server.http.token({ grant_type: 'client_credentials' }, { id: 'no-such-client', secret: 'x' }),
        401,
        'invalid_client',
      );
      assertOAuthError(await server.http.token({ grant_type: 'client_credentials' }), 401, 'invalid_client');
    });

    it('grants every registered scope when none is requested', async () => {
      const { client, secret } = await server.client({ scopes: ['read', 'write'] });
      const body = assertTokenSuccess(
        await server.http.token({ grant_type: 'client_credentials' }, { id: client.id, secret }),
      );
      assert.equal(body.scope, 'read write');
    });

    it("refuses a scope outside the client's scopes with invalid_scope", async () => {
      const { client, secret } = await server.client({ scopes: ['read'] });
      for (const scope of ['write', 'read write', 'admin']) {
        const res = await server.http.token(
          { grant_type: 'client_credentials', scope },
          { id: client.id, secret },
        );
        assertOAuthError(res, 400, 'invalid_scope');
      }
    });

    it('refuses a public client (no secret to authenticate with)', async () => {
      const { client } = await server.client({
        public: true,
        redirect_uris: ['https://app.example/cb'],
        grant_types: ['authorization_code'],
      });
      const res = await server.http.token({ grant_type: 'client_credentials', client_id: client.id });
      assertOAuthError(res, 400, 'unauthorized_client');
      // Even one registered for client_credentials behind the registry's back (RFC 6749 §4.4).
      const now = server.clock.now();
      const sneaky = { ...client, id: `${client.id}-cc`, grantTypes: ['client_credentials' as const] };
      await server.store.storage.clients.insert({ ...sneaky, createdAt: now, updatedAt: now });
      const res2 = await server.http.token({ grant_type: 'client_credentials', client_id: sneaky.id });
      assertOAuthError(res2, 400, 'unauthorized_client');
    });

    it('refuses a client not registered for client_credentials with unauthorized_client', async () => {
      const { client, secret } = await server.client({ grant_types: ['password'] });
      const res = await server.http.token({ grant_type: 'client_credentials' }, { id: client.id, secret });
      assertOAuthError(res, 400, 'unauthorized_client');
    });

    it('gives a MAC client token_type mac with mac_key and mac_algorithm hmac-sha-256', async () => {
      const { client, secret } = await server.client({ scopes: ['read'], token_type: 'mac' });
      const body = assertTokenSuccess(
        await server.http.token({ grant_type: 'client_credentials' }, { id: client.id, secret }),
      );
      assert.equal(body.token_type, 'mac');
      assert.equal(body.mac_algorithm, 'hmac-sha-256');
      assert.equal(typeof body.mac_key, 'string');
      assert.ok((body.mac_key ?? '').length >= 32);
      assert.equal(body.refresh_token, undefined);
      // The token says it is a MAC token, so no resource server can take it as a bearer token.
      const { payload } = await verifyAccessToken(server, body.access_token);
      assert.equal(payload.token_type, 'mac');
      // Each token has its own key.
      const again = assertTokenSuccess(
        await server.http.token({ grant_type: 'client_credentials' }, { id: client.id, secret }),
      );
      assert.notEqual(again.mac_key, body.mac_key);
    });

    it('issues a bearer token with no MAC fields to a bearer client', async () => {
      const { client, secret } = await server.client({});
      const body = assertTokenSuccess(
        await server.http.token({ grant_type: 'client_credentials' }, { id: client.id, secret }),
      );
      assert.equal(body.token_type, 'bearer');
      assert.equal(body.mac_key, undefined);
      assert.equal(body.mac_algorithm, undefined);
      assert.equal(body.scope, undefined, 'a client with no scopes gets no scope member');
    });
  });
}
