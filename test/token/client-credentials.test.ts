import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

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
  });
}
