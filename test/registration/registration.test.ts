import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { after, before, describe, it } from 'node:test';
import type { ClientInformation } from '../../src/core/clients/dynamic-registration.js';
import { DEVICE_CODE_GRANT_TYPE } from '../../src/core/model.js';
import type { ConfigInput } from '../../src/config.js';
import { FormBrowser } from '../helpers/form-browser.js';
import { clientCredentialsToken } from '../helpers/api-requests.js';
import { backends, type Backend } from '../helpers/backends.js';
import { tableRows } from '../helpers/store-sql.js';
import type { HttpResponse } from '../helpers/https-client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  assertBearerRefusal,
  assertMetadataRefusal,
  CALLBACK,
  cliOnServerStore,
  manage,
  pkce,
  register,
  registered,
} from '../helpers/registration.js';

const DAY = 86_400;

function isConsentPage(res: HttpResponse): boolean {
  return res.status === 200 && /name="decision" value="allow"/.test(res.text);
}

const SELF_REGISTERED =
  /registered itself with Gatehouse,\s+so\s+nobody\s+has\s+checked\s+that\s+its\s+name\s+is\s+really\s+its\s+own/;

/** A server for one describe block: started before its tests, closed after them. */
function serverFor(backend: Backend, overrides: ConfigInput): () => TestServer {
  let server: TestServer | undefined;
  before(async () => {
    server = await startTestServer(backend, overrides);
  });
  after(async () => {
    await server?.close();
  });
  return () => {
    if (server === undefined) throw new Error('the server did not start');
    return server;
  };
}

/**
 * A token response for `profile` with a refresh token, whose access token reads the user at
 * /v1/users/me; returns that user.
 */
async function assertProfileTokens(server: TestServer, token: HttpResponse): Promise<{ id: string }> {
  assert.equal(token.status, 200, token.text);
  const body = token.json as { access_token: string; refresh_token?: string; scope: string };
  assert.equal(body.scope, 'profile');
  assert.match(body.refresh_token ?? '', /^rt_/);
  const me = await server.http.request('/v1/users/me', {
    headers: { authorization: `Bearer ${body.access_token}` },
  });
  assert.equal(me.status, 200, me.text);
  return me.json as { id: string };
}

/**
 * Signs a new user in, asks /authorize for a code with PKCE, allows on the consent page, and redeems
 * the code at the token endpoint as the client would. Returns the consent page and the token response.
 */
async function codeFlow(
  server: TestServer,
  client: ClientInformation,
  authenticate: (form: Record<string, string>) => Promise<HttpResponse>,
): Promise<{ consent: HttpResponse; token: HttpResponse; browser: FormBrowser; path: string }> {
  const { verifier, challenge } = pkce();
  const path = `/authorize?${new URLSearchParams({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: CALLBACK,
    scope: 'profile',
    state: 'st',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }).toString()}`;
  const { user, password } = await server.user();
  const browser = new FormBrowser(server);
  assert.equal((await browser.signIn(user.username, password, path)).status, 303);
  const consent = await browser.get(path);
  assert.ok(isConsentPage(consent), consent.text.slice(0, 400));
  const allowed = await browser.post('/consent', {
    csrf_token: FormBrowser.hidden(consent, 'csrf_token'),
    request: FormBrowser.hidden(consent, 'request'),
    decision: 'allow',
    scope: 'profile',
    lifetime: '3600',
  });
  assert.equal(allowed.status, 302, allowed.text);
  const location = new URL(String(allowed.headers.location));
  assert.equal(location.origin + location.pathname, CALLBACK);
  assert.equal(location.searchParams.get('state'), 'st');
  const code = location.searchParams.get('code') ?? '';
  const token = await authenticate({
    grant_type: 'authorization_code',
    code,
    redirect_uri: CALLBACK,
    code_verifier: verifier,
  });
  return { consent, token, browser, path };
}

for (const backend of backends()) {
  describe(`dynamic registration off, the default (${backend})`, () => {
    const server = serverFor(backend, {});

    it('serves no registration endpoint and advertises none', async () => {
      const res = await register(server(), { redirect_uris: [CALLBACK] });
      assert.equal(res.status, 404);
      assert.equal((await server().http.request('/register/anything')).status, 404);
      for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
        const metadata = (await server().http.request(path)).json as Record<string, unknown>;
        assert.ok(metadata.token_endpoint, path);
        assert.equal(metadata.registration_endpoint, undefined, path);
      }
      assert.equal((await server().store.storage.clients.list({ limit: 10, offset: 0 })).total, 0);
    });
  });

  describe(`dynamic registration with initial access tokens (${backend})`, () => {
    const server = serverFor(backend, { dynamicRegistration: 'token' });

    /** `gatehouse initial-access-tokens create --json` on the server's store. */
    async function createToken(...args: string[]): Promise<{ id: string; initial_access_token: string }> {
      const result = await cliOnServerStore(server(), ['initial-access-tokens', 'create', '--json', ...args]);
      assert.equal(result.code, 0, result.stderr);
      return JSON.parse(result.stdout) as { id: string; initial_access_token: string };
    }

    async function listTokens(): Promise<
      { id: string; clients_registered: number; scopes: string[] | null }[]
    > {
      const result = await cliOnServerStore(server(), ['initial-access-tokens', 'list', '--json']);
      assert.equal(result.code, 0, result.stderr);
      assert.doesNotMatch(result.stdout, /iat_/, 'the token is shown only when made');
      return JSON.parse(result.stdout) as {
        id: string;
        clients_registered: number;
        scopes: string[] | null;
      }[];
    }

    it('advertises the registration endpoint (RFC 8414 §2)', async () => {
      for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
        const metadata = (await server().http.request(path)).json as Record<string, unknown>;
        assert.equal(metadata.registration_endpoint, 'https://gatehouse.test/register', path);
      }
    });

    it('refuses a registration without a token, with a wrong one, or an expired one (RFC 7591 §3)', async () => {
      const metadata = { redirect_uris: [CALLBACK] };
      assertBearerRefusal(await register(server(), metadata), undefined);
      assertBearerRefusal(await register(server(), metadata, 'iat_not-a-token'), 'invalid_token');
      const malformed = await server().http.request('/register', {
        body: JSON.stringify(metadata),
        headers: { 'content-type': 'application/json', authorization: 'Bearer a b' },
      });
      assert.equal(malformed.status, 400, malformed.text);
      const { initial_access_token: token } = await createToken('--expires-in', '60');
      server().clock.advance(120);
      assertBearerRefusal(await register(server(), metadata, token), 'invalid_token');
      assert.equal((await server().store.storage.clients.list({ limit: 10, offset: 0 })).total, 0);
    });

    it('registers with a token from the command line, counts it, and lists the client by how it came', async () => {
      const { id, initial_access_token: token } = await createToken('--scopes', 'openid profile payments');
      assert.match(token, /^iat_/);
      const client = await registered(
        server(),
        { redirect_uris: [CALLBACK], client_name: 'Partner App' },
        token,
      );
      assert.equal(client.scope, 'openid profile payments');
      await registered(server(), { redirect_uris: [CALLBACK], scope: 'payments' }, token);
      assertMetadataRefusal(
        await register(server(), { redirect_uris: [CALLBACK], scope: 'email' }, token),
        'invalid_client_metadata',
        /"email"/,
      );
      const listed = (await listTokens()).find((row) => row.id === id);
      assert.deepEqual(listed?.scopes, ['openid', 'profile', 'payments']);
      assert.equal(listed?.clients_registered, 2);

      const clients = await cliOnServerStore(server(), [
        'clients',
        'list',
        '--registration',
        'token',
        '--json',
      ]);
      assert.equal(clients.code, 0, clients.stderr);
      const views = JSON.parse(clients.stdout) as { client_id: string; registration: string }[];
      assert.ok(views.some((view) => view.client_id === client.client_id));
      assert.ok(views.every((view) => view.registration === 'token'));
      const human = await cliOnServerStore(server(), ['clients', 'list']);
      assert.match(
        human.stdout,
        new RegExp(`${client.client_id}  Partner App  \\[authorization_code\\]  token`),
      );
    });

    it('a client cannot widen its scopes past its initial access token’s with a PUT (RFC 7592)', async () => {
      const { initial_access_token: token } = await createToken('--scopes', 'profile');
      const client = await registered(server(), { redirect_uris: [CALLBACK] }, token);
      assert.equal(client.scope, 'profile');
      const widened = await manage(server(), 'PUT', client.client_id, client.registration_access_token, {
        client_id: client.client_id,
        redirect_uris: [CALLBACK],
        scope: 'openid profile email offline_access',
      });
      assertMetadataRefusal(widened, 'invalid_client_metadata', /"openid", "email", "offline_access"/);
      // Leaving scope out asks for all of the limits: still the token's.
      const defaulted = await manage(server(), 'PUT', client.client_id, client.registration_access_token, {
        client_id: client.client_id,
        redirect_uris: [CALLBACK],
      });
      assert.equal(defaulted.status, 200, defaulted.text);
      assert.equal((defaulted.json as ClientInformation).scope, 'profile');
      const stored = await server().store.storage.clients.get(client.client_id);
      assert.deepEqual(stored?.scopes, ['profile']);
      assert.deepEqual(stored?.registrationScopes, ['profile']);
    });

    it('a deleted token registers nothing more', async () => {
      const { id, initial_access_token: token } = await createToken();
      const deleted = await cliOnServerStore(server(), ['initial-access-tokens', 'delete', id]);
      assert.equal(deleted.code, 0, deleted.stderr);
      assert.match(deleted.stdout, /Deleted initial access token/);
      assertBearerRefusal(await register(server(), { redirect_uris: [CALLBACK] }, token), 'invalid_token');
      assert.ok(!(await listTokens()).some((row) => row.id === id));
      const again = await cliOnServerStore(server(), ['initial-access-tokens', 'delete', id, '--json']);
      assert.equal(again.code, 1);
      assert.equal((JSON.parse(again.stderr) as { error: string }).error, 'not_found');
    });

    it('the command line refuses what it must not make', async () => {
      const short = await cliOnServerStore(server(), [
        'initial-access-tokens',
        'create',
        '--expires-in',
        '10',
      ]);
      assert.equal(short.code, 2, short.stderr);
      assert.match(short.stderr, /--expires-in must be between 60/);
      const admin = await cliOnServerStore(server(), [
        'initial-access-tokens',
        'create',
        '--scopes',
        'openid admin',
      ]);
      assert.equal(admin.code, 1);
      assert.match(admin.stderr, /admin is never open/);
      const human = await cliOnServerStore(server(), ['initial-access-tokens', 'create']);
      assert.equal(human.code, 0, human.stderr);
      assert.match(human.stdout, /^initial_access_token: iat_\S+ {3}\(shown once; store it now\)$/m);
    });
  });

  describe(`open dynamic registration (${backend})`, () => {
    // Its tests register (and are refused) more often than the default 20 an hour allows one address;
    // the limit is tested on servers of its own below.
    const server = serverFor(backend, { dynamicRegistration: 'open', dynamicRegistrationRateLimit: 1000 });

    it('answers 201 with the client information (RFC 7591 §3.2.1, RFC 7592 §3)', async () => {
      const res = await register(server(), {
        client_name: 'Notes',
        redirect_uris: [CALLBACK],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
        scope: 'openid profile',
        logo_uri: 'https://app.example/logo.png',
      });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.match(String(res.headers['content-type']), /^application\/json/);
      const body = res.json as ClientInformation & Record<string, unknown>;
      assert.equal(body.registration_client_uri, `https://gatehouse.test/register/${body.client_id}`);
      assert.match(body.registration_access_token ?? '', /^rat_/);
      assert.match(body.client_secret ?? '', /^cs_/);
      assert.equal(body.client_secret_expires_at, 0);
      assert.equal(body.client_id_issued_at, server().clock.now());
      assert.deepEqual(body.grant_types, ['authorization_code', 'refresh_token']);
      assert.equal(body.logo_uri, undefined, 'members Gatehouse ignores are not echoed');
      const stored = await server().store.storage.clients.get(body.client_id);
      assert.equal(stored?.registration, 'open');
    });

    it('enforces the limits of anonymous registration (RFC 7591 §3.2.2)', async () => {
      const before = (await server().store.storage.clients.list({ limit: 100, offset: 0 })).total;
      const cases: [unknown, 'invalid_client_metadata' | 'invalid_redirect_uri', RegExp][] = [
        [{ redirect_uris: [CALLBACK], grant_types: ['password'] }, 'invalid_client_metadata', /"password"/],
        [
          { redirect_uris: [CALLBACK], grant_types: ['client_credentials'] },
          'invalid_client_metadata',
          /"client_credentials"/,
        ],
        [{ redirect_uris: [CALLBACK], response_types: ['token'] }, 'invalid_client_metadata', /"token"/],
        [{ redirect_uris: [CALLBACK], scope: 'openid admin' }, 'invalid_client_metadata', /"admin"/],
        [{ redirect_uris: ['http://app.example/cb'] }, 'invalid_redirect_uri', /https/],
        [{ redirect_uris: [] }, 'invalid_redirect_uri', /required/],
        [
          { redirect_uris: [CALLBACK], token_endpoint_auth_method: 'client_secret_jwt' },
          'invalid_client_metadata',
          /not supported/,
        ],
        // RFC 7523 §2.2 needs the client's keys: one of jwks and jwks_uri.
        [
          { redirect_uris: [CALLBACK], token_endpoint_auth_method: 'private_key_jwt' },
          'invalid_client_metadata',
          /jwks/,
        ],
        [
          {
            redirect_uris: [CALLBACK],
            token_endpoint_auth_method: 'client_secret_basic',
            jwks: { keys: [] },
          },
          'invalid_client_metadata',
          /jwks/,
        ],
        ['a string', 'invalid_client_metadata', /JSON object/],
        // Decision 20: the product's name and its lookalikes, the server's own origin, a literal
        // non-public jwks_uri (decision 21).
        [{ redirect_uris: [CALLBACK], client_name: 'Gatehouse' }, 'invalid_client_metadata', /client_name/],
        [
          { redirect_uris: [CALLBACK], client_name: 'Gateh\u043euse' },
          'invalid_client_metadata',
          /client_name/,
        ],
        [
          { redirect_uris: [CALLBACK], client_name: 'Gate\u0301house' },
          'invalid_client_metadata',
          /client_name/,
        ],
        [
          { redirect_uris: ['https://gatehouse.test/playground/callback'] },
          'invalid_redirect_uri',
          /own origin/,
        ],
        [
          { redirect_uris: [CALLBACK], post_logout_redirect_uris: ['https://gatehouse.test/'] },
          'invalid_redirect_uri',
          /own origin/,
        ],
        [
          {
            redirect_uris: [CALLBACK],
            token_endpoint_auth_method: 'private_key_jwt',
            jwks_uri: 'https://169.254.169.254/latest/meta-data/jwks',
          },
          'invalid_client_metadata',
          /jwks_uri/,
        ],
      ];
      for (const [metadata, code, description] of cases) {
        assertMetadataRefusal(await register(server(), metadata), code, description);
      }
      const notJson = await server().http.request('/register', {
        body: 'redirect_uris=https://app.example/cb',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      assert.equal(notJson.status, 415, notJson.text);
      const malformed = await server().http.request('/register', {
        body: '{"redirect_uris": [',
        headers: { 'content-type': 'application/json' },
      });
      assertMetadataRefusal(malformed, 'invalid_client_metadata');
      assert.equal((await server().store.storage.clients.list({ limit: 100, offset: 0 })).total, before);
    });

    it('reads, replaces and deletes a client with its registration access token, and nothing else (RFC 7592)', async () => {
      const created = await registered(server(), { redirect_uris: [CALLBACK], client_name: 'Mine' });
      const other = await registered(server(), { redirect_uris: [CALLBACK] });
      const token = created.registration_access_token;
      const id = created.client_id;

      const read = await manage(server(), 'GET', id, token);
      assert.equal(read.status, 200, read.text);
      assert.equal(read.headers['cache-control'], 'no-store');
      const { client_secret: secret, registration_access_token: registrationToken, ...rest } = created;
      assert.ok(secret && registrationToken);
      assert.deepEqual(read.json, rest, 'as registered, without the secret or the token');

      // Wrong tokens: none, another client's, an unknown client, an operator's client.
      const operators = (await server().client({ redirect_uris: [CALLBACK] })).client;
      for (const method of ['GET', 'PUT', 'DELETE'] as const) {
        const body = method === 'PUT' ? { redirect_uris: [CALLBACK], client_id: id } : undefined;
        assertBearerRefusal(await manage(server(), method, id, undefined, body), undefined);
        assertBearerRefusal(await manage(server(), method, id, 'rat_wrong', body), 'invalid_token');
        assertBearerRefusal(
          await manage(server(), method, id, other.registration_access_token, body),
          'invalid_token',
        );
        assertBearerRefusal(await manage(server(), method, 'no-such-client', token, body), 'invalid_token');
        assertBearerRefusal(await manage(server(), method, operators.id, token, body), 'invalid_token');
      }
      assert.equal((await server().store.storage.clients.get(id))?.name, 'Mine');
      assert.ok(await server().store.storage.clients.get(operators.id));

      // PUT replaces the whole registration (RFC 7592 §2.2) and answers 200.
      const refused = await manage(server(), 'PUT', id, token, {
        client_id: id,
        client_secret: 'chosen',
        redirect_uris: [CALLBACK],
      });
      assertMetadataRefusal(refused, 'invalid_client_metadata', /client_secret cannot be chosen/);
      const updated = await manage(server(), 'PUT', id, token, {
        client_id: id,
        client_secret: secret,
        redirect_uris: [CALLBACK, 'https://app.example/other'],
        client_name: 'Renamed',
        scope: 'openid',
      });
      assert.equal(updated.status, 200, updated.text);
      const after = updated.json as ClientInformation;
      assert.equal(after.client_name, 'Renamed');
      assert.deepEqual(after.redirect_uris, [CALLBACK, 'https://app.example/other']);
      assert.equal(after.scope, 'openid');
      assert.equal(after.client_secret, undefined);
      assert.equal(after.registration_access_token, undefined);
      // The secret still works at the token endpoint after the update.
      const introspect = await server().http.request('/introspect', {
        form: { token: 'x' },
        headers: { authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` },
      });
      assert.equal(introspect.status, 200, introspect.text);

      const deleted = await manage(server(), 'DELETE', id, token);
      assert.equal(deleted.status, 204);
      assert.equal(await server().store.storage.clients.get(id), undefined);
      assertBearerRefusal(await manage(server(), 'GET', id, token), 'invalid_token');
    });

    it('a registered public client gets tokens through the code flow with PKCE; consent is asked each time', async () => {
      const client = await registered(server(), {
        client_name: 'Pocket Notes',
        redirect_uris: [CALLBACK],
        grant_types: ['authorization_code', 'refresh_token'],
        token_endpoint_auth_method: 'none',
        scope: 'profile',
      });
      const { consent, token, browser, path } = await codeFlow(server(), client, (form) =>
        server().http.token({ ...form, client_id: client.client_id }),
      );
      assert.match(consent.text, SELF_REGISTERED);
      assert.match(consent.text, /Pocket Notes/);
      await assertProfileTokens(server(), token);
      // Never remembered silently (docs/decisions.md, decision 10), though a grant stands.
      assert.ok(isConsentPage(await browser.get(path)));
      // And an anonymous client that has been granted something is recorded as used.
      assert.equal(
        (await server().store.storage.clients.get(client.client_id))?.firstGrantedAt,
        server().clock.now(),
      );
    });

    it('a device client (RFC 8628) registers without a redirect URI and completes the device flow', async () => {
      const client = await registered(server(), {
        client_name: 'Hall TV',
        grant_types: [DEVICE_CODE_GRANT_TYPE, 'refresh_token'],
        token_endpoint_auth_method: 'none',
        scope: 'profile',
      });
      assert.deepEqual(client.redirect_uris, []);
      assert.deepEqual(client.response_types, []);
      assert.deepEqual(client.grant_types, [DEVICE_CODE_GRANT_TYPE, 'refresh_token']);

      const started = await server().http.request('/device_authorization', {
        form: { client_id: client.client_id, scope: 'profile' },
      });
      assert.equal(started.status, 200, started.text);
      const { device_code, user_code, interval } = started.json as {
        device_code: string;
        user_code: string;
        interval: number;
      };

      const { user, password } = await server().user();
      const browser = new FormBrowser(server());
      assert.equal((await browser.signIn(user.username, password)).status, 303);
      const form = await browser.get(`/device?user_code=${encodeURIComponent(user_code)}`);
      const entered = await browser.post('/device', {
        csrf_token: FormBrowser.hidden(form, 'csrf_token'),
        user_code,
      });
      assert.equal(entered.status, 303, entered.text.slice(0, 300));
      const consent = await browser.get(String(entered.headers.location));
      assert.ok(isConsentPage(consent), consent.text.slice(0, 400));
      assert.match(consent.text, /Hall TV/);
      assert.match(consent.text, SELF_REGISTERED);
      const allowed = await browser.post('/device/consent', {
        csrf_token: FormBrowser.hidden(consent, 'csrf_token'),
        user_code: FormBrowser.hidden(consent, 'user_code'),
        ticket: FormBrowser.hidden(consent, 'ticket'),
        decision: 'allow',
        scope: 'profile',
        lifetime: '3600',
      });
      assert.equal(allowed.status, 200, allowed.text.slice(0, 300));

      server().clock.advance(interval);
      const token = await server().http.token({
        grant_type: DEVICE_CODE_GRANT_TYPE,
        client_id: client.client_id,
        device_code,
      });
      assert.equal((await assertProfileTokens(server(), token)).id, user.id);
      // Used, so the purge of unused anonymous registrations keeps it (decision 20).
      assert.equal(
        (await server().store.storage.clients.get(client.client_id))?.firstGrantedAt,
        server().clock.now() - interval,
      );
    });

    it('a client registered for private_key_jwt (RFC 7523) with its jwks: no secret, and its assertions redeem the code', async () => {
      const { privateKey, publicKey } = await generateKeyPair('ES256');
      const publicJwk = { ...(await exportJWK(publicKey)), kid: 'k1', use: 'sig', alg: 'ES256' };
      const client = await registered(server(), {
        client_name: 'Signed Requests',
        redirect_uris: [CALLBACK],
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: { keys: [publicJwk] },
        scope: 'profile',
      });
      assert.equal(client.token_endpoint_auth_method, 'private_key_jwt');
      assert.equal(client.client_secret, undefined, 'no secret for a key-authenticated client');
      assert.equal(client.client_secret_expires_at, undefined);
      assert.deepEqual(client.jwks, { keys: [publicJwk] });
      const now = server().clock.now();
      const clientAssertion = await new SignJWT({ jti: randomUUID() })
        .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
        .setIssuer(client.client_id)
        .setSubject(client.client_id)
        .setAudience('https://gatehouse.test/token')
        .setIssuedAt(now)
        .setExpirationTime(now + 60)
        .sign(privateKey);
      const { token } = await codeFlow(server(), client, (form) =>
        server().http.token({
          ...form,
          client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
          client_assertion: clientAssertion,
        }),
      );
      assert.equal(token.status, 200, token.text);
      // RFC 7592 §2.1: the client reads back the keys it registered.
      const read = await manage(server(), 'GET', client.client_id, client.registration_access_token);
      assert.deepEqual((read.json as ClientInformation).jwks, { keys: [publicJwk] });
    });

    it('is no open redirector: errors and sign-out go to a self-registered client only as OpenID requires (RFC 9700 §4.11.2)', async () => {
      const s = server();
      const evil = await registered(s, {
        client_name: 'Totally Legit',
        redirect_uris: ['https://evil.example/cb'],
        post_logout_redirect_uris: ['https://evil.example/phish'],
        token_endpoint_auth_method: 'none',
        scope: 'openid profile',
      });
      const operators = (
        await s.client({
          redirect_uris: ['https://rp.example/cb'],
          post_logout_redirect_uris: ['https://rp.example/bye'],
          scopes: ['openid', 'profile'],
        })
      ).client;
      const authorize = (query: Record<string, string>) =>
        s.http.request(`/authorize?${new URLSearchParams(query).toString()}`);
      const signOut = (query: Record<string, string>) =>
        s.http.request(`/logout?${new URLSearchParams(query).toString()}`);

      // A malformed request: a page for the self-registered client, a redirect for the operator's.
      const implicit = await authorize({
        client_id: evil.client_id,
        redirect_uri: 'https://evil.example/cb',
        response_type: 'token',
        state: 's',
      });
      assert.equal(implicit.status, 400, implicit.text.slice(0, 300));
      assert.equal(implicit.headers.location, undefined);
      assert.match(implicit.text, /unauthorized_client/);
      const operatorImplicit = await authorize({
        client_id: operators.id,
        redirect_uri: 'https://rp.example/cb',
        response_type: 'token',
        state: 's',
      });
      assert.equal(operatorImplicit.status, 302);
      assert.match(
        String(operatorImplicit.headers.location),
        /^https:\/\/rp\.example\/cb#error=unauthorized_client/,
      );

      // A post-logout redirect needs an ID token issued to the client.
      const bare = await signOut({
        client_id: evil.client_id,
        post_logout_redirect_uri: 'https://evil.example/phish',
      });
      assert.equal(bare.status, 400, bare.text.slice(0, 300));
      assert.equal(bare.headers.location, undefined);
      assert.match(bare.text, /registered itself/);
      const operatorBare = await signOut({
        client_id: operators.id,
        post_logout_redirect_uri: 'https://rp.example/bye',
      });
      assert.equal(operatorBare.status, 302);
      const { user, password } = await s.user();
      const stored = await s.store.storage.clients.get(evil.client_id);
      assert.ok(stored);
      const hint = await s.gatehouse.engine.idTokens.issue({
        client: stored,
        userId: user.id,
        scope: ['openid'],
        authTime: s.clock.now(),
        sid: 'sid-1',
      });
      const hinted = await signOut({
        id_token_hint: hint,
        post_logout_redirect_uri: 'https://evil.example/phish',
        state: 'x',
      });
      assert.equal(hinted.status, 302, hinted.text.slice(0, 300));
      assert.equal(hinted.headers.location, 'https://evil.example/phish?state=x');

      // Answers to the user still go back, as OpenID Connect requires: prompt=none's login_required…
      const { challenge } = pkce();
      const flow = {
        client_id: evil.client_id,
        redirect_uri: 'https://evil.example/cb',
        response_type: 'code',
        scope: 'openid profile',
        state: 'st',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      };
      const silent = await authorize({ ...flow, prompt: 'none' });
      assert.equal(silent.status, 302, silent.text.slice(0, 300));
      assert.match(String(silent.headers.location), /^https:\/\/evil\.example\/cb\?error=login_required/);
      // …and the user's Deny, on a consent page that says where the answer goes.
      const path = `/authorize?${new URLSearchParams(flow).toString()}`;
      const browser = new FormBrowser(s);
      assert.equal((await browser.signIn(user.username, password, path)).status, 303);
      const consent = await browser.get(path);
      assert.ok(isConsentPage(consent), consent.text.slice(0, 400));
      assert.match(consent.text, SELF_REGISTERED);
      assert.match(
        consent.text,
        /it will redirect you to\s+<strong class="redirect-host">evil\.example<\/strong>/,
      );
      const denied = await browser.post('/consent', {
        csrf_token: FormBrowser.hidden(consent, 'csrf_token'),
        request: FormBrowser.hidden(consent, 'request'),
        decision: 'deny',
      });
      assert.equal(denied.status, 302, denied.text.slice(0, 300));
      assert.match(String(denied.headers.location), /^https:\/\/evil\.example\/cb\?error=access_denied/);
    });

    it("an operator's client's consent page says nothing of registering itself", async () => {
      const { client } = await server().client({
        name: 'Operated',
        redirect_uris: [CALLBACK],
        scopes: ['profile'],
      });
      const { user, password } = await server().user();
      const browser = new FormBrowser(server());
      const path = `/authorize?${new URLSearchParams({ response_type: 'code', client_id: client.id, scope: 'profile' }).toString()}`;
      assert.equal((await browser.signIn(user.username, password, path)).status, 303);
      const consent = await browser.get(path);
      assert.ok(isConsentPage(consent));
      assert.match(consent.text, /Operated/);
      assert.doesNotMatch(consent.text, /registered itself/);
      assert.doesNotMatch(consent.text, /redirect-host/);
    });

    it('a registered confidential client authenticates with its secret (client_secret_post)', async () => {
      const client = await registered(server(), {
        redirect_uris: [CALLBACK],
        token_endpoint_auth_method: 'client_secret_post',
        scope: 'profile',
      });
      const { token } = await codeFlow(server(), client, (form) =>
        server().http.token({
          ...form,
          client_id: client.client_id,
          client_secret: client.client_secret ?? '',
        }),
      );
      assert.equal(token.status, 200, token.text);
    });

    it('an operator finds the self-registered clients under /v1/clients?registration=open', async () => {
      const mine = await registered(server(), { redirect_uris: [CALLBACK], client_name: 'Listed' });
      const { token } = await clientCredentialsToken(server(), ['admin']);
      const get = (query: string) =>
        server().http.request(`/v1/clients?limit=100${query}`, {
          headers: { authorization: `Bearer ${token.access_token}` },
        });
      const open = await get('&registration=open');
      assert.equal(open.status, 200, open.text);
      const items = (open.json as { items: { client_id: string; registration: string }[] }).items;
      assert.ok(items.some((item) => item.client_id === mine.client_id));
      assert.ok(items.every((item) => item.registration === 'open'));
      const operator = (await get('&registration=operator')).json as { items: { registration: string }[] };
      assert.ok(operator.items.length > 0);
      assert.ok(operator.items.every((item) => item.registration === 'operator'));
      assert.equal((await get('&registration=anonymous')).status, 400);
      // And deletes one as any other client.
      const removed = await server().http.request(`/v1/clients/${mine.client_id}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${token.access_token}` },
      });
      assert.equal(removed.status, 204);
    });
  });

  describe(`registration rate limit (${backend})`, () => {
    const server = serverFor(backend, { dynamicRegistration: 'open', dynamicRegistrationRateLimit: 3 });

    it('answers 429 with Retry-After past the registrations an address may make in an hour', async () => {
      // Refused registrations count too: the limit is on requests.
      const first = await registered(server(), { redirect_uris: [CALLBACK] });
      assert.equal((await register(server(), { redirect_uris: [] })).status, 400);
      assert.equal((await register(server(), { redirect_uris: [CALLBACK] })).status, 201);
      const before = (await server().store.storage.clients.list({ limit: 100, offset: 0 })).total;
      const limited = await register(server(), { redirect_uris: [CALLBACK] });
      assert.equal(limited.status, 429, limited.text);
      assert.equal((limited.json as { error: string }).error, 'rate_limited');
      const retryAfter = Number(limited.headers['retry-after']);
      assert.ok(retryAfter >= 1 && retryAfter <= 3600, String(retryAfter));
      assert.equal((await server().store.storage.clients.list({ limit: 100, offset: 0 })).total, before);
      // Managing a registered client is not a registration.
      const read = await manage(server(), 'GET', first.client_id, first.registration_access_token);
      assert.equal(read.status, 200, read.text);
      // The next window allows again.
      server().clock.advance(retryAfter);
      assert.equal((await register(server(), { redirect_uris: [CALLBACK] })).status, 201);
    });
  });

  describe(`registration rate limit, bodies the JSON parser refuses (${backend})`, () => {
    const server = serverFor(backend, { dynamicRegistration: 'open', dynamicRegistrationRateLimit: 2 });

    it('counts every attempt, those refused before the body is read included', async () => {
      const send = (body: string) =>
        server().http.request('/register', { body, headers: { 'content-type': 'application/json' } });
      // Prototype poisoning (refused by the parser) and a malformed body.
      const poisoned = await send(`{"redirect_uris":["${CALLBACK}"],"__proto__":{"scope":"admin"}}`);
      assertMetadataRefusal(poisoned, 'invalid_client_metadata');
      assertMetadataRefusal(await send('{"redirect_uris": ['), 'invalid_client_metadata');
      const limited = await register(server(), { redirect_uris: [CALLBACK] });
      assert.equal(limited.status, 429, limited.text);
      assert.equal((await server().store.storage.clients.list({ limit: 10, offset: 0 })).total, 0);
    });
  });

  describe(`purge of unused anonymous registrations (${backend})`, () => {
    const server = serverFor(backend, { dynamicRegistration: 'open', dynamicRegistrationUnusedDays: 7 });

    it('deletes an open client nobody granted anything within 7 days, and keeps every other', async () => {
      const s = server();
      // Read from the table, not through the server's store handle: its client cache (docs/decisions.md,
      // decision 7) would serve a row the purge process deleted for a second more.
      const stored = async (id: string) =>
        (await tableRows(s.store.storage, 'clients')).find((row) => row.id === id);
      const unused = await registered(s, { redirect_uris: [CALLBACK], client_name: 'Abandoned' });
      const used = await registered(s, {
        redirect_uris: [CALLBACK],
        token_endpoint_auth_method: 'none',
        scope: 'profile',
      });
      await codeFlow(s, used, (form) => s.http.token({ ...form, client_id: used.client_id }));
      const operator = (await s.client({ redirect_uris: [CALLBACK] })).client;
      const { token } = await s.gatehouse.engine.initialAccessTokens.create({ expiresIn: 3600 });
      const viaToken = await registered(s, { redirect_uris: [CALLBACK] }, token);

      s.clock.advance(7 * DAY - 1);
      const younger = await registered(s, { redirect_uris: [CALLBACK] });
      const early = await s.gatehouse.purger.runUntilClean();
      assert.ok(await stored(unused.client_id), 'not yet 7 days old');
      assert.equal(early.clients, 0);
      assert.equal(early.initial_access_tokens, 1, 'the expired initial access token is purged');
      assert.deepEqual(await s.gatehouse.engine.initialAccessTokens.list(), []);

      s.clock.advance(2);
      const deleted = await s.gatehouse.purger.runUntilClean();
      assert.equal(deleted.clients, 1);
      assert.equal(await stored(unused.client_id), undefined);
      for (const kept of [used.client_id, operator.id, viaToken.client_id, younger.client_id]) {
        assert.ok(await stored(kept), kept);
      }
      assertBearerRefusal(
        await manage(s, 'GET', unused.client_id, unused.registration_access_token),
        'invalid_token',
      );

      // The used client's one-hour grant expired and was purged days ago: what keeps the client is
      // that it was granted something once, not a grant standing today.
      assert.equal(early.grants, 1);
      assert.deepEqual(await s.store.storage.grants.listByClient(used.client_id), []);

      s.clock.advance(30 * DAY);
      assert.equal((await s.gatehouse.purger.runUntilClean()).clients, 1);
      assert.ok(await stored(used.client_id));
      assert.equal(await stored(younger.client_id), undefined, 'unused, now old enough');
    });
  });
}
