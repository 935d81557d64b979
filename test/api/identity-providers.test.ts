import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { FederatedLink } from '../../src/core/model.js';
import { backends } from '../helpers/backends.js';
import { freePort } from '../helpers/spawned-server.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  apiClient,
  assertProblem,
  clientCredentialsToken,
  expectStatus,
  locationPath,
  type ApiClient,
} from '../helpers/api-requests.js';

const SECRET = 'the-upstream-client-secret-4f9a';

interface ProviderBody {
  id: string;
  name: string;
  kind: string;
  issuer: string | null;
  authorization_endpoint: string | null;
  token_endpoint: string | null;
  userinfo_endpoint: string | null;
  client_id: string;
  client_auth: string;
  client_secret_set: boolean;
  public_jwk: Record<string, string> | null;
  scopes: string[];
  claim_mapping: Record<string, string>;
  link_by_verified_email: boolean;
  trust_upstream_assurance: boolean;
  required_acr: string | null;
  logo_uri: string | null;
  redirect_uri: string;
  created_at: string;
  updated_at: string;
}

const github = (overrides: Record<string, unknown> = {}) => ({
  name: 'GitHub',
  authorization_endpoint: 'https://github.example/login/oauth/authorize',
  token_endpoint: 'https://github.example/login/oauth/access_token',
  userinfo_endpoint: 'https://api.github.example/user',
  client_id: 'Iv1.abc',
  client_secret: SECRET,
  claim_mapping: { subject: 'id', username: 'login' },
  ...overrides,
});

for (const backend of backends()) {
  describe(`/v1/identity-providers (${backend})`, () => {
    /** A second Gatehouse over HTTPS: the upstream OpenID Provider discovery reaches. */
    let upstream: TestServer;
    let upstreamIssuer: string;
    let server: TestServer;
    let api: ApiClient;
    before(async () => {
      // Discovery §4.3: the metadata's issuer must be the URL it is fetched under.
      const port = await freePort();
      upstreamIssuer = `https://localhost:${port}`;
      upstream = await startTestServer(backend, { port, issuer: upstreamIssuer }, { transport: 'https' });
      // The server under test trusts the upstream's development certificate (as NODE_EXTRA_CA_CERTS would).
      server = await startTestServer(backend, {}, { outboundCa: upstream.ca });
      api = apiClient(server, (await clientCredentialsToken(server, ['admin'])).token);
    });
    after(async () => {
      await server?.close();
      await upstream?.close();
    });

    async function create(body: Record<string, unknown>): Promise<ProviderBody> {
      const res = await api.post('/identity-providers', body);
      expectStatus(res, 201);
      return res.json as ProviderBody;
    }
    const total = async () => ((await api.get('/identity-providers')).json as { total: number }).total;
    const oidc = (overrides: Record<string, unknown> = {}) => ({
      name: `Acme ${randomUUID().slice(0, 6)}`,
      issuer: upstreamIssuer,
      client_id: 'gatehouse',
      client_secret: SECRET,
      ...overrides,
    });

    it('POST an OpenID Provider: discovered, 201 with Location and the redirect URI; the secret never comes back', async () => {
      const res = await api.post(
        '/identity-providers',
        oidc({ name: 'Acme SSO', link_by_verified_email: true }),
      );
      expectStatus(res, 201);
      const created = res.json as ProviderBody;
      assert.equal(created.id, 'acme-sso');
      assert.equal(locationPath(res), '/v1/identity-providers/acme-sso');
      assert.equal(created.redirect_uri, 'https://gatehouse.test/sign-in/callback/acme-sso');
      assert.equal(created.kind, 'oidc');
      assert.equal(created.issuer, upstreamIssuer);
      // The upstream Gatehouse's own endpoints, as its discovery document has them.
      assert.equal(created.authorization_endpoint, `${upstreamIssuer}/authorize`);
      assert.equal(created.token_endpoint, `${upstreamIssuer}/token`);
      assert.equal(created.userinfo_endpoint, `${upstreamIssuer}/userinfo`);
      assert.equal(created.client_auth, 'client_secret_basic');
      assert.equal(created.client_secret_set, true);
      assert.deepEqual(created.scopes, ['openid', 'email', 'profile']);
      assert.equal(created.claim_mapping.subject, 'sub');
      assert.equal(created.link_by_verified_email, true);

      const read = await api.get('/identity-providers/acme-sso');
      expectStatus(read, 200);
      assert.deepEqual(read.json, created);
      const listed = await api.get('/identity-providers');
      for (const text of [res.text, read.text, listed.text]) {
        assert.ok(!text.includes(SECRET), 'the secret is write-only');
        assert.ok(!text.includes('"client_secret"'));
        assert.ok(!text.includes('sealed'));
      }
      const stored = await server.gatehouse.storage.identityProviders.get('acme-sso');
      assert.ok(stored?.clientSecretSealed && !stored.clientSecretSealed.includes(SECRET), 'stored sealed');
    });

    it('POST refuses an issuer whose discovery fails, saying why, and creates nothing', async () => {
      const before = await total();
      const missing = assertProblem(
        await api.post('/identity-providers', oidc({ issuer: `${upstreamIssuer}/tenant` })),
        400,
        'issuer',
      );
      assert.match(String(missing.detail), /discovery failed at .*\/tenant: HTTP 404/);
      const nobody = `https://localhost:${await freePort()}`;
      const refused = assertProblem(
        await api.post('/identity-providers', oidc({ issuer: nobody })),
        400,
        'issuer',
      );
      assert.match(String(refused.detail), /discovery failed at .*: the connection was refused/);
      // The same server under another name: its metadata names its own issuer (Discovery §4.3).
      const renamed = upstreamIssuer.replace('localhost', '127.0.0.1');
      const mixUp = assertProblem(
        await api.post('/identity-providers', oidc({ issuer: renamed })),
        400,
        'issuer',
      );
      assert.match(
        String(mixUp.detail),
        /discovery failed at https:\/\/127[^:]*:\d+: the discovery document names the issuer "https:\/\/localhost:\d+"/,
      );
      assert.equal(await total(), before);
    });

    it('POST with bad input answers 400 naming the field, and creates nothing', async () => {
      const before = await total();
      const cases: Array<[unknown, string]> = [
        [{ ...github(), extra: true }, 'extra'],
        [{ ...github(), name: undefined }, 'name'],
        [{ ...github(), client_auth: 'mtls' }, 'client_auth'],
        [{ ...github(), scopes: ['ok', 'bad scope'] }, 'scopes.1'],
        [{ ...github(), id: 'Not A Slug' }, 'id'],
        [{ ...github(), claim_mapping: { groups: 'g' } }, 'claim_mapping.groups'],
        [github({ claim_mapping: {} }), 'claim_mapping.subject'],
        [github({ client_secret: undefined }), 'client_secret'],
        [github({ client_auth: 'none' }), 'client_secret'],
        [github({ userinfo_endpoint: null }), 'userinfo_endpoint'],
        [github({ token_endpoint: 'http://github.example/token' }), 'token_endpoint'],
        [oidc({ issuer: 'http://idp.example' }), 'issuer'],
        [oidc({ token_endpoint: 'https://idp.example/token' }), 'token_endpoint'],
        [oidc({ scopes: ['email'] }), 'scopes'],
        [github({ logo_uri: 'javascript:alert(1)' }), 'logo_uri'],
        ['{"name": ', 'body'],
      ];
      for (const [body, field] of cases) {
        const problem = assertProblem(await api.post('/identity-providers', body), 400, field);
        assert.ok(!String(problem.detail).includes(SECRET), 'never the secret');
      }
      assert.equal(await total(), before);
    });

    it('POST with an id taken answers 409 naming id; GET, PUT, PATCH and DELETE of no provider 404', async () => {
      await create(github({ name: 'GitHub', id: 'gh-taken' }));
      const conflict = assertProblem(
        await api.post('/identity-providers', github({ id: 'gh-taken' })),
        409,
        'id',
      );
      assert.match(String(conflict.detail), /gh-taken/);
      for (const path of ['/identity-providers/nope', '/identity-providers/Not%20An%20Id']) {
        assertProblem(await api.get(path), 404, 'id');
        assertProblem(await api.put(path, github()), 404, 'id');
        assertProblem(await api.patch(path, { name: 'x' }), 404, 'id');
        assertProblem(await api.delete(path), 404, 'id');
      }
    });

    it('GET lists in name order, paged with limit and offset', async () => {
      const prefix = `zz-${randomUUID().slice(0, 6)}`;
      for (const letter of ['c', 'a', 'b']) {
        await create(github({ name: `${prefix} ${letter}`, id: `${prefix}-${letter}` }));
      }
      const all = (await api.get('/identity-providers?limit=100')).json as { total: number };
      const page = await api.get(`/identity-providers?limit=2&offset=${all.total - 3}`);
      expectStatus(page, 200);
      const body = page.json as { items: ProviderBody[]; total: number; limit: number; offset: number };
      assert.deepEqual(
        body.items.map((item) => item.id),
        [`${prefix}-a`, `${prefix}-b`],
      );
      assert.equal(body.total, all.total);
      assert.equal(body.limit, 2);
      assertProblem(await api.get('/identity-providers?limit=1000'), 400, 'limit');
    });

    it('PUT replaces (201; the secret kept), PATCH changes the fields given (201)', async () => {
      const created = await create(
        github({ name: 'GH put', link_by_verified_email: true, scopes: ['read:user'] }),
      );
      const put = await api.put(`/identity-providers/${created.id}`, {
        name: 'GH replaced',
        authorization_endpoint: 'https://github.example/login/oauth/authorize',
        token_endpoint: 'https://github.example/login/oauth/access_token',
        userinfo_endpoint: 'https://api.github.example/user',
        client_id: 'Iv1.new',
        claim_mapping: { subject: 'id' },
      });
      expectStatus(put, 201);
      const replaced = put.json as ProviderBody;
      assert.equal(replaced.name, 'GH replaced');
      assert.equal(replaced.client_id, 'Iv1.new');
      assert.equal(replaced.client_secret_set, true, 'the write-only secret left out is kept');
      assert.equal(replaced.link_by_verified_email, false, 'left out: its default');
      assert.deepEqual(replaced.scopes, []);
      assert.equal(replaced.claim_mapping.username, 'preferred_username');
      assertProblem(await api.put(`/identity-providers/${created.id}`, { ...github(), id: 'x' }), 400, 'id');

      const patch = await api.patch(`/identity-providers/${created.id}`, {
        claim_mapping: { username: 'login' },
        trust_upstream_assurance: true,
        required_acr: 'urn:example:mfa',
      });
      expectStatus(patch, 201);
      const patched = patch.json as ProviderBody;
      assert.equal(patched.claim_mapping.username, 'login');
      assert.equal(patched.claim_mapping.subject, 'id', 'merged');
      assert.equal(patched.trust_upstream_assurance, true);
      assert.equal(patched.required_acr, 'urn:example:mfa');
      assert.equal(patched.name, 'GH replaced', 'kept');
      assertProblem(await api.patch(`/identity-providers/${created.id}`, {}), 400);
      assertProblem(
        await api.patch(`/identity-providers/${created.id}`, { client_auth: 'none', client_secret: SECRET }),
        400,
        'client_secret',
      );
      assert.deepEqual((await api.get(`/identity-providers/${created.id}`)).json, patched, 'nothing changed');
      // A public client keeps no secret.
      const publicClient = await api.patch(`/identity-providers/${created.id}`, { client_auth: 'none' });
      expectStatus(publicClient, 201);
      assert.equal((publicClient.json as ProviderBody).client_secret_set, false);
    });

    it('private_key_jwt: Gatehouse makes the key pair and shows the public key to register upstream', async () => {
      const created = await create(
        oidc({ name: 'Acme keyed', client_auth: 'private_key_jwt', client_secret: undefined }),
      );
      assert.equal(created.client_secret_set, false);
      const jwk = created.public_jwk as Record<string, string>;
      assert.equal(jwk.kty, 'EC');
      assert.equal(jwk.alg, 'ES256');
      assert.equal(typeof jwk.kid, 'string');
      assert.equal(jwk.d, undefined);
    });

    it('users’ links: listed with the provider’s name, removed one by one; DELETE of the provider removes them', async () => {
      const provider = await create(github({ name: 'GH links', id: 'gh-links' }));
      const alice = await server.user();
      const bob = await server.user();
      const link = (userId: string, subject: string): FederatedLink => ({
        id: randomUUID(),
        userId,
        providerId: provider.id,
        issuer: 'urn:gatehouse:idp:gh-links',
        subject,
        label: `${subject}@github`,
        createdAt: server.clock.now() + Number(subject), // oldest first: 1, 2, 3
        lastUsedAt: null,
      });
      const [first, second, bobs] = [
        link(alice.user.id, '1'),
        link(alice.user.id, '2'),
        link(bob.user.id, '3'),
      ];
      for (const each of [first, second, bobs]) {
        assert.equal(await server.gatehouse.storage.federatedLinks.insert(each), true);
      }
      const listed = await api.get(`/users/${alice.user.id}/identity-links`);
      expectStatus(listed, 200);
      const items = (listed.json as { items: Array<Record<string, unknown>> }).items;
      assert.deepEqual(
        items.map((item) => [item.id, item.provider_id, item.provider_name, item.subject, item.label]),
        [
          [first.id, 'gh-links', 'GH links', '1', '1@github'],
          [second.id, 'gh-links', 'GH links', '2', '2@github'],
        ],
      );
      // The user's record lists the linked accounts among their ways of signing in.
      const user = (await api.get(`/users/${alice.user.id}`)).json as {
        sign_in_methods: Array<{ method: string; count?: number }>;
      };
      assert.deepEqual(user.sign_in_methods.find((method) => method.method === 'federated')?.count, 2);

      assertProblem(await api.delete(`/users/${alice.user.id}/identity-links/${bobs.id}`), 404, 'linkId');
      const removed = await api.delete(`/users/${alice.user.id}/identity-links/${first.id}`);
      expectStatus(removed, 204);
      assertProblem(await api.delete(`/users/${alice.user.id}/identity-links/${first.id}`), 404, 'linkId');
      assertProblem(await api.get(`/users/${randomUUID()}/identity-links`), 404, 'id');

      const deleted = await api.delete(`/identity-providers/${provider.id}`);
      expectStatus(deleted, 204);
      assertProblem(await api.get(`/identity-providers/${provider.id}`), 404, 'id');
      assert.deepEqual((await api.get(`/users/${alice.user.id}/identity-links`)).json, { items: [] });
      assert.deepEqual((await api.get(`/users/${bob.user.id}/identity-links`)).json, { items: [] });
    });

    it('clients choose their providers: identity_providers must exist; null offers every one', async () => {
      const provider = await create(github({ name: 'GH clients', id: 'gh-clients' }));
      assertProblem(
        await api.post('/clients', {
          name: 'x',
          grant_types: ['client_credentials'],
          identity_providers: ['nope'],
        }),
        400,
        'identity_providers',
      );
      const res = await api.post('/clients', {
        name: 'chooser',
        redirect_uris: ['https://app.example/cb'],
        identity_providers: [provider.id],
      });
      expectStatus(res, 201);
      const client = res.json as { client_id: string; identity_providers: string[] | null };
      assert.deepEqual(client.identity_providers, [provider.id]);
      const reset = await api.patch(`/clients/${client.client_id}`, { identity_providers: null });
      expectStatus(reset, 201);
      assert.equal((reset.json as { identity_providers: null }).identity_providers, null);
      const plain = await api.post('/clients', { name: 'plain', grant_types: ['client_credentials'] });
      assert.equal((plain.json as { identity_providers: null }).identity_providers, null);
    });

    it('needs the scope admin', async () => {
      const profileOnly = apiClient(server, (await clientCredentialsToken(server, ['profile'])).token);
      assertProblem(await profileOnly.get('/identity-providers'), 403);
      assertProblem(await profileOnly.post('/identity-providers', github()), 403);
      assertProblem(await apiClient(server, undefined).get('/identity-providers'), 401);
    });
  });
}
