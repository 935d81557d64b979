import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  apiClient,
  assertProblem,
  clientCredentialsToken,
  expectStatus,
  tokenFor,
  type ApiClient,
} from '../helpers/api-requests.js';

interface EventBody {
  id: string;
  at: string;
  type: string;
  actor: { type: string; id: string | null } | null;
  user_id: string | null;
  client_id: string | null;
  address: string | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  detail: string | null;
}
interface ListBody {
  items: EventBody[];
  next_cursor: string | null;
}

/** Issue 30, point 4 (docs/decisions.md, decision 41): the audit log over /v1. */
for (const backend of backends()) {
  describe(`/v1/audit-events (${backend})`, () => {
    let server: TestServer;
    let api: ApiClient;
    let adminClientId: string;
    before(async () => {
      server = await startTestServer(backend);
      const admin = await clientCredentialsToken(server, ['admin']);
      adminClientId = admin.client.id;
      api = apiClient(server, admin.token);
    });
    after(async () => {
      await server.close();
    });

    const list = async (query: string): Promise<ListBody> => {
      const res = await api.get(`/audit-events?${query}`);
      expectStatus(res, 200);
      return res.json as ListBody;
    };

    it('records each change of a client over /v1: who, from where, before and after, and never its secret', async () => {
      const created = await api.post('/clients', {
        name: 'Audited',
        redirect_uris: ['https://audited.example/cb'],
      });
      expectStatus(created, 201);
      const { client_id: id, client_secret: firstSecret } = created.json as {
        client_id: string;
        client_secret: string;
      };
      expectStatus(await api.patch(`/clients/${id}`, { name: 'Audited, renamed' }), 201);
      const rotated = await api.post(`/clients/${id}/rotate-secret`);
      expectStatus(rotated, 201);
      const secondSecret = (rotated.json as { client_secret: string }).client_secret;
      expectStatus(await api.delete(`/clients/${id}`), 204);

      const { items, next_cursor } = await list(`client_id=${encodeURIComponent(id)}`);
      assert.equal(next_cursor, null);
      assert.deepEqual(
        items.map((e) => e.type),
        ['client.deleted', 'client.secret-rotated', 'client.updated', 'client.created'],
      );
      for (const event of items) {
        assert.deepEqual(event.actor, { type: 'client', id: adminClientId });
        assert.equal(event.client_id, id);
        assert.match(String(event.address), /127\.0\.0\.1|::1/);
        assert.ok(!Number.isNaN(Date.parse(event.at)));
      }
      const [deleted, , updated, createdEvent] = items;
      assert.equal(createdEvent?.before, null);
      assert.equal(createdEvent?.after?.name, 'Audited');
      assert.equal(updated?.before?.name, 'Audited');
      assert.equal(updated?.after?.name, 'Audited, renamed');
      assert.deepEqual(updated?.after?.redirect_uris, ['https://audited.example/cb']);
      assert.equal(deleted?.before?.name, 'Audited, renamed');
      assert.equal(deleted?.after, null);
      // Redaction by construction: the views hold no secret, nor its hash.
      const stored = JSON.stringify(items);
      for (const secret of [firstSecret, secondSecret]) assert.ok(!stored.includes(secret));
      assert.ok(!/secret_hash|secretHash/.test(stored));
    });

    it('records each change of an identity provider, before and after as the API shows it, never its secret', async () => {
      const secrets = ['upstream-secret-one-7d1c', 'upstream-secret-two-94be'];
      const created = await api.post('/identity-providers', {
        name: 'Audited IdP',
        authorization_endpoint: 'https://idp.example/authorize',
        token_endpoint: 'https://idp.example/token',
        userinfo_endpoint: 'https://idp.example/userinfo',
        client_id: 'gatehouse-at-idp',
        client_secret: secrets[0],
        claim_mapping: { subject: 'id' },
      });
      expectStatus(created, 201);
      const id = (created.json as { id: string }).id;
      expectStatus(
        await api.patch(`/identity-providers/${id}`, { name: 'Audited IdP 2', client_secret: secrets[1] }),
        201,
      );
      // A change refused records nothing.
      assertProblem(await api.patch(`/identity-providers/${id}`, { name: '' }), 400, 'name');
      expectStatus(await api.delete(`/identity-providers/${id}`), 204);
      const { items } = await list(
        'type=identity-provider.created,identity-provider.updated,identity-provider.deleted',
      );
      const ofIt = items.filter((e) => (e.after ?? e.before)?.id === id);
      assert.deepEqual(
        ofIt.map((e) => e.type),
        ['identity-provider.deleted', 'identity-provider.updated', 'identity-provider.created'],
      );
      for (const event of ofIt) assert.deepEqual(event.actor, { type: 'client', id: adminClientId });
      const [deleted, updated, createdEvent] = ofIt;
      assert.equal(createdEvent?.before, null);
      assert.equal(createdEvent?.after?.client_secret_set, true);
      assert.equal(updated?.before?.name, 'Audited IdP');
      assert.equal(updated?.after?.name, 'Audited IdP 2');
      assert.equal(deleted?.before?.name, 'Audited IdP 2');
      assert.equal(deleted?.after, null);
      assert.match(String(deleted?.detail), /0 user link/);
      // Every stored event, not only these: neither secret, sealed or not, anywhere.
      const stored = JSON.stringify(await server.store.storage.auditEvents.list({ limit: 10_000 }));
      for (const secret of secrets) assert.ok(!stored.includes(secret));
      assert.ok(!/sealed|clientSecretSealed|private_key/i.test(stored));
    });

    it('a change that fails records nothing', async () => {
      const before = await list('type=client.created&limit=200');
      assertProblem(await api.post('/clients', { name: '' }), 400, 'name');
      const afterwards = await list('type=client.created&limit=200');
      assert.deepEqual(afterwards.items, before.items);
    });

    it('filters by type (repeated or comma-separated), client and time', async () => {
      const a = await server.client({ name: 'filter a', grant_types: ['client_credentials'] });
      const b = await server.client({ name: 'filter b', grant_types: ['client_credentials'] });
      expectStatus(await api.patch(`/clients/${a.client.id}`, { name: 'filter a2' }), 201);
      expectStatus(await api.patch(`/clients/${b.client.id}`, { name: 'filter b2' }), 201);
      const ofA = await list(`client_id=${a.client.id}`);
      assert.deepEqual(
        ofA.items.map((e) => e.type),
        ['client.updated', 'client.created'],
      );
      const joined = await list(`client_id=${a.client.id}&type=client.updated,client.deleted`);
      const repeated = await list(`client_id=${a.client.id}&type=client.updated&type=client.deleted`);
      assert.deepEqual(
        joined.items.map((e) => e.type),
        ['client.updated'],
      );
      assert.deepEqual(repeated.items, joined.items);
      const at = Date.parse(ofA.items[0]!.at);
      const iso = (ms: number) => encodeURIComponent(new Date(ms).toISOString());
      assert.equal((await list(`client_id=${a.client.id}&since=${iso(at + 1000)}`)).items.length, 0);
      assert.equal((await list(`client_id=${a.client.id}&until=${iso(at)}`)).items.length, 0);
      assert.equal(
        (await list(`client_id=${a.client.id}&since=${iso(at)}&until=${iso(at + 1000)}`)).items.length,
        2,
      );
    });

    it('pages with next_cursor and a Link header, each event once', async () => {
      const { client } = await server.client({ name: 'paged', grant_types: ['client_credentials'] });
      for (let i = 0; i < 4; i++)
        expectStatus(await api.patch(`/clients/${client.id}`, { name: `paged ${i}` }), 201);
      const seen: string[] = [];
      let query = `client_id=${client.id}&limit=2`;
      for (let page = 0; page < 5; page++) {
        const res = await api.get(`/audit-events?${query}`);
        expectStatus(res, 200);
        const body = res.json as ListBody;
        seen.push(...body.items.map((e) => e.id));
        if (body.next_cursor === null) {
          assert.equal(res.headers.link, undefined);
          break;
        }
        const link = /^<([^>]+)>; rel="next"$/.exec(String(res.headers.link));
        assert.ok(link, String(res.headers.link));
        const next = new URL(link[1]!);
        assert.equal(next.searchParams.get('cursor'), body.next_cursor);
        assert.equal(next.searchParams.get('client_id'), client.id);
        query = next.search.slice(1);
      }
      assert.equal(seen.length, 5);
      assert.equal(new Set(seen).size, 5);
    });

    it('answers 400 naming the field for bad input', async () => {
      assertProblem(await api.get('/audit-events?since=yesterday'), 400, 'since');
      assertProblem(await api.get('/audit-events?until=2026-13-45'), 400, 'until');
      assertProblem(await api.get('/audit-events?cursor=not-a-cursor'), 400, 'cursor');
      assertProblem(await api.get('/audit-events?type=Not%20A%20Type'), 400, 'type');
      assertProblem(await api.get('/audit-events?limit=201'), 400, 'limit');
      assertProblem(await api.get('/audit-events?limit=0'), 400, 'limit');
    });

    it('needs the admin scope', async () => {
      const reader = await clientCredentialsToken(server, ['profile']);
      expectStatus(await apiClient(server, reader.token).get('/audit-events'), 403);
      expectStatus(await apiClient(server, undefined).get('/audit-events'), 401);
    });

    it("names an administrator's own token's user as the actor", async () => {
      const { user, password } = await server.user();
      await server.store.storage.users.update({ ...user, admin: true });
      const { client, secret } = await server.client({ grant_types: ['password'], scopes: ['admin'] });
      const token = await tokenFor(
        server,
        { grant_type: 'password', username: user.username, password, scope: 'admin' },
        { id: client.id, secret },
      );
      const asUser = apiClient(server, token);
      expectStatus(await asUser.patch(`/clients/${client.id}`, { name: 'changed by a person' }), 201);
      const { items } = await list(`client_id=${client.id}&type=client.updated`);
      assert.deepEqual(items[0]?.actor, { type: 'user', id: user.id });
    });
  });
}
