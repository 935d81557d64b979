import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  apiClient,
  assertProblem,
  bearer,
  clientCredentialsToken,
  expectStatus,
  locationPath,
  tokenFor,
  type ApiClient,
  type Credentials,
} from '../helpers/api-requests.js';

interface UserBody {
  id: string;
  username: string;
  created_at: string;
  updated_at: string;
}

for (const backend of backends()) {
  describe(`/v1/users (${backend})`, () => {
    let server: TestServer;
    let api: ApiClient;
    let app: Credentials;
    before(async () => {
      server = await startTestServer(backend);
      api = apiClient(server, (await clientCredentialsToken(server, ['admin'])).token);
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

    async function create(username: string, password = 'first password'): Promise<UserBody> {
      const res = await api.post('/users', { username, password });
      expectStatus(res, 201);
      return res.json as UserBody;
    }

    it('POST creates a user (201, Location); the password is never returned', async () => {
      const res = await api.post('/users', { username: 'alice', password: 'alice password' });
      expectStatus(res, 201);
      const user = res.json as UserBody;
      assert.deepEqual(Object.keys(user).sort(), [
        'admin',
        'created_at',
        'email',
        'email_verified',
        'id',
        'name',
        'updated_at',
        'username',
      ]);
      assert.equal(locationPath(res), `/v1/users/${user.id}`);
      const read = await api.get(`/users/${user.id}`);
      expectStatus(read, 200);
      assert.deepEqual(read.json, user);
      expectStatus(await login('alice', 'alice password'), 200);
    });

    it('answers a duplicate user name with 409 naming username; bad input with 400', async () => {
      await create('bob');
      assertProblem(
        await api.post('/users', { username: 'bob', password: 'another password' }),
        409,
        'username',
      );
      assertProblem(await api.post('/users', { username: 'carol', password: 'short' }), 400, 'password');
      assertProblem(
        await api.post('/users', { username: ' carol', password: 'long enough' }),
        400,
        'username',
      );
      assertProblem(
        await api.post('/users', { username: 'carol', password: 'long enough', role: 'admin' }),
        400,
        'role',
      );
      const carol = await api.get('/users?username=carol');
      assert.deepEqual((carol.json as { items: unknown[] }).items, [], 'nothing was created');
    });

    it('GET lists with a user-name filter and pagination', async () => {
      const dave = await create('dave');
      const filtered = await api.get('/users?username=dave');
      expectStatus(filtered, 200);
      assert.deepEqual(filtered.json, { items: [dave], total: 1, limit: 20, offset: 0 });
      const page = (await api.get('/users?limit=1&offset=1')).json as { items: UserBody[]; total: number };
      assert.equal(page.items.length, 1);
      assert.ok(page.total >= 2);
      assertProblem(await api.get('/users?limit=1000'), 400, 'limit');
    });

    it('PUT and PATCH rename and change the password (201); a taken name is 409', async () => {
      const erin = await create('erin', 'erin password 1');
      await create('frank');
      const renamed = await api.put(`/users/${erin.id}`, { username: 'erin2' });
      expectStatus(renamed, 201);
      assert.equal((renamed.json as UserBody).username, 'erin2');
      expectStatus(await login('erin2', 'erin password 1'), 200);
      assertProblem(await api.put(`/users/${erin.id}`, {}), 400, 'username');
      assertProblem(await api.patch(`/users/${erin.id}`, { username: 'frank' }), 409, 'username');

      const patched = await api.patch(`/users/${erin.id}`, { password: 'erin password 2' });
      expectStatus(patched, 201);
      assert.ok(!patched.text.includes('password'));
      expectStatus(await login('erin2', 'erin password 1'), 401);
      expectStatus(await login('erin2', 'erin password 2'), 200);
      assertProblem(await api.patch(`/users/${erin.id}`, {}), 400);
    });

    it('email_verified: false for a new address, true once verified, false again when PATCH changes the address (decision 35)', async () => {
      const res = await api.post('/users', {
        username: 'vera',
        password: 'vera password',
        email: 'vera@example.com',
      });
      expectStatus(res, 201);
      const vera = res.json as UserBody & { email_verified: boolean };
      assert.equal(vera.email_verified, false);
      // What following the mailed link does (core/users/account-mail.ts).
      assert.ok(await server.store.storage.users.markEmailVerified(vera.id, 'vera@example.com'));
      assert.equal(((await api.get(`/users/${vera.id}`)).json as typeof vera).email_verified, true);
      const named = await api.patch(`/users/${vera.id}`, { name: 'Vera' });
      assert.equal((named.json as typeof vera).email_verified, true);
      const moved = await api.patch(`/users/${vera.id}`, { email: 'vera@elsewhere.example' });
      expectStatus(moved, 201);
      assert.equal((moved.json as typeof vera).email_verified, false);
      assert.equal(((await api.get(`/users/${vera.id}`)).json as typeof vera).email_verified, false);
    });

    it('lists a user’s grants and revokes one; DELETE of the user ends all of their tokens', async () => {
      const gina = await create('gina', 'gina password');
      const first = await tokenFor(
        server,
        { grant_type: 'password', username: 'gina', password: 'gina password' },
        app,
      );
      const second = await tokenFor(
        server,
        { grant_type: 'password', username: 'gina', password: 'gina password' },
        app,
      );
      const grants = (await api.get(`/users/${gina.id}/grants`)).json as {
        items: Array<{ id: string; client_id: string }>;
      };
      assert.equal(grants.items.length, 2);
      assert.ok(grants.items.every((grant) => grant.client_id === app.id));

      const me = (token: typeof first) => server.http.request('/v1/users/me', { headers: bearer(token) });
      expectStatus(await me(first), 200);
      expectStatus(await me(second), 200);
      // Revoke the grant behind the first login only.
      const firstGrant = (await server.store.storage.grants.listByUser(gina.id)).find(
        (grant) => grant.createdAt <= server.clock.now() && grants.items.some((g) => g.id === grant.id),
      );
      assert.ok(firstGrant);
      expectStatus(await api.delete(`/users/${gina.id}/grants/${firstGrant.id}`), 204);
      const remaining = (await api.get(`/users/${gina.id}/grants`)).json as { items: unknown[] };
      assert.equal(remaining.items.length, 1);
      const alive = [await me(first), await me(second)].map((res) => res.status).sort();
      assert.deepEqual(alive, [200, 401]);

      expectStatus(await api.delete(`/users/${gina.id}`), 204);
      assertProblem(await api.get(`/users/${gina.id}`), 404, 'id');
      assertProblem(await api.get(`/users/${gina.id}/grants`), 404, 'id');
      assertProblem(await me(first), 401);
      assertProblem(await me(second), 401);
      assertProblem(await api.delete(`/users/${gina.id}`), 404, 'id');
    });

    it('answers 404 for a missing user, and 405 on /v1/users/me for anything but GET', async () => {
      assertProblem(await api.get('/users/missing'), 404, 'id');
      assertProblem(await api.put('/users/missing', { username: 'x' }), 404, 'id');
      assertProblem(await api.patch('/users/missing', { username: 'x' }), 404, 'id');
      assertProblem(await api.delete('/users/missing/grants/none'), 404, 'id');
      const res = await api.delete('/users/me');
      assertProblem(res, 405);
      assert.equal(res.headers.allow, 'GET, HEAD');
    });
  });
}
