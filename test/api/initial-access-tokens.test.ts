import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sha256 } from '../../src/shared/crypto.js';
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

interface TokenView {
  id: string;
  scopes: string[] | null;
  created_at: string;
  expires_at: string;
  expired: boolean;
  clients_registered: number;
}
interface Created extends TokenView {
  initial_access_token: string;
}
interface Page {
  items: TokenView[];
  total: number;
  limit: number;
  offset: number;
}
interface EventBody {
  type: string;
  actor: { type: string; id: string | null } | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

/** /v1/initial-access-tokens (RFC 7591 §3; decisions 20 and 41): what the console's Registrations page uses. */
for (const backend of backends()) {
  describe(`/v1/initial-access-tokens (${backend})`, () => {
    let server: TestServer;
    let api: ApiClient;
    let adminClientId: string;
    /** A new admin token (the clock moves in these tests, past the last one's expiry). */
    async function signInAdmin(): Promise<void> {
      const admin = await clientCredentialsToken(server, ['admin']);
      adminClientId = admin.client.id;
      api = apiClient(server, admin.token);
    }
    before(async () => {
      server = await startTestServer(backend, { dynamicRegistration: 'token' });
      await signInAdmin();
    });
    after(async () => {
      await server.close();
    });

    async function create(body: Record<string, unknown>): Promise<Created> {
      const res = await api.post('/initial-access-tokens', body);
      expectStatus(res, 201);
      const created = res.json as Created;
      assert.equal(locationPath(res), `/v1/initial-access-tokens/${created.id}`);
      return created;
    }

    it('makes a token shown once, which registers a client at /register, then reads, lists and deletes it', async () => {
      const created = await create({ expires_in: 3600, scopes: ['openid', 'payments'] });
      assert.match(created.initial_access_token, /^iat_/);
      assert.deepEqual(created.scopes, ['openid', 'payments']);
      assert.equal(created.expired, false);
      assert.equal(Date.parse(created.expires_at) - Date.parse(created.created_at), 3600_000);

      const registered = await server.http.request('/register', {
        body: JSON.stringify({ redirect_uris: ['https://partner.example/cb'], client_name: 'Partner' }),
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${created.initial_access_token}`,
        },
      });
      assert.equal(registered.status, 201, registered.text);
      const clientId = (registered.json as { client_id: string }).client_id;
      const byToken = await api.get('/clients?registration=token');
      expectStatus(byToken, 200);
      assert.ok(
        (byToken.json as { items: { client_id: string }[] }).items.some((c) => c.client_id === clientId),
      );
      // Every self-registered client at once: the registration filter repeated (the console's list).
      const selfRegistered = await api.get('/clients?registration=token&registration=open&limit=100');
      expectStatus(selfRegistered, 200);
      const ways = (selfRegistered.json as { items: { client_id: string; registration: string }[] }).items;
      assert.ok(ways.some((c) => c.client_id === clientId));
      assert.ok(ways.length > 0 && ways.every((c) => c.registration !== 'operator'));
      const operators = (await api.get('/clients?registration=operator&limit=100')).json as {
        items: { client_id: string }[];
      };
      assert.ok(operators.items.length > 0, 'the admin client');
      assert.ok(!operators.items.some((c) => c.client_id === clientId));
      assertProblem(await api.get('/clients?registration=token&registration=nobody'), 400, 'registration');

      const read = await api.get(`/initial-access-tokens/${created.id}`);
      expectStatus(read, 200);
      const { initial_access_token: token, ...view } = created;
      assert.deepEqual(read.json, { ...view, clients_registered: 1 });
      assert.ok(!read.text.includes(token), 'never the token again');

      const listed = await api.get('/initial-access-tokens');
      expectStatus(listed, 200);
      assert.ok(!listed.text.includes(token));
      assert.ok((listed.json as Page).items.some((item) => item.id === created.id));

      expectStatus(await api.delete(`/initial-access-tokens/${created.id}`), 204);
      assertProblem(await api.get(`/initial-access-tokens/${created.id}`), 404, 'id');
      assertProblem(await api.delete(`/initial-access-tokens/${created.id}`), 404, 'id');
      // Deleted, it registers nothing more; the client it registered stays.
      const refused = await server.http.request('/register', {
        body: JSON.stringify({ redirect_uris: ['https://partner.example/cb'] }),
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      });
      assert.equal(refused.status, 401, refused.text);
      expectStatus(await api.get(`/clients/${clientId}`), 200);
    });

    it('pages oldest first with total, limit and offset', async () => {
      const made: Created[] = [];
      for (let i = 0; i < 3; i++) {
        made.push(await create({}));
        server.clock.advance(1);
      }
      const all = (await api.get('/initial-access-tokens?limit=100')).json as Page;
      const at = all.items.findIndex((item) => item.id === made[0]!.id);
      assert.ok(at >= 0);
      const page = await api.get(`/initial-access-tokens?limit=2&offset=${at + 1}`);
      expectStatus(page, 200);
      const body = page.json as Page;
      assert.equal(body.total, all.total);
      assert.equal(body.limit, 2);
      assert.equal(body.offset, at + 1);
      assert.deepEqual(
        body.items.map((item) => item.id),
        [made[1]!.id, made[2]!.id],
      );
      // A day unless told, and expired ones marked as such until the purge takes them.
      assert.equal(Date.parse(made[0]!.expires_at) - Date.parse(made[0]!.created_at), 86_400_000);
      assert.equal(made[0]!.scopes, null);
      server.clock.advance(86_400);
      await signInAdmin();
      const later = (await api.get(`/initial-access-tokens/${made[0]!.id}`)).json as TokenView;
      assert.equal(later.expired, true);
    });

    it('answers 400 naming the field, and changes nothing', async () => {
      const before = ((await api.get('/initial-access-tokens')).json as Page).total;
      assertProblem(await api.post('/initial-access-tokens', { expires_in: 59 }), 400, 'expires_in');
      assertProblem(await api.post('/initial-access-tokens', { expires_in: 1.5 }), 400, 'expires_in');
      assertProblem(await api.post('/initial-access-tokens', { scopes: ['admin'] }), 400, 'scopes');
      assertProblem(await api.post('/initial-access-tokens', { scopes: ['has space'] }), 400, 'scopes.0');
      assertProblem(await api.post('/initial-access-tokens', { token: 'mine' }), 400);
      assertProblem(await api.get('/initial-access-tokens?limit=0'), 400, 'limit');
      assert.equal(((await api.get('/initial-access-tokens')).json as Page).total, before);
    });

    it('needs the admin scope', async () => {
      const reader = await clientCredentialsToken(server, ['profile']);
      const plain = apiClient(server, reader.token);
      expectStatus(await plain.get('/initial-access-tokens'), 403);
      expectStatus(await plain.post('/initial-access-tokens', {}), 403);
      expectStatus(await apiClient(server, undefined).get('/initial-access-tokens'), 401);
    });

    it('records its making and deletion, by whom, and never the token (decision 41)', async () => {
      const created = await create({ scopes: ['openid'] });
      expectStatus(await api.delete(`/initial-access-tokens/${created.id}`), 204);
      const res = await api.get(
        '/audit-events?type=initial-access-token.created,initial-access-token.deleted&limit=200',
      );
      expectStatus(res, 200);
      const events = (res.json as { items: EventBody[] }).items.filter(
        (event) => (event.after ?? event.before)?.id === created.id,
      );
      assert.deepEqual(
        events.map((event) => event.type),
        ['initial-access-token.deleted', 'initial-access-token.created'],
      );
      for (const event of events) assert.deepEqual(event.actor, { type: 'client', id: adminClientId });
      assert.deepEqual(events[1]?.after?.scopes, ['openid']);
      const stored = JSON.stringify(await server.store.storage.auditEvents.list({ limit: 1000 }));
      assert.ok(!stored.includes(created.initial_access_token));
      assert.ok(!stored.includes(created.initial_access_token.slice(4)));
      assert.ok(!stored.includes(sha256(created.initial_access_token)), 'nor its hash');
    });
  });
}
