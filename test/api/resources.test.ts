import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
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

interface ResourceBody {
  uri: string;
  name: string | null;
  scopes: string[];
  created_at: string;
}

const MCP = 'https://tools.example/mcp';
/** A resource URI as one path segment (RFC 3986 §3.3: "/" and ":" percent-encoded). */
const segment = (uri: string) => `/resources/${encodeURIComponent(uri)}`;

for (const backend of backends()) {
  describe(`/v1/resources (${backend})`, () => {
    let server: TestServer;
    let api: ApiClient;
    before(async () => {
      server = await startTestServer(backend);
      api = apiClient(server, (await clientCredentialsToken(server, ['admin'])).token);
    });
    after(async () => {
      await server.close();
    });

    it('creates (201, Location by the canonical URI), reads, lists, replaces, patches and deletes', async () => {
      const created = await api.post('/resources', {
        uri: 'HTTPS://Tools.example:443/mcp',
        name: 'Tools',
        scopes: ['tools:run'],
      });
      expectStatus(created, 201);
      const body = created.json as ResourceBody;
      assert.deepEqual(
        { ...body, created_at: undefined },
        {
          uri: MCP,
          name: 'Tools',
          scopes: ['tools:run'],
          created_at: undefined,
        },
      );
      assert.equal(new Date(body.created_at).getTime(), server.clock.now() * 1000);
      assert.equal(locationPath(created), `/v1/resources/${encodeURIComponent(MCP)}`);
      // A scope first named here is registered, as clients create --scopes does.
      expectStatus(await api.get('/scopes/tools%3Arun'), 200);

      const read = await api.get(segment(MCP));
      expectStatus(read, 200);
      assert.deepEqual(read.json, body);
      expectStatus(await api.get(segment('https://tools.example:443/mcp')), 200);
      const listed = await api.get('/resources');
      expectStatus(listed, 200);
      assert.deepEqual((listed.json as { items: ResourceBody[] }).items, [body]);

      const patched = await api.patch(segment(MCP), { scopes: ['tools:run', 'tools:list'] });
      expectStatus(patched, 201);
      assert.deepEqual((patched.json as ResourceBody).scopes, ['tools:run', 'tools:list']);
      assert.equal((patched.json as ResourceBody).name, 'Tools', 'PATCH keeps what it does not name');
      const replaced = await api.put(segment(MCP), { scopes: ['tools:run'] });
      expectStatus(replaced, 201);
      assert.deepEqual(
        { name: (replaced.json as ResourceBody).name, scopes: (replaced.json as ResourceBody).scopes },
        { name: null, scopes: ['tools:run'] },
        'PUT takes the defaults for what it leaves out',
      );

      expectStatus(await api.delete(segment(MCP)), 204);
      assertProblem(await api.get(segment(MCP)), 404, 'uri');
      assertProblem(await api.delete(segment(MCP)), 404, 'uri');
      assertProblem(await api.patch(segment(MCP), { name: 'x' }), 404, 'uri');
    });

    it('pages resources by URI and searches their URI or name on the server', async () => {
      const made = ['https://ledger-a.example', 'https://ledger-b.example', 'https://files.example/x'];
      expectStatus(await api.post('/resources', { uri: made[0], name: 'Ledger A' }), 201);
      expectStatus(await api.post('/resources', { uri: made[1] }), 201);
      expectStatus(await api.post('/resources', { uri: made[2], name: 'The Ledger files' }), 201);
      const page = await api.get('/resources?search=LEDGER&limit=2');
      expectStatus(page, 200);
      const body = page.json as { items: ResourceBody[]; total: number; limit: number; offset: number };
      assert.equal(body.total, 3, 'two by URI, one by name');
      assert.deepEqual(
        body.items.map((r) => r.uri),
        [made[2], made[0]],
        'in URI order',
      );
      const rest = (await api.get('/resources?search=ledger&limit=2&offset=2')).json as typeof body;
      assert.deepEqual(
        rest.items.map((r) => r.uri),
        [made[1]],
      );
      assert.equal(((await api.get('/resources?search=nothing-like-it')).json as typeof body).total, 0);
      assertProblem(await api.get('/resources?offset=-1'), 400, 'offset');
      for (const uri of made) expectStatus(await api.delete(segment(uri)), 204);
    });

    it('answers bad input with problem+json naming the field, and changes nothing', async () => {
      expectStatus(await api.post('/resources', { uri: 'https://dup.example' }), 201);
      assertProblem(await api.post('/resources', { uri: 'https://dup.example/' }), 409, 'uri');
      assertProblem(await api.post('/resources', { uri: 'https://gatehouse.test' }), 409, 'uri');
      assertProblem(await api.post('/resources', { uri: 'https://x.example/#frag' }), 400, 'uri');
      assertProblem(await api.post('/resources', { uri: 'http://x.example' }), 400, 'uri');
      assertProblem(await api.post('/resources', { uri: 'not a uri' }), 400, 'uri');
      assertProblem(await api.post('/resources', { uri: 'https://x.example', scopes: ['a b'] }), 400);
      assertProblem(await api.post('/resources', { uri: 'https://x.example', extra: 1 }), 400);
      assertProblem(await api.post('/resources', {}), 400);
      assertProblem(await api.patch(segment('https://dup.example'), {}), 400);
      const listed = (await api.get('/resources')).json as { items: ResourceBody[] };
      assert.deepEqual(
        listed.items.map((item) => item.uri),
        ['https://dup.example'],
      );
    });

    it('addresses a long URI as one segment', async () => {
      const long = `https://long.example/${'segment/'.repeat(150)}end?tenant=1`;
      const created = await api.post('/resources', { uri: long });
      expectStatus(created, 201);
      expectStatus(await api.get(segment(long)), 200);
      expectStatus(await api.delete(segment(long)), 204);
    });

    it('needs the admin scope, and a token for Gatehouse itself', async () => {
      const plain = apiClient(server, (await clientCredentialsToken(server, ['profile'])).token);
      const denied = await plain.get('/resources');
      assertProblem(denied, 403);
      assertProblem(await apiClient(server, undefined).get('/resources'), 401);
      // An admin token issued for another resource server opens nothing here (RFC 8707).
      expectStatus(await api.post('/resources', { uri: 'https://other.example' }), 201);
      const { client, secret } = await server.client({
        grant_types: ['client_credentials'],
        scopes: ['admin'],
      });
      const res = await server.http.token(
        { grant_type: 'client_credentials', resource: 'https://other.example' },
        { id: client.id, secret },
      );
      expectStatus(res, 200);
      const elsewhere = apiClient(server, (res.json as { access_token: string }).access_token);
      const refused = assertProblem(await elsewhere.get('/resources'), 401);
      assert.equal(refused.error, 'invalid_token');
    });
  });
}
