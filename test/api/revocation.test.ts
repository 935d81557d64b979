import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { tableRows } from '../helpers/store-sql.js';
import {
  clientCredentialsToken,
  expectStatus,
  introspection,
  revoke,
  tokenFor,
  userToken,
} from '../helpers/api-requests.js';

for (const backend of backends()) {
  describe(`POST /revoke (${backend})`, () => {
    let server: TestServer;
    let observer: { id: string; secret: string };
    before(async () => {
      server = await startTestServer(backend, { allowPublicPasswordGrant: true });
      const { client, secret } = await server.client({ name: 'observer', scopes: [] });
      observer = { id: client.id, secret };
    });
    after(async () => {
      await server.close();
    });

    const active = async (token: string) => (await introspection(server, observer, token)).active;

    it('answers 200 with nothing done for an unknown or malformed token', async () => {
      const { credentials } = await clientCredentialsToken(server, ['read']);
      for (const token of ['unknown', 'a.b.c', 'rt_nothing']) {
        const res = await revoke(server, credentials, { token });
        expectStatus(res, 200);
        assert.equal(res.headers['cache-control'], 'no-store');
      }
    });

    it('revokes one access token until it expires, leaving the grant and its other tokens alive', async () => {
      const { credentials, token } = await userToken(server, ['profile']);
      const second = await tokenFor(
        server,
        { grant_type: 'refresh_token', refresh_token: token.refresh_token as string },
        credentials,
      );
      expectStatus(await revoke(server, credentials, { token: token.access_token }), 200);
      assert.equal(await active(token.access_token), false);
      assert.equal(await active(second.access_token), true);
      assert.equal(await active(second.refresh_token as string), true);

      const { jti, exp } = decodeJwt(token.access_token);
      const row = (await tableRows(server.store.storage, 'revoked_access_tokens')).find((r) => r.jti === jti);
      assert.equal(Number(row?.expires_at), exp);
    });

    it('revokes a refresh token with its whole grant: its access tokens die and refresh is refused', async () => {
      const { credentials, token } = await userToken(server, ['profile']);
      const res = await revoke(server, credentials, {
        token: token.refresh_token as string,
        token_type_hint: 'refresh_token',
      });
      expectStatus(res, 200);
      assert.equal(await active(token.refresh_token as string), false);
      assert.equal(await active(token.access_token), false);
      const refresh = await server.http.token(
        { grant_type: 'refresh_token', refresh_token: token.refresh_token as string },
        credentials,
      );
      expectStatus(refresh, 400);
      assert.equal((refresh.json as { error: string }).error, 'invalid_grant');
    });

    it('treats token_type_hint as an ordering only, ignoring unknown hints', async () => {
      const { credentials, token } = await clientCredentialsToken(server, ['read']);
      expectStatus(
        await revoke(server, credentials, { token: token.access_token, token_type_hint: 'refresh_token' }),
        200,
      );
      assert.equal(await active(token.access_token), false);

      const user = await userToken(server, ['profile']);
      expectStatus(
        await revoke(server, user.credentials, {
          token: user.token.refresh_token as string,
          token_type_hint: 'something_else',
        }),
        200,
      );
      assert.equal(await active(user.token.access_token), false);
    });

    it("leaves another client's tokens active, answering 200 as for an unknown token", async () => {
      const owner = await userToken(server, ['profile']);
      const other = await clientCredentialsToken(server, ['read']);
      for (const token of [owner.token.access_token, owner.token.refresh_token as string]) {
        const res = await revoke(server, other.credentials, { token });
        expectStatus(res, 200);
        assert.equal(await active(token), true);
      }
    });

    it('lets a public client revoke its own refresh token by client_id', async () => {
      const { client } = await server.client({
        name: 'public app',
        public: true,
        grant_types: ['password', 'refresh_token'],
        scopes: ['profile'],
      });
      const { user, password } = await server.user();
      const res = await server.http.request('/token', {
        form: { grant_type: 'password', username: user.username, password, client_id: client.id },
      });
      expectStatus(res, 200);
      const token = res.json as { access_token: string; refresh_token: string };
      expectStatus(await revoke(server, { id: client.id }, { token: token.refresh_token }), 200);
      assert.equal(await active(token.access_token), false);
    });

    it('requires client authentication and a token parameter', async () => {
      const { credentials, token } = await clientCredentialsToken(server, ['read']);
      const anonymous = await server.http.request('/revoke', { form: { token: token.access_token } });
      expectStatus(anonymous, 401);
      assert.equal((anonymous.json as { error: string }).error, 'invalid_client');
      const wrong = await revoke(
        server,
        { id: credentials.id, secret: 'nope' },
        { token: token.access_token },
      );
      expectStatus(wrong, 401);
      assert.equal(await active(token.access_token), true);
      const missing = await revoke(server, credentials, {});
      expectStatus(missing, 400);
      assert.equal((missing.json as { error: string }).error, 'invalid_request');
    });
  });
}
