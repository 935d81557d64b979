import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sha256 } from '../../src/shared/crypto.js';
import { backends } from '../helpers/backends.js';
import { basicAuth } from '../helpers/https-client.js';
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
} from '../helpers/api-requests.js';

interface ClientBody {
  client_id: string;
  name: string;
  redirect_uris: string[];
  grant_types: string[];
  scopes: string[];
  token_type: string;
  public: boolean;
  created_at: string;
  updated_at: string;
  client_secret?: string;
}

for (const backend of backends()) {
  describe(`/v1/clients (${backend})`, () => {
    let server: TestServer;
    let api: ApiClient;
    before(async () => {
      server = await startTestServer(backend);
      api = apiClient(server, (await clientCredentialsToken(server, ['admin'])).token);
    });
    after(async () => {
      await server.close();
    });

    async function create(input: Record<string, unknown>): Promise<ClientBody> {
      const res = await api.post('/clients', input);
      expectStatus(res, 201);
      return res.json as ClientBody;
    }
    async function total(): Promise<number> {
      return ((await api.get('/clients')).json as { total: number }).total;
    }

    it('POST creates: 201, Location, the secret once; GET reads it back without the secret', async () => {
      const res = await api.post('/clients', {
        name: 'Billing',
        grant_types: ['client_credentials'],
        scopes: ['invoices'],
      });
      expectStatus(res, 201);
      const created = res.json as ClientBody;
      assert.equal(locationPath(res), `/v1/clients/${created.client_id}`);
      assert.match(created.client_secret ?? '', /^cs_/);
      assert.deepEqual(created.scopes, ['invoices']);
      assert.equal(created.token_type, 'bearer');
      assert.equal(created.public, false);

      const read = await api.get(`/clients/${created.client_id}`);
      expectStatus(read, 200);
      const withoutSecret: Partial<ClientBody> = { ...created };
      delete withoutSecret.client_secret;
      assert.deepEqual(read.json, withoutSecret);
      // (The method's name, client_secret_basic, is the one "secret" a client's record shows.)
      const secret = created.client_secret as string;
      for (const leak of ['"client_secret"', 'secret_hash', secret, sha256(secret)]) {
        assert.ok(!read.text.includes(leak), 'no secret (or its hash) is ever read back');
      }

      // The secret works at the token endpoint, and the new scope was registered.
      await tokenFor(
        server,
        { grant_type: 'client_credentials' },
        { id: created.client_id, secret: created.client_secret as string },
      );
      expectStatus(await api.get('/scopes/invoices'), 200);
    });

    it('POST with a bad body answers 400 naming the field, and creates nothing', async () => {
      const before = await total();
      const cases: Array<[unknown, string]> = [
        [{ name: 'x', extra: true }, 'extra'],
        [{ name: 'x', public: 'yes' }, 'public'],
        [{}, 'name'],
        [{ name: 'x', grant_types: ['magic'] }, 'grant_types.0'],
        [{ name: 'x', redirect_uris: ['http://evil.example/cb'] }, 'redirect_uris'],
        [{ name: 'x', public: true, grant_types: ['client_credentials'] }, 'grant_types'],
        ['{"name": ', 'body'],
        [[1, 2], 'body'],
      ];
      for (const [body, field] of cases) {
        assertProblem(await api.post('/clients', body), 400, field);
      }
      assertProblem(await api.send('POST', '/clients'), 400, 'body');
      assert.equal(await total(), before);
    });

    it('GET lists with filters and pagination in the query string', async () => {
      for (let i = 0; i < 3; i++) await create({ name: 'paged', grant_types: ['client_credentials'] });
      await create({ name: 'paged', grant_types: ['password'] });
      const first = await api.get('/clients?name=paged&grant_type=client_credentials&limit=2');
      expectStatus(first, 200);
      const page1 = first.json as { items: ClientBody[]; total: number; limit: number; offset: number };
      assert.equal(page1.total, 3);
      assert.equal(page1.items.length, 2);
      assert.equal(page1.limit, 2);
      assert.equal(page1.offset, 0);
      const page2 = (await api.get('/clients?name=paged&grant_type=client_credentials&limit=2&offset=2'))
        .json as { items: ClientBody[] };
      assert.equal(page2.items.length, 1);
      const ids = new Set([...page1.items, ...page2.items].map((c) => c.client_id));
      assert.equal(ids.size, 3);
      assert.ok([...page1.items, ...page2.items].every((c) => c.grant_types.includes('client_credentials')));

      assertProblem(await api.get('/clients?limit=0'), 400, 'limit');
      assertProblem(await api.get('/clients?limit=ten'), 400, 'limit');
      assertProblem(await api.get('/clients?grant_type=magic'), 400, 'grant_type');
      assertProblem(await api.get('/clients?colour=red'), 400, 'colour');
    });

    it('PUT replaces the whole client (201) and needs its name', async () => {
      const client = await create({ name: 'old', grant_types: ['client_credentials'], scopes: ['a'] });
      assertProblem(await api.put(`/clients/${client.client_id}`, { scopes: ['b'] }), 400, 'name');
      const replacement = {
        name: 'new',
        redirect_uris: ['https://app.example/cb'],
        grant_types: ['authorization_code', 'refresh_token'],
        scopes: ['b'],
        token_type: 'mac',
        public: false,
      };
      const res = await api.put(`/clients/${client.client_id}`, replacement);
      expectStatus(res, 201);
      const replaced = res.json as ClientBody;
      assert.equal(replaced.client_secret, undefined, 'a confidential client keeps its secret');
      const read = (await api.get(`/clients/${client.client_id}`)).json as ClientBody;
      for (const [key, value] of Object.entries(replacement)) {
        assert.deepEqual(read[key as keyof ClientBody], value, key);
      }
    });

    it('PUT making a client public drops its secret; making it confidential again returns a new one', async () => {
      const client = await create({ name: 'flip', redirect_uris: ['https://flip.example/cb'] });
      const fields = {
        name: 'flip',
        redirect_uris: ['https://flip.example/cb'],
        grant_types: ['authorization_code'],
        scopes: [],
        token_type: 'bearer',
      };
      expectStatus(await api.put(`/clients/${client.client_id}`, { ...fields, public: true }), 201);
      const back = await api.put(`/clients/${client.client_id}`, { ...fields, public: false });
      expectStatus(back, 201);
      const secret = (back.json as ClientBody).client_secret;
      assert.match(secret ?? '', /^cs_/);
      assert.notEqual(secret, client.client_secret);
    });

    it('PATCH changes only the fields sent (201); an empty patch is 400', async () => {
      const client = await create({ name: 'patchme', grant_types: ['client_credentials'], scopes: ['x'] });
      const res = await api.patch(`/clients/${client.client_id}`, { name: 'patched' });
      expectStatus(res, 201);
      const patched = res.json as ClientBody;
      assert.equal(patched.name, 'patched');
      assert.deepEqual(patched.scopes, ['x']);
      assert.deepEqual(patched.grant_types, ['client_credentials']);
      assertProblem(await api.patch(`/clients/${client.client_id}`, {}), 400);
      assertProblem(
        await api.patch(`/clients/${client.client_id}`, { token_type: 'jwt' }),
        400,
        'token_type',
      );
      assert.equal(((await api.get(`/clients/${client.client_id}`)).json as ClientBody).name, 'patched');
    });

    it('require_pushed_authorization_requests (RFC 9126 §6): false by default, set by POST, changed by PATCH and PUT', async () => {
      const plain = await create({ name: 'no par', redirect_uris: ['https://par.example/cb'] });
      assert.equal(
        (plain as ClientBody & Record<string, unknown>).require_pushed_authorization_requests,
        false,
      );
      const strict = await create({
        name: 'par only',
        redirect_uris: ['https://par.example/cb'],
        require_pushed_authorization_requests: true,
      });
      const field = (body: unknown) =>
        (body as Record<string, unknown>).require_pushed_authorization_requests;
      assert.equal(field(strict), true);
      assert.equal(field((await api.get(`/clients/${strict.client_id}`)).json), true);
      const patched = await api.patch(`/clients/${strict.client_id}`, {
        require_pushed_authorization_requests: false,
      });
      expectStatus(patched, 201);
      assert.equal(field(patched.json), false);
      assert.equal(
        (await server.store.storage.clients.get(strict.client_id))?.requirePushedAuthorizationRequests,
        false,
      );
      // PUT: left out, the field takes its default again.
      await api.patch(`/clients/${strict.client_id}`, { require_pushed_authorization_requests: true });
      const replaced = await api.put(`/clients/${strict.client_id}`, {
        name: 'par only',
        redirect_uris: ['https://par.example/cb'],
      });
      expectStatus(replaced, 201);
      assert.equal(field(replaced.json), false);
      assertProblem(
        await api.post('/clients', { name: 'x', require_pushed_authorization_requests: 'yes' }),
        400,
        'require_pushed_authorization_requests',
      );
    });

    it('require_mfa (decision 34): false by default, set by POST and PATCH, in the OpenAPI document', async () => {
      const field = (body: unknown) => (body as Record<string, unknown>).require_mfa;
      const plain = await create({ name: 'one factor', redirect_uris: ['https://one.example/cb'] });
      assert.equal(field(plain), false);
      const strict = await create({
        name: 'two factors',
        redirect_uris: ['https://two.example/cb'],
        require_mfa: true,
      });
      assert.equal(field(strict), true);
      assert.equal(field((await api.get(`/clients/${strict.client_id}`)).json), true);
      assert.equal((await server.store.storage.clients.get(strict.client_id))?.requireMfa, true);
      const patched = await api.patch(`/clients/${strict.client_id}`, { require_mfa: false });
      expectStatus(patched, 201);
      assert.equal(field(patched.json), false);
      assertProblem(await api.post('/clients', { name: 'x', require_mfa: 'yes' }), 400, 'require_mfa');
      const openapi = await server.http.request('/v1/openapi', { headers: { accept: 'application/json' } });
      assert.match(JSON.stringify(openapi.json), /"require_mfa"/);
    });

    it('dpop_bound_access_tokens (RFC 9449 §5.2): false by default, set by POST and PATCH; never with MAC or implicit', async () => {
      const field = (body: unknown) => (body as Record<string, unknown>).dpop_bound_access_tokens;
      const plain = await create({ name: 'unbound', grant_types: ['client_credentials'] });
      assert.equal(field(plain), false);
      const bound = await create({
        name: 'bound',
        grant_types: ['client_credentials'],
        dpop_bound_access_tokens: true,
      });
      assert.equal(field(bound), true);
      assert.equal(field((await api.get(`/clients/${bound.client_id}`)).json), true);
      const patched = await api.patch(`/clients/${bound.client_id}`, { dpop_bound_access_tokens: false });
      expectStatus(patched, 201);
      assert.equal(field(patched.json), false);
      assert.equal((await server.store.storage.clients.get(bound.client_id))?.dpopBoundAccessTokens, false);
      assertProblem(
        await api.post('/clients', { name: 'x', dpop_bound_access_tokens: 'yes' }),
        400,
        'dpop_bound_access_tokens',
      );
      assertProblem(
        await api.post('/clients', {
          name: 'x',
          grant_types: ['client_credentials'],
          token_type: 'mac',
          dpop_bound_access_tokens: true,
        }),
        400,
        'dpop_bound_access_tokens',
      );
      assertProblem(
        await api.post('/clients', {
          name: 'x',
          redirect_uris: ['https://implicit.example/cb'],
          grant_types: ['implicit'],
          dpop_bound_access_tokens: true,
        }),
        400,
        'dpop_bound_access_tokens',
      );
    });

    it('DELETE answers 204, then 404; the client’s tokens stop working', async () => {
      const client = await create({ name: 'doomed', grant_types: ['client_credentials'], scopes: ['admin'] });
      const token = await tokenFor(
        server,
        { grant_type: 'client_credentials' },
        { id: client.client_id, secret: client.client_secret as string },
      );
      expectStatus(await apiClient(server, token).get('/clients?limit=1'), 200);
      const res = await api.delete(`/clients/${client.client_id}`);
      expectStatus(res, 204);
      assert.equal(res.text, '');
      assertProblem(await api.get(`/clients/${client.client_id}`), 404, 'id');
      assertProblem(await api.delete(`/clients/${client.client_id}`), 404, 'id');
      assertProblem(await apiClient(server, token).get('/clients?limit=1'), 401);
    });

    it('POST rotate-secret returns a new secret once; the old one stops working', async () => {
      const client = await create({ name: 'rotating', grant_types: ['client_credentials'] });
      const res = await api.post(`/clients/${client.client_id}/rotate-secret`);
      expectStatus(res, 201);
      assert.equal(locationPath(res), `/v1/clients/${client.client_id}`);
      const { client_secret: secret } = res.json as { client_secret: string };
      assert.notEqual(secret, client.client_secret);
      const old = await server.http.token(
        { grant_type: 'client_credentials' },
        { id: client.client_id, secret: client.client_secret as string },
      );
      expectStatus(old, 401);
      await tokenFor(server, { grant_type: 'client_credentials' }, { id: client.client_id, secret });

      const spa = await create({
        name: 'spa',
        public: true,
        redirect_uris: ['https://spa.example/cb'],
        grant_types: ['authorization_code'],
      });
      assertProblem(await api.post(`/clients/${spa.client_id}/rotate-secret`), 409, 'public');
    });

    it('accepts the access token in a form body where the route takes no JSON body (RFC 6750 §2.2)', async () => {
      const client = await create({ name: 'form', grant_types: ['client_credentials'] });
      const admin = await clientCredentialsToken(server, ['admin']);
      const res = await server.http.request(`/v1/clients/${client.client_id}/rotate-secret`, {
        form: { access_token: admin.token.access_token },
      });
      expectStatus(res, 201);
      // …but a route that takes a JSON body does not take a form (415), nor any other media type.
      const form = await server.http.request('/v1/clients', {
        form: { access_token: admin.token.access_token, name: 'sneaky' },
      });
      assertProblem(form, 415);
      const text = await server.http.request('/v1/clients', {
        body: 'name=x',
        headers: { ...bearer(admin.token), 'content-type': 'text/plain' },
      });
      assertProblem(text, 415);
    });

    it('lists a client’s standing grants and revokes one with DELETE, ending its tokens', async () => {
      const client = await create({
        name: 'with grants',
        grant_types: ['password', 'refresh_token'],
        scopes: ['profile'],
      });
      const { user, password } = await server.user();
      const token = await tokenFor(
        server,
        { grant_type: 'password', username: user.username, password },
        { id: client.client_id, secret: client.client_secret as string },
      );
      const list = await api.get(`/clients/${client.client_id}/grants`);
      expectStatus(list, 200);
      const { items } = list.json as { items: Array<{ id: string; user_id: string; scopes: string[] }> };
      assert.equal(items.length, 1);
      assert.equal(items[0]!.user_id, user.id);
      assert.deepEqual(items[0]!.scopes, ['profile']);
      expectStatus(await server.http.request('/v1/users/me', { headers: bearer(token) }), 200);

      const other = await create({ name: 'other', grant_types: ['client_credentials'] });
      assertProblem(await api.delete(`/clients/${other.client_id}/grants/${items[0]!.id}`), 404, 'grantId');

      expectStatus(await api.delete(`/clients/${client.client_id}/grants/${items[0]!.id}`), 204);
      assertProblem(await server.http.request('/v1/users/me', { headers: bearer(token) }), 401);
      const refresh = await server.http.request('/token', {
        form: { grant_type: 'refresh_token', refresh_token: token.refresh_token as string },
        headers: { authorization: basicAuth(client.client_id, client.client_secret as string) },
      });
      expectStatus(refresh, 400);
      assert.deepEqual((await api.get(`/clients/${client.client_id}/grants`)).json, {
        items: [],
        total: 0,
        limit: 20,
        offset: 0,
      });
      assertProblem(await api.delete(`/clients/${client.client_id}/grants/${items[0]!.id}`), 404);
    });

    it('pages a client’s grants on the server (limit, offset, total), and a user’s at one client', async () => {
      const client = await create({ name: 'many grants', grant_types: ['password'], scopes: ['profile'] });
      const people = [await server.user(), await server.user(), await server.user()];
      for (const { user, password } of people) {
        await tokenFor(
          server,
          { grant_type: 'password', username: user.username, password },
          { id: client.client_id, secret: client.client_secret as string },
        );
      }
      type Page = {
        items: Array<{ id: string; user_id: string }>;
        total: number;
        limit: number;
        offset: number;
      };
      const first = (await api.get(`/clients/${client.client_id}/grants?limit=2`)).json as Page;
      const second = (await api.get(`/clients/${client.client_id}/grants?limit=2&offset=2`)).json as Page;
      assert.equal(first.items.length, 2);
      assert.equal(second.items.length, 1);
      assert.deepEqual([first.total, first.limit, first.offset, second.offset], [3, 2, 0, 2]);
      assert.deepEqual(
        new Set([...first.items, ...second.items].map((grant) => grant.user_id)),
        new Set(people.map(({ user }) => user.id)),
      );
      const mine = (await api.get(`/users/${people[1]!.user.id}/grants?client_id=${client.client_id}`))
        .json as Page;
      assert.deepEqual(
        mine.items.map((grant) => grant.user_id),
        [people[1]!.user.id],
      );
      assert.equal(
        ((await api.get(`/users/${people[1]!.user.id}/grants?client_id=nobody`)).json as Page).total,
        0,
      );
      assertProblem(await api.get(`/clients/${client.client_id}/grants?limit=0`), 400, 'limit');
    });

    it('answers 404 for a missing client on every verb, doing nothing', async () => {
      const before = await total();
      assertProblem(await api.get('/clients/nope'), 404, 'id');
      assertProblem(
        await api.put('/clients/nope', {
          name: 'n',
          redirect_uris: [],
          grant_types: ['client_credentials'],
          scopes: [],
          token_type: 'bearer',
          public: false,
        }),
        404,
        'id',
      );
      assertProblem(await api.patch('/clients/nope', { name: 'n' }), 404, 'id');
      assertProblem(await api.delete('/clients/nope'), 404, 'id');
      assertProblem(await api.post('/clients/nope/rotate-secret'), 404, 'id');
      assertProblem(await api.get('/clients/nope/grants'), 404, 'id');
      assert.equal(await total(), before);
    });

    it('needs a token (401) with scope admin (403), and answers 405 with Allow', async () => {
      const none = await apiClient(server, undefined).get('/clients');
      assertProblem(none, 401);
      assert.match(
        String(none.headers['www-authenticate']),
        /^Bearer realm="gatehouse", resource_metadata="[^"]+", DPoP /,
      );
      const profileOnly = await clientCredentialsToken(server, ['profile']);
      const forbidden = await apiClient(server, profileOnly.token).post('/clients', { name: 'x' });
      assert.equal(assertProblem(forbidden, 403).error, 'insufficient_scope');
      assert.match(
        String(forbidden.headers['www-authenticate']),
        /error="insufficient_scope".*scope="admin"/,
      );

      const wrong = await api.patch('/clients', { name: 'x' });
      assertProblem(wrong, 405);
      assert.equal(wrong.headers.allow, 'GET, HEAD, POST');
      const wrongItem = await api.post('/clients/abc', {});
      assert.equal(assertProblem(wrongItem, 405) && wrongItem.headers.allow, 'DELETE, GET, HEAD, PATCH, PUT');
    });

    it('answers a body over the size limit with 413', async () => {
      const res = await api.post('/clients', { name: 'big', redirect_uris: ['x'.repeat(20_000)] });
      assertProblem(res, 413);
    });
  });
}
