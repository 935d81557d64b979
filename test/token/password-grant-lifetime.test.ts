import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

for (const backend of backends()) {
  describe(`password grant lifetime (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(backend, { refreshTokenTtl: 7200, purgeIntervalSeconds: 0 });
    });
    after(async () => {
      await server.close();
    });

    it('bounds a login by its first refresh token’s lifetime, so the grant can be purged', async () => {
      const { client, secret } = await server.client({
        scopes: ['profile'],
        grant_types: ['password', 'refresh_token'],
      });
      const { user, password } = await server.user();
      const login = await server.http.token(
        { grant_type: 'password', username: user.username, password },
        { id: client.id, secret },
      );
      assert.equal(login.status, 200);
      const [grant] = await server.store.storage.grants.listByUser(user.id);
      assert.equal(grant?.expiresAt, server.clock.now() + 7200);

      // Refreshing slides the refresh token, never past the login's end.
      server.clock.advance(3600);
      const refreshed = await server.http.token(
        {
          grant_type: 'refresh_token',
          refresh_token: (login.json as { refresh_token: string }).refresh_token,
        },
        { id: client.id, secret },
      );
      assert.equal(refreshed.status, 200);
      server.clock.advance(3601);
      const late = await server.http.token(
        {
          grant_type: 'refresh_token',
          refresh_token: (refreshed.json as { refresh_token: string }).refresh_token,
        },
        { id: client.id, secret },
      );
      assert.equal(late.status, 400);
      assert.equal((late.json as { error: string }).error, 'invalid_grant');
    });
  });
}
