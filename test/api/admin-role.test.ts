import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import type { Client, User } from '../../src/core/model.js';
import { FormBrowser } from '../helpers/form-browser.js';
import { backends } from '../helpers/backends.js';
import type { HttpResponse } from '../helpers/https-client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  apiClient,
  clientCredentialsToken,
  expectStatus,
  tokenFor,
  type TokenBody,
} from '../helpers/api-requests.js';

const REDIRECT = 'https://console.example/cb';

/**
 * Issue 26, point 11 (docs/decisions.md, decision 29): a token issued for a user is never worth more
 * than the user. An ordinary user's code flow with a client registered with `admin` once gave a token
 * that managed every client (200 at /v1/clients); now the consent page does not offer `admin`, the
 * token lacks it, and /v1 refuses a user's token with `admin` unless the user is an administrator now.
 */
for (const backend of backends()) {
  describe(`the admin scope of a user's token (${backend})`, () => {
    let server: TestServer;
    let consoleApp: { client: Client; secret: string };
    before(async () => {
      server = await startTestServer(backend);
      consoleApp = await server.client({
        name: 'Console',
        redirect_uris: [REDIRECT],
        grant_types: ['authorization_code', 'refresh_token'],
        scopes: ['profile', 'admin'],
      });
    });
    after(async () => {
      await server.close();
    });

    const credentials = () => ({ id: consoleApp.client.id, secret: consoleApp.secret });

    /** The code flow through the real pages: sign in, the consent page, allow what it offers. */
    async function codeFlow(
      user: User,
      password: string,
    ): Promise<{ consent: HttpResponse; tokens: TokenBody }> {
      const verifier = randomBytes(32).toString('base64url');
      const path = `/authorize?${new URLSearchParams({
        response_type: 'code',
        client_id: consoleApp.client.id,
        redirect_uri: REDIRECT,
        scope: 'profile admin',
        state: 's1',
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
        code_challenge_method: 'S256',
      }).toString()}`;
      const browser = new FormBrowser(server);
      expectStatus(await browser.signIn(user.username, password, path), 303);
      const consent = await browser.get(path);
      expectStatus(consent, 200);
      // Allow every box the page offers (the form sends the ticked ones).
      const offered = [...consent.text.matchAll(/name="scope"\s+value="([^"]+)"/g)].map((m) => m[1] ?? '');
      const allowed = await browser.post('/consent', {
        csrf_token: FormBrowser.hidden(consent, 'csrf_token'),
        request: FormBrowser.hidden(consent, 'request'),
        decision: 'allow',
        scope: offered,
        lifetime: 'forever',
      });
      expectStatus(allowed, 302);
      const code = new URL(String(allowed.headers.location)).searchParams.get('code');
      assert.ok(code !== null, String(allowed.headers.location));
      const tokens = await tokenFor(
        server,
        { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
        credentials(),
      );
      return { consent, tokens };
    }

    it('an ordinary user is not offered admin, gets no admin, and is refused at /v1/clients', async () => {
      const { user, password } = await server.user();
      const { consent, tokens } = await codeFlow(user, password);
      assert.doesNotMatch(consent.text, /name="scope"\s+value="admin"/, 'the consent page offers admin');
      assert.match(consent.text, /name="scope"\s+value="profile"/);
      assert.equal(tokens.scope, 'profile');
      assert.equal(decodeJwt(tokens.access_token).scope, 'profile');
      const res = await apiClient(server, tokens).get('/clients');
      expectStatus(res, 403);
      assert.equal((res.json as { error: string }).error, 'insufficient_scope');
    });

    it('a consent form that ticks admin anyway for an ordinary user is refused and grants nothing', async () => {
      const { user, password } = await server.user();
      const path = `/authorize?${new URLSearchParams({
        response_type: 'code',
        client_id: consoleApp.client.id,
        redirect_uri: REDIRECT,
        scope: 'profile admin',
        state: 's2',
        code_challenge: createHash('sha256').update('x'.repeat(43)).digest('base64url'),
        code_challenge_method: 'S256',
      }).toString()}`;
      const browser = new FormBrowser(server);
      expectStatus(await browser.signIn(user.username, password, path), 303);
      const consent = await browser.get(path);
      const forged = await browser.post('/consent', {
        csrf_token: FormBrowser.hidden(consent, 'csrf_token'),
        request: FormBrowser.hidden(consent, 'request'),
        decision: 'allow',
        scope: ['profile', 'admin'],
        lifetime: 'forever',
      });
      expectStatus(forged, 400);
      assert.deepEqual(await server.store.storage.grants.listByUser(user.id), []);
    });

    it('an administrator is offered admin, and the token manages clients; taking the role away ends it', async () => {
      const { user, password } = await server.user();
      const admin = await server.gatehouse.engine.users.update(user, { admin: true });
      const { consent, tokens } = await codeFlow(admin, password);
      assert.match(consent.text, /name="scope"\s+value="admin"/);
      assert.equal(tokens.scope, 'profile admin');
      const api = apiClient(server, tokens);
      expectStatus(await api.get('/clients'), 200);

      // The role taken away: the token already issued opens nothing more at /v1 ...
      await server.gatehouse.engine.users.update(admin, { admin: false });
      const refused = await api.get('/clients');
      expectStatus(refused, 403);
      assert.equal((refused.json as { error: string }).error, 'insufficient_scope');
      // ... and its refresh token mints no more admin, now or once the role is given back.
      const refreshed = await tokenFor(
        server,
        { grant_type: 'refresh_token', refresh_token: tokens.refresh_token ?? '' },
        credentials(),
      );
      assert.equal(refreshed.scope, 'profile');
      await server.gatehouse.engine.users.update(admin, { admin: true });
      const again = await tokenFor(
        server,
        { grant_type: 'refresh_token', refresh_token: refreshed.refresh_token ?? '' },
        credentials(),
      );
      assert.equal(again.scope, 'profile');
    });

    it('a user token carrying admin however it was issued opens /v1 only while its user is an administrator', async () => {
      const { user } = await server.user();
      const grant = {
        id: `grant-${randomBytes(6).toString('hex')}`,
        clientId: consoleApp.client.id,
        userId: user.id,
        scope: ['admin'],
        createdAt: server.clock.now(),
        expiresAt: null,
        revokedAt: null,
      };
      await server.store.storage.grants.insert(grant);
      // Signed as any other token is: what a path that let admin through would have issued.
      const token = await server.gatehouse.engine.issuer.issueAccessToken({
        client: consoleApp.client,
        subject: user.id,
        scope: ['admin'],
        grant,
        withRefreshToken: false,
      });
      const api = apiClient(server, token.access_token);
      const res = await api.get('/users');
      expectStatus(res, 403);
      assert.match(String(res.headers['www-authenticate']), /insufficient_scope/);
      await server.gatehouse.engine.users.update(user, { admin: true });
      expectStatus(await api.get('/users'), 200);
    });

    it('a client’s own admin (client_credentials) keeps working', async () => {
      const { token } = await clientCredentialsToken(server, ['admin']);
      expectStatus(await apiClient(server, token).get('/clients'), 200);
    });

    it('/v1/users creates, shows and changes the administrator role', async () => {
      const { token } = await clientCredentialsToken(server, ['admin']);
      const api = apiClient(server, token);
      const created = await api.post('/users', {
        username: `root-${randomBytes(4).toString('hex')}`,
        password: 'root password 1',
        admin: true,
      });
      expectStatus(created, 201);
      const body = created.json as { id: string; admin: boolean };
      assert.equal(body.admin, true);
      const plain = await api.post('/users', {
        username: `plain-${randomBytes(4).toString('hex')}`,
        password: 'plain password',
      });
      assert.equal((plain.json as { admin: boolean }).admin, false, 'not an administrator by default');
      const patched = await api.patch(`/users/${body.id}`, { admin: false });
      expectStatus(patched, 201);
      assert.equal((patched.json as { admin: boolean }).admin, false);
      assert.equal((await server.store.storage.users.get(body.id))?.admin, false);
      const bad = await api.patch(`/users/${body.id}`, { admin: 'yes' });
      expectStatus(bad, 400);
      assert.equal((await server.store.storage.users.get(body.id))?.admin, false);
      // PUT is the complete user: admin left out is false.
      await api.patch(`/users/${body.id}`, { admin: true });
      const replaced = await api.put(`/users/${body.id}`, { username: 'replaced-root' });
      expectStatus(replaced, 201);
      assert.equal((replaced.json as { admin: boolean }).admin, false);
    });
  });
}
