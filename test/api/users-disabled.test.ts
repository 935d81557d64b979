import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  apiClient,
  assertProblem,
  clientCredentialsToken,
  expectStatus,
  introspection,
  tokenFor,
  type ApiClient,
  type Credentials,
} from '../helpers/api-requests.js';

interface UserBody {
  id: string;
  username: string;
  disabled: boolean;
  sessions: number;
  sign_in_methods: { method: string; description: string }[];
}

for (const backend of backends()) {
  describe(`/v1/users disabled and sign_in_methods; the password grant (${backend}, decision 37)`, () => {
    let server: TestServer;
    let api: ApiClient;
    let app: Credentials;
    let admin: Credentials;
    before(async () => {
      server = await startTestServer(backend);
      const adminToken = await clientCredentialsToken(server, ['admin']);
      api = apiClient(server, adminToken.token);
      admin = adminToken.credentials;
      const { client, secret } = await server.client({
        name: 'password app',
        grant_types: ['password', 'refresh_token'],
        scopes: ['profile'],
      });
      app = { id: client.id, secret };
    });
    after(async () => {
      await server.close();
    });

    const login = (username: string, password: string) =>
      server.http.token({ grant_type: 'password', username, password }, app);

    it('PATCH disabled: refused at the password grant, sessions ended, refresh and access tokens stop', async () => {
      const { user, password } = await server.user();
      const tokens = await tokenFor(
        server,
        { grant_type: 'password', username: user.username, password },
        app,
      );
      await server.gatehouse.engine.browserSessions.start(user.id, {
        method: 'password',
        at: server.clock.now(),
      });
      const before = (await api.get(`/users/${user.id}`)).json as UserBody;
      assert.equal(before.disabled, false);
      assert.equal(before.sessions, 1);
      assert.deepEqual(before.sign_in_methods, [{ method: 'password', description: 'set' }]);

      const patched = await api.patch(`/users/${user.id}`, { disabled: true });
      expectStatus(patched, 201);
      assert.equal((patched.json as UserBody).disabled, true);
      assert.equal((patched.json as UserBody).sessions, 0);
      const refused = await login(user.username, password);
      expectStatus(refused, 400);
      assert.deepEqual(refused.json, { error: 'invalid_grant', error_description: 'this user is disabled' });
      // A wrong password is still the ordinary answer: "disabled" is said only after the right one.
      expectStatus(await login(user.username, 'not the password'), 401);
      const refreshed = await server.http.token(
        { grant_type: 'refresh_token', refresh_token: tokens.refresh_token ?? '' },
        app,
      );
      expectStatus(refreshed, 400);
      assert.equal((refreshed.json as { error: string }).error, 'invalid_grant');
      assert.equal((await introspection(server, admin, tokens.access_token)).active, false);

      const enabled = await api.patch(`/users/${user.id}`, { disabled: false });
      expectStatus(enabled, 201);
      assert.equal((enabled.json as UserBody).disabled, false);
      expectStatus(await login(user.username, password), 200);
    });

    it('PUT leaves disabled false when it is left out; a value not true or false is 400', async () => {
      const { user } = await server.user();
      expectStatus(await api.patch(`/users/${user.id}`, { disabled: true }), 201);
      const replaced = await api.put(`/users/${user.id}`, { username: user.username });
      expectStatus(replaced, 201);
      assert.equal((replaced.json as UserBody).disabled, false);
      assertProblem(await api.patch(`/users/${user.id}`, { disabled: 'yes' }), 400);
      const listed = (await api.get(`/users?username=${encodeURIComponent(user.username)}`)).json as {
        items: UserBody[];
      };
      assert.equal(listed.items[0]?.disabled, false);
      assert.deepEqual(listed.items[0]?.sign_in_methods, [{ method: 'password', description: 'set' }]);
    });

    it('the OpenAPI document describes disabled and sign_in_methods', async () => {
      const res = await server.http.request('/v1/openapi', { headers: { accept: 'application/json' } });
      expectStatus(res, 200);
      type Schema = {
        properties: Record<string, { type?: string; description?: string }>;
        required: string[];
      };
      const document = res.json as {
        paths: Record<
          string,
          Record<string, { responses: Record<string, { content: Record<string, { schema: Schema }> }> }>
        >;
      };
      const user =
        document.paths['/v1/users/{id}']?.get?.responses['200']?.content['application/json']?.schema;
      assert.ok(user !== undefined, 'GET /v1/users/{id} is documented');
      assert.deepEqual(
        ['disabled', 'sign_in_methods', 'sessions'].filter((name) => !user.required.includes(name)),
        [],
      );
      assert.equal(user.properties.disabled?.type, 'boolean');
      assert.match(user.properties.disabled?.description ?? '', /cannot sign in by any method/);
      assert.match(user.properties.sign_in_methods?.description ?? '', /never a secret/);
    });
  });
}
