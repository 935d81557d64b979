import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BrowserSessions } from '../../src/core/sign-in/browser-sessions.js';
import { NotFoundError } from '../../src/core/validation.js';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  apiClient,
  assertProblem,
  bearer,
  clientCredentialsToken,
  expectStatus,
  userToken,
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
  client_secret?: string;
}

for (const backend of backends()) {
  describe(`/v1 conformance gaps (${backend})`, () => {
    let server: TestServer;
    let api: ApiClient;
    before(async () => {
      server = await startTestServer(backend);
      api = apiClient(server, (await clientCredentialsToken(server, ['admin'])).token);
    });
    after(async () => {
      await server.close();
    });

    describe('PUT /v1/clients/{id} takes the body POST takes', () => {
      it('accepts a POST body as the complete client; absent fields take their defaults', async () => {
        const body = { name: 'Same shape', grant_types: ['client_credentials'], scopes: ['reports'] };
        const created = await api.post('/clients', { ...body, token_type: 'mac' });
        expectStatus(created, 201);
        const id = (created.json as ClientBody).client_id;

        const replaced = await api.put(`/clients/${id}`, body);
        expectStatus(replaced, 201);
        const view = replaced.json as ClientBody;
        assert.equal(view.name, 'Same shape');
        assert.deepEqual(view.scopes, ['reports']);
        // token_type was left out: it takes the default POST gives it, not its previous value.
        assert.equal(view.token_type, 'bearer');
        assert.equal(view.public, false);

        // Only the name: grant types, scopes and redirect URIs take POST's defaults too.
        const minimal = await api.put(`/clients/${id}`, { name: 'Only a name' });
        expectStatus(minimal, 201);
        assert.deepEqual((minimal.json as ClientBody).grant_types, ['client_credentials']);
        assert.deepEqual((minimal.json as ClientBody).scopes, []);
        const read = (await api.get(`/clients/${id}`)).json as ClientBody;
        assert.equal(read.name, 'Only a name');
      });

      it('still refuses a PUT without the required name, and unknown fields', async () => {
        const created = await api.post('/clients', { name: 'Keeps its name' });
        const id = (created.json as ClientBody).client_id;
        assertProblem(await api.put(`/clients/${id}`, { scopes: ['x'] }), 400, 'name');
        assertProblem(await api.put(`/clients/${id}`, { name: 'x', secret: 'y' }), 400, 'secret');
        assert.equal(((await api.get(`/clients/${id}`)).json as ClientBody).name, 'Keeps its name');
      });

      it('is described in the OpenAPI document with only name required', async () => {
        const doc = (await server.http.request('/v1/openapi', { headers: { accept: 'application/json' } }))
          .json as {
          paths: Record<
            string,
            Record<string, { requestBody?: { content: Record<string, { schema: unknown }> } }>
          >;
        };
        const schema = doc.paths['/v1/clients/{id}']?.put?.requestBody?.content['application/json']
          ?.schema as {
          required?: string[];
        };
        assert.deepEqual(schema.required, ['name']);
      });
    });

    describe('client names', () => {
      for (const [label, name] of [
        ['U+202E RIGHT-TO-LEFT OVERRIDE', 'Bank \u202Elppa'],
        ['U+2066 LEFT-TO-RIGHT ISOLATE', 'Bank \u2066x'],
        ['a control character', 'Bank\u0007'],
        ['a line separator', 'Bank\u2028App'],
      ]) {
        it(`refuses ${label} at registration and update, naming the field`, async () => {
          const before = await api.get('/clients');
          const total = (before.json as { total: number }).total;
          const body = assertProblem(await api.post('/clients', { name }), 400, 'name');
          assert.match(String(body.detail), /control/);
          assert.equal(((await api.get('/clients')).json as { total: number }).total, total);

          const id = ((await api.post('/clients', { name: 'Plain name' })).json as ClientBody).client_id;
          assertProblem(await api.patch(`/clients/${id}`, { name }), 400, 'name');
          assertProblem(await api.put(`/clients/${id}`, { name }), 400, 'name');
          assert.equal(((await api.get(`/clients/${id}`)).json as ClientBody).name, 'Plain name');
        });
      }

      it('keeps names in any script, and emoji sequences joined by U+200D', async () => {
        for (const name of ['Café Ölbaum', 'مرحبا', 'नमस्ते', 'Team 👩\u200D💻']) {
          const res = await api.post('/clients', { name });
          expectStatus(res, 201);
          assert.equal((res.json as ClientBody).name, name);
        }
      });
    });

    describe('redirect URIs are stored in canonical form', () => {
      for (const uri of [
        'https://evil.example\\@good.example/cb',
        'https:evil.example/cb',
        'https:/evil.example/cb',
        'https://user@good.example/cb',
        'https://user:pw@good.example/cb',
        'https://@good.example/cb',
        'http://localhost\\@evil.example/cb',
        'com.example.app://user@host/cb',
        'https://good.example/c b',
      ]) {
        it(`refuses ${JSON.stringify(uri)} with 400 on redirect_uris`, async () => {
          assertProblem(
            await api.post('/clients', { name: 'Redirects', redirect_uris: [uri] }),
            400,
            'redirect_uris',
          );
        });
      }

      it('stores the WHATWG serialisation of what it accepts', async () => {
        const res = await api.post('/clients', {
          name: 'Canonical',
          redirect_uris: ['HTTPS://Good.Example:443/cb', 'https://good.example', 'com.example.app:/cb'],
        });
        expectStatus(res, 201);
        assert.deepEqual((res.json as ClientBody).redirect_uris, [
          'https://good.example/cb',
          'https://good.example/',
          'com.example.app:/cb',
        ]);
      });
    });

    describe('/authorize compares canonical redirect URIs', () => {
      const authorize = (clientId: string, redirectUri: string) =>
        server.http.request(
          `/authorize?${new URLSearchParams({
            response_type: 'code',
            client_id: clientId,
            redirect_uri: redirectUri,
            code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWBdXTLfmQ4yM',
            code_challenge_method: 'S256',
          }).toString()}`,
        );

      it('accepts the canonical form of what was registered, and nothing else', async () => {
        const res = await api.post('/clients', { name: 'Canon', redirect_uris: ['HTTPS://Good.Example/cb'] });
        const id = (res.json as ClientBody).client_id;
        const ok = await authorize(id, 'https://good.example/cb');
        assert.notEqual(ok.status, 400, ok.text.slice(0, 200));
        const other = await authorize(id, 'HTTPS://Good.Example/cb');
        assert.equal(other.status, 400);
        assert.equal(other.headers.location, undefined);
      });

      it('never redirects to a registration stored before canonicalisation that a browser reads otherwise', async () => {
        const legacy = 'https://evil.example\\@good.example/cb';
        const now = server.clock.now();
        await server.store.storage.clients.insert({
          id: `legacy-${now}`,
          name: 'Legacy',
          redirectUris: [legacy],
          grantTypes: ['authorization_code'],
          scopes: [],
          tokenType: 'bearer',
          isPublic: true,
          idTokenSignedResponseAlg: 'RS256',
          postLogoutRedirectUris: [],
          tokenEndpointAuthMethod: 'none',
          jwks: null,
          jwksUri: null,
          registration: 'operator',
          registrationAccessTokenHash: null,
          registrationScopes: null,
          firstGrantedAt: null,
          documentExpiresAt: null,
          requirePushedAuthorizationRequests: false,
          dpopBoundAccessTokens: false,
          requireMfa: false,
          identityProviders: null,
          tokenExchangeTargets: [],
          secretHash: null,
          createdAt: now,
          updatedAt: now,
        });
        for (const redirect of [legacy, 'https://evil.example/@good.example/cb']) {
          const res = await authorize(`legacy-${now}`, redirect);
          assert.equal(res.status, 400, res.text.slice(0, 200));
          assert.equal(res.headers.location, undefined);
        }
      });
    });

    describe('errors are problem+json everywhere under /v1', () => {
      it('answers a path that is not valid percent-encoding with problem+json', async () => {
        for (const path of ['/v1/clients/%FF', '/v1/users/%E0%A4%A', '/v1/scopes/%C0']) {
          assertProblem(await server.http.request(path, { headers: bearer('x') }), 400, 'path');
        }
      });

      it('leaves the rest of the server as it was', async () => {
        const res = await server.http.request('/authorize/%FF');
        assert.equal(res.status, 400);
        assert.doesNotMatch(String(res.headers['content-type']), /problem/);
      });
    });

    describe('numeric query parameters are bounded', () => {
      for (const collection of ['/clients', '/users']) {
        for (const query of [
          'offset=1e20',
          'offset=2147483648',
          'offset=-1',
          'limit=1e20',
          'limit=0',
          'offset=1.5',
        ]) {
          it(`GET ${collection}?${query} is a 400 naming the parameter`, async () => {
            const field = query.split('=')[0];
            assertProblem(await api.get(`${collection}?${query}`), 400, field);
          });
        }
        it(`GET ${collection}?offset=2147483647 is an empty page, not an error`, async () => {
          const res = await api.get(`${collection}?offset=2147483647`);
          expectStatus(res, 200);
          assert.deepEqual((res.json as { items: unknown[] }).items, []);
        });
      }
    });

    describe('a password reset ends what the old password opened', () => {
      async function signedInUser() {
        const login = await userToken(server, ['profile']);
        const sessions = new BrowserSessions(server.store.storage.browserSessions, server.clock);
        const browser = await sessions.start(login.user.id, { method: 'password', at: server.clock.now() });
        assert.equal((await sessions.user(browser))?.id, login.user.id);
        expectStatus(await server.http.request('/v1/users/me', { headers: bearer(login.token) }), 200);
        return { ...login, sessions, browser };
      }
      async function assertAllEnded(login: Awaited<ReturnType<typeof signedInUser>>) {
        assert.equal(await login.sessions.user(login.browser), undefined, 'the browser session ended');
        const refreshed = await server.http.token(
          { grant_type: 'refresh_token', refresh_token: login.token.refresh_token ?? '' },
          login.credentials,
        );
        assert.equal(refreshed.status, 400, refreshed.text);
        assert.equal((refreshed.json as { error: string }).error, 'invalid_grant');
        const me = await server.http.request('/v1/users/me', { headers: bearer(login.token) });
        assertProblem(me, 401);
      }

      it('PATCH /v1/users/{id} with a password', async () => {
        const login = await signedInUser();
        const other = await signedInUser();
        expectStatus(await api.patch(`/users/${login.user.id}`, { password: 'a brand new password' }), 201);
        await assertAllEnded(login);
        // Another user's sessions and tokens are untouched.
        assert.equal((await other.sessions.user(other.browser))?.id, other.user.id);
        expectStatus(await server.http.request('/v1/users/me', { headers: bearer(other.token) }), 200);
      });

      it('PUT /v1/users/{id} with a password; without one, nothing ends', async () => {
        const login = await signedInUser();
        const renamed = `renamed-${login.user.id.slice(0, 8)}`;
        expectStatus(await api.put(`/users/${login.user.id}`, { username: renamed }), 201);
        assert.equal(
          (await login.sessions.user(login.browser))?.id,
          login.user.id,
          'a rename keeps sessions',
        );
        expectStatus(await server.http.request('/v1/users/me', { headers: bearer(login.token) }), 200);
        expectStatus(
          await api.put(`/users/${login.user.id}`, { username: renamed, password: 'another new password' }),
          201,
        );
        await assertAllEnded(login);
      });

      it('the engine’s users.update (the core rule the command line uses) does the same', async () => {
        const users = server.gatehouse.engine.users;
        const login = await signedInUser();
        const updated = await users.update(login.user, { password: 'changed from the CLI' });
        assert.equal(updated.id, login.user.id);
        await assertAllEnded(login);
        const token = await server.http.token(
          { grant_type: 'password', username: login.user.username, password: 'changed from the CLI' },
          login.credentials,
        );
        expectStatus(token, 200);
        await assert.rejects(
          users.update({ ...login.user, id: 'no-such-user' }, { password: 'long enough!' }),
          NotFoundError,
        );
        await assert.rejects(users.update(login.user, { password: 'short' }), /password/);
      });
    });
  });
}
