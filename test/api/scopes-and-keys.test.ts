import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeProtectedHeader } from 'jose';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  apiClient,
  assertProblem,
  clientCredentialsToken,
  expectStatus,
  locationPath,
  type ApiClient,
} from '../helpers/api-requests.js';

interface KeyBody {
  kid: string;
  alg: string;
  status: string;
  public_jwk: Record<string, string>;
  created_at: string;
  retired_at: string | null;
}

for (const backend of backends()) {
  describe(`/v1/scopes and /v1/signing-keys (${backend})`, () => {
    let server: TestServer;
    let api: ApiClient;
    before(async () => {
      server = await startTestServer(backend);
      api = apiClient(server, (await clientCredentialsToken(server, ['admin'])).token);
    });
    after(async () => {
      await server.close();
    });

    it('lists the built-in scopes with the descriptions the consent page shows', async () => {
      const res = await api.get('/scopes');
      expectStatus(res, 200);
      const names = (res.json as { items: Array<{ name: string; description: string }> }).items;
      const profile = names.find((scope) => scope.name === 'profile');
      assert.ok(profile && profile.description.length > 0 && profile.description !== 'profile');
      assert.ok(names.some((scope) => scope.name === 'admin'));
    });

    it('pages scopes by name and searches them on the server (search, limit, offset, total)', async () => {
      for (const name of ['ledger:read', 'ledger:write', 'LEDGER:admin', 'ledgers', 'led_ger']) {
        expectStatus(await api.post('/scopes', { name }), 201);
      }
      const first = await api.get('/scopes?search=ledger&limit=2');
      expectStatus(first, 200);
      const body = first.json as { items: { name: string }[]; total: number; limit: number; offset: number };
      assert.deepEqual(
        { total: body.total, limit: body.limit, offset: body.offset },
        { total: 4, limit: 2, offset: 0 },
      );
      const second = (await api.get('/scopes?search=LEDGER&limit=2&offset=2')).json as typeof body;
      const names = [...body.items, ...second.items].map((scope) => scope.name);
      assert.deepEqual([...names].sort(), ['LEDGER:admin', 'ledger:read', 'ledger:write', 'ledgers']);
      // `_` is a character, not a wildcard.
      const literal = (await api.get('/scopes?search=led_')).json as typeof body;
      assert.deepEqual(
        literal.items.map((scope) => scope.name),
        ['led_ger'],
      );
      assertProblem(await api.get('/scopes?search='), 400, 'search');
      assertProblem(await api.get('/scopes?limit=101'), 400, 'limit');
      assertProblem(await api.get('/scopes?name=ledger'), 400);
    });

    it('offline_access: a store left with the former default description gets today’s at start; an operator’s stays', async () => {
      const scopes = server.store.storage.scopes;
      const stored = async () => (await scopes.get('offline_access'))?.description;
      assert.equal(
        await stored(),
        'Keep access while you are away',
        'what the consent page lists (decision 17)',
      );
      const put = (description: string) =>
        scopes.upsert({ name: 'offline_access', description, createdAt: server.clock.now() });
      await put('Keep access while you are signed out');
      await server.gatehouse.engine.scopes.ensureBuiltIns();
      assert.equal(await stored(), 'Keep access while you are away');
      await put('Stay connected');
      await server.gatehouse.engine.scopes.ensureBuiltIns();
      assert.equal(await stored(), 'Stay connected');
      await put('Keep access while you are away');
    });

    it('creates (201, Location), reads, replaces, patches and deletes a scope', async () => {
      const created = await api.post('/scopes', { name: 'calendar:read', description: 'Read your calendar' });
      expectStatus(created, 201);
      assert.equal(locationPath(created), '/v1/scopes/calendar%3Aread');
      assertProblem(await api.post('/scopes', { name: 'calendar:read' }), 409, 'name');
      assertProblem(await api.post('/scopes', { name: 'has space' }), 400, 'name');
      const read = await api.get('/scopes/calendar%3Aread');
      expectStatus(read, 200);
      assert.equal((read.json as { description: string }).description, 'Read your calendar');

      const put = await api.put('/scopes/calendar%3Aread', { description: 'See your calendar' });
      expectStatus(put, 201);
      assertProblem(await api.put('/scopes/calendar%3Aread', {}), 400, 'description');
      const patch = await api.patch('/scopes/calendar%3Aread', { description: 'Look at your calendar' });
      expectStatus(patch, 201);
      assert.equal((patch.json as { description: string }).description, 'Look at your calendar');

      expectStatus(await api.delete('/scopes/calendar%3Aread'), 204);
      assertProblem(await api.get('/scopes/calendar%3Aread'), 404, 'name');
      assertProblem(await api.delete('/scopes/calendar%3Aread'), 404, 'name');
      assertProblem(await api.delete('/scopes/admin'), 409, 'name');
    });

    it('lists signing keys and rotates with POST; old and new tokens both validate', async () => {
      const listed = await api.get('/signing-keys');
      expectStatus(listed, 200);
      const before = (listed.json as { items: KeyBody[] }).items;
      // One active key per algorithm: the access tokens' (ES256) and RS256 for ID tokens.
      assert.deepEqual(
        before
          .filter((key) => key.status === 'active')
          .map((key) => key.alg)
          .sort(),
        ['ES256', 'RS256'],
      );
      assert.ok(!listed.text.includes('"d"'), 'no private key material');
      const oldToken = await clientCredentialsToken(server, ['admin']);

      const rotated = await api.post('/signing-keys');
      expectStatus(rotated, 201);
      const key = rotated.json as KeyBody;
      assert.equal(locationPath(rotated), `/v1/signing-keys/${key.kid}`);
      assert.equal(key.status, 'active');
      assert.equal(key.public_jwk.kid, key.kid);

      const after = (await api.get('/signing-keys')).json as { items: KeyBody[] };
      assert.equal(after.items.length, before.length + 2);
      for (const old of before) assert.equal(after.items.find((k) => k.kid === old.kid)?.status, 'retired');
      expectStatus(await api.get(`/signing-keys/${key.kid}`), 200);
      assertProblem(await api.get('/signing-keys/unknown'), 404, 'kid');

      const newToken = await clientCredentialsToken(server, ['admin']);
      assert.equal(decodeProtectedHeader(newToken.token.access_token).kid, key.kid);
      expectStatus(await apiClient(server, newToken.token).get('/signing-keys'), 200);
      expectStatus(await apiClient(server, oldToken.token).get('/signing-keys'), 200);
      const wrong = await api.delete('/signing-keys');
      assertProblem(wrong, 405);
      assert.equal(wrong.headers.allow, 'GET, HEAD, POST');
    });
  });

  describe(`/v1 when the store fails (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(backend);
    });
    after(async () => {
      await server.close();
    });

    it('answers 500 as a problem that reveals nothing', async () => {
      const { token } = await clientCredentialsToken(server, ['admin']);
      await server.store.storage.close();
      const res = await apiClient(server, token).get('/clients');
      const body = assertProblem(res, 500);
      assert.deepEqual(Object.keys(body).sort(), ['detail', 'status', 'title', 'type']);
      assert.doesNotMatch(res.text, /kysely|sqlite|postgres|pool|destroy|\.js/i);
    });
  });
}
