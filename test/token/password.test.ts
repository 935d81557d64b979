import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  assertOAuthError,
  assertTokenSuccess,
  statusCounts,
  verifyAccessToken,
} from '../helpers/token-responses.js';

for (const backend of backends()) {
  describe(`password grant (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(backend);
    });
    after(async () => {
      await server.close();
    });

    /** A fresh client allowed the password grant. */
    async function passwordClient(grantTypes = ['password', 'refresh_token']) {
      const { client, secret } = await server.client({ grant_types: grantTypes, scopes: ['read', 'write'] });
      return { id: client.id, secret };
    }

    function login(credentials: { id: string; secret: string }, username: string, password: string) {
      return server.http.token({ grant_type: 'password', username, password }, credentials);
    }

    it('issues tokens for the right user name and password', async () => {
      const credentials = await passwordClient();
      const { user, password } = await server.user();
      const body = assertTokenSuccess(await login(credentials, user.username, password));
      assert.equal(body.token_type, 'bearer');
      assert.equal(body.scope, 'read write');
      assert.equal(typeof body.refresh_token, 'string');
      const { payload } = await verifyAccessToken(server, body.access_token);
      assert.equal(payload.sub, user.id);
      assert.equal(payload.client_id, credentials.id);
      assert.equal(typeof payload.gid, 'string');
    });

    it('narrows to the requested scope and refuses a scope outside the client', async () => {
      const credentials = await passwordClient();
      const { user, password } = await server.user();
      const narrowed = await server.http.token(
        { grant_type: 'password', username: user.username, password, scope: 'write' },
        credentials,
      );
      assert.equal(assertTokenSuccess(narrowed).scope, 'write');
      const widened = await server.http.token(
        { grant_type: 'password', username: user.username, password, scope: 'read admin' },
        credentials,
      );
      assertOAuthError(widened, 400, 'invalid_scope');
    });

    it('answers a wrong password with 401 invalid_grant (docs/decisions.md, decision 1)', async () => {
      const credentials = await passwordClient();
      const { user } = await server.user();
      assertOAuthError(await login(credentials, user.username, 'wrong password!'), 401, 'invalid_grant');
    });

    it('answers an unknown user name exactly like a wrong password', async () => {
      const credentials = await passwordClient();
      const res = await login(credentials, 'nobody-by-this-name', 'whatever password');
      assertOAuthError(res, 401, 'invalid_grant');
      const known = await server.user();
      const wrong = await login(credentials, known.user.username, 'whatever password');
      assert.equal(
        (wrong.json as { error_description: string }).error_description,
        (res.json as { error_description: string }).error_description,
      );
    });

    it('requires username and password (invalid_request)', async () => {
      const credentials = await passwordClient();
      assertOAuthError(
        await server.http.token({ grant_type: 'password', password: 'x' }, credentials),
        400,
        'invalid_request',
      );
      assertOAuthError(
        await server.http.token({ grant_type: 'password', username: 'x' }, credentials),
        400,
        'invalid_request',
      );
    });

    it('refuses a client not registered for the password grant with unauthorized_client', async () => {
      const credentials = await passwordClient(['client_credentials']);
      const { user, password } = await server.user();
      assertOAuthError(await login(credentials, user.username, password), 400, 'unauthorized_client');
    });

    it('issues no refresh token to a client without the refresh_token grant', async () => {
      const credentials = await passwordClient(['password']);
      const { user, password } = await server.user();
      const body = assertTokenSuccess(await login(credentials, user.username, password));
      assert.equal(body.refresh_token, undefined);
    });

    it('throttles a user name after 5 failures: 429 with Retry-After, even for the right password', async () => {
      const credentials = await passwordClient();
      const { user, password } = await server.user();
      for (let i = 0; i < 5; i++) {
        assertOAuthError(
          await login(credentials, user.username, `wrong ${i} password`),
          401,
          'invalid_grant',
        );
      }
      const throttled = await login(credentials, user.username, 'wrong again password');
      assert.equal(throttled.status, 429);
      const retryAfter = Number(throttled.headers['retry-after']);
      assert.ok(
        Number.isInteger(retryAfter) && retryAfter > 0 && retryAfter <= 900,
        `Retry-After ${retryAfter}`,
      );
      const body = throttled.json as { error?: unknown; error_description?: unknown };
      assert.equal(typeof body.error, 'string');
      assert.equal(typeof body.error_description, 'string');

      // The right password is refused too while the throttle holds, from any client.
      const right = await login(credentials, user.username, password);
      assert.equal(right.status, 429);
      const otherClient = await passwordClient();
      assert.equal((await login(otherClient, user.username, password)).status, 429);

      // Another user name is not affected.
      const other = await server.user();
      assertTokenSuccess(await login(credentials, other.user.username, other.password));

      // After the window the right password works again.
      server.clock.advance(retryAfter + 1);
      assertTokenSuccess(await login(credentials, user.username, password));
    });

    it('cannot be outrun by parallel guesses: of 20 at once, at most 5 passwords are checked', async () => {
      const credentials = await passwordClient();
      const { user, password } = await server.user();
      const responses = await Promise.all(
        Array.from({ length: 20 }, (_, i) => login(credentials, user.username, `parallel guess ${i}`)),
      );
      const counts = statusCounts(responses);
      assert.ok((counts[401] ?? 0) <= 5, `passwords checked: ${JSON.stringify(counts)}`);
      assert.equal((counts[401] ?? 0) + (counts[429] ?? 0), 20, JSON.stringify(counts));
      assert.equal((await login(credentials, user.username, password)).status, 429);
    });

    it('counts failures per user name case-insensitively for the throttle', async () => {
      const credentials = await passwordClient();
      const { user, password } = await server.user(`Mixed-${Date.now()}`);
      for (let i = 0; i < 5; i++) {
        const name = i % 2 === 0 ? user.username.toUpperCase() : user.username.toLowerCase();
        assert.equal((await login(credentials, name, 'wrong password')).status, 401);
      }
      assert.equal((await login(credentials, user.username, password)).status, 429);
    });

    it('resets the user-name counter after a successful login', async () => {
      const credentials = await passwordClient();
      const { user, password } = await server.user();
      for (let i = 0; i < 4; i++) {
        assert.equal((await login(credentials, user.username, 'wrong password')).status, 401);
      }
      assertTokenSuccess(await login(credentials, user.username, password));
      for (let i = 0; i < 4; i++) {
        assert.equal((await login(credentials, user.username, 'wrong password')).status, 401);
      }
      assertTokenSuccess(await login(credentials, user.username, password));
    });
  });
}
