import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { decodeJwt, exportJWK, generateKeyPair, SignJWT } from 'jose';
import type { ConfigInput } from '../../src/config.js';
import { parseHostRule } from '../../src/core/clients/metadata-documents.js';
import { apiClient, assertProblem, clientCredentialsToken, type ApiClient } from '../helpers/api-requests.js';
import { backends, type Backend } from '../helpers/backends.js';
import { makeProof, proofKey, type ProofKey } from '../helpers/dpop-proofs.js';
import { FormBrowser } from '../helpers/form-browser.js';
import type { HttpResponse } from '../helpers/https-client.js';
import { startKeyServer, type KeyServer, type KeyServerAnswer } from '../helpers/key-server.js';
import { cliOnServerStore, pkce } from '../helpers/registration.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Client ID Metadata Documents over HTTP on each store (draft-ietf-oauth-client-id-metadata-document,
 * decision 46): a client whose id is the https URL of its metadata, served by a real HTTPS host, runs
 * what any client runs (the code flow with PKCE, PAR, DPoP, resource indicators, refresh with rotation,
 * revocation, private_key_jwt); what cannot be used is said on an error page, never redirected; the
 * document is cached for its lifetime; the host shares one rate-limit allowance; the purge drops the
 * unused ones; the audit log and /v1 show them; an operator cannot edit one (its document would undo it).
 */

const ISSUER = 'https://gatehouse.test';
const CALLBACK = 'https://app.example/cb';
const MCP = 'https://mcp.example/mcp';
const DOCUMENT_SCOPES = ['openid', 'profile', 'offline_access', 'mcp:tools'];
const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** The page's text with the entities the templates write turned back. */
function pageText(res: HttpResponse): string {
  return res.text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&#x27;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** Decision 46: the authorization request's error page (HTML, 400, no redirect), saying why. */
function assertDocumentErrorPage(res: HttpResponse, why: RegExp): void {
  assert.equal(res.status, 400, res.text.slice(0, 400));
  assert.match(String(res.headers['content-type']), /^text\/html/);
  assert.equal(res.headers.location, undefined, 'never a redirect');
  const text = pageText(res);
  assert.match(text, /The application's metadata document cannot be used: /);
  assert.match(text, why);
}

function authorizePath(clientId: string, params: Record<string, string> = {}): string {
  return `/authorize?${new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: CALLBACK,
    scope: 'profile',
    state: 'st',
    code_challenge: pkce().challenge,
    code_challenge_method: 'S256',
    ...params,
  }).toString()}`;
}

function isConsentPage(res: HttpResponse): boolean {
  return res.status === 200 && /name="decision" value="allow"/.test(res.text);
}

/** Allows everything the consent page asks, for as long as it offers; returns where it redirects. */
async function allow(browser: FormBrowser, page: HttpResponse): Promise<URL> {
  assert.ok(isConsentPage(page), `${page.status}: ${page.text.slice(0, 400)}`);
  const scopes = [...page.text.matchAll(/name="scope"\s+value="([^"]*)"/g)].map((match) => match[1] ?? '');
  const answer = await browser.post('/consent', {
    csrf_token: FormBrowser.hidden(page, 'csrf_token'),
    request: FormBrowser.hidden(page, 'request'),
    decision: 'allow',
    scope: scopes,
    lifetime: 'forever',
  });
  assert.equal(answer.status, 302, answer.text.slice(0, 400));
  return new URL(String(answer.headers.location));
}

function codeOf(location: URL, redirectUri = CALLBACK): string {
  assert.equal(location.origin + location.pathname, redirectUri);
  assert.equal(location.searchParams.get('state'), 'st');
  const code = location.searchParams.get('code');
  assert.ok(code, location.href);
  return code;
}

/** A document for `id` with the test's defaults. */
function documentFor(id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    client_id: id,
    client_name: 'Notes',
    redirect_uris: [CALLBACK],
    grant_types: ['authorization_code', 'refresh_token'],
    scope: DOCUMENT_SCOPES.join(' '),
    ...extra,
  };
}

/** A server on `backend` with documents on (unless `overrides` say otherwise), trusting `host`'s CA. */
function serverFor(backend: Backend, host: () => KeyServer, overrides: ConfigInput): () => TestServer {
  let server: TestServer | undefined;
  before(async () => {
    server = await startTestServer(
      backend,
      { dynamicRegistrationScopes: DOCUMENT_SCOPES, ...overrides },
      { outboundCa: host().ca },
    );
  });
  after(async () => {
    await server?.close();
  });
  return () => {
    if (server === undefined) throw new Error('the server did not start');
    return server;
  };
}

const fetchesOf = (host: KeyServer, path: string) => host.requests.filter((entry) => entry === path).length;

for (const backend of backends()) {
  describe(`Client ID Metadata Documents (${backend})`, () => {
    let keyServer: KeyServer | undefined;
    const host = () => {
      if (keyServer === undefined) throw new Error('the key server did not start');
      return keyServer;
    };
    before(async () => {
      keyServer = await startKeyServer();
    });
    after(async () => {
      await keyServer?.close();
    });

    describe('off, the default', () => {
      const server = serverFor(backend, host, {});

      it('the metadata says nothing of documents, and an https client_id is not registered', async () => {
        const metadata = (await server().http.request('/.well-known/oauth-authorization-server'))
          .json as Record<string, unknown>;
        assert.equal(metadata.client_id_metadata_document_supported, undefined);
        const id = host().url('/off.json');
        host().answers.set('/off.json', { json: documentFor(id) });
        const before = host().requests.length;
        const page = await server().http.request(authorizePath(id));
        assert.equal(page.status, 400);
        assert.equal(page.headers.location, undefined);
        assert.match(pageText(page), /The application is not registered here/);
        assert.equal(host().requests.length, before, 'nothing fetched');
      });
    });

    describe('on, private addresses allowed for the test host', () => {
      const server = serverFor(backend, host, {
        clientIdMetadataDocuments: 'on',
        allowPrivateClientMetadata: true,
      });
      let browser: FormBrowser;
      let admin: ApiClient;
      const PUBLIC = () => host().url('/public.json');
      const SIGNED = () => host().url('/signed.json');
      let signingKey: { privateKey: CryptoKey; publicJwk: Record<string, unknown> };

      before(async () => {
        await server().gatehouse.engine.resources.create({
          uri: MCP,
          name: 'Notes MCP',
          scopes: ['mcp:tools'],
        });
        host().answers.set('/public.json', { json: documentFor(PUBLIC()) });
        const { privateKey, publicKey } = await generateKeyPair('ES256');
        signingKey = {
          privateKey,
          publicJwk: { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' },
        };
        host().answers.set('/signed.json', {
          json: documentFor(SIGNED(), {
            client_name: 'Signed notes',
            token_endpoint_auth_method: 'private_key_jwt',
            jwks: { keys: [signingKey.publicJwk] },
          }),
        });
        const { user, password } = await server().user();
        browser = new FormBrowser(server());
        assert.equal((await browser.signIn(user.username, password)).status, 303);
        admin = apiClient(server(), (await clientCredentialsToken(server(), ['admin'])).token);
      });

      it('the metadata says client_id_metadata_document_supported', async () => {
        for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
          const metadata = (await server().http.request(path)).json as Record<string, unknown>;
          assert.equal(metadata.client_id_metadata_document_supported, true, path);
        }
      });

      it('a public document client: PAR, PKCE, DPoP and a resource; refresh rotates', async () => {
        const key: ProofKey = await proofKey();
        const proof = () => makeProof(key, { htu: `${ISSUER}/token`, iat: server().clock.now() });
        const { verifier, challenge } = pkce();
        const pushed = await server().http.request('/par', {
          form: {
            client_id: PUBLIC(),
            response_type: 'code',
            redirect_uri: CALLBACK,
            scope: 'mcp:tools',
            state: 'st',
            code_challenge: challenge,
            code_challenge_method: 'S256',
            resource: MCP,
            dpop_jkt: key.jkt,
          },
        });
        assert.equal(pushed.status, 201, pushed.text);
        const requestUri = (pushed.json as { request_uri: string }).request_uri;
        const consent = await browser.get(
          `/authorize?${new URLSearchParams({ client_id: PUBLIC(), request_uri: requestUri }).toString()}`,
        );
        const code = codeOf(await allow(browser, consent));
        const token = await server().http.request('/token', {
          form: {
            grant_type: 'authorization_code',
            code,
            redirect_uri: CALLBACK,
            code_verifier: verifier,
            client_id: PUBLIC(),
            resource: MCP,
          },
          headers: { dpop: await proof() },
        });
        assert.equal(token.status, 200, token.text);
        const body = token.json as {
          access_token: string;
          token_type: string;
          refresh_token?: string;
          scope: string;
        };
        assert.equal(body.token_type, 'DPoP');
        assert.equal(body.scope, 'mcp:tools');
        const claims = decodeJwt(body.access_token);
        assert.equal(claims.client_id, PUBLIC());
        assert.deepEqual([claims.aud].flat(), [MCP]);
        assert.equal((claims.cnf as { jkt?: string } | undefined)?.jkt, key.jkt);
        const first = body.refresh_token;
        assert.match(first ?? '', /^rt_/);

        // Refresh with rotation (RFC 9700 §4.14.2): a new refresh token, the old one refused after.
        const refresh = (refreshToken: string) =>
          proof().then((dpop) =>
            server().http.request('/token', {
              form: { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: PUBLIC() },
              headers: { dpop },
            }),
          );
        const refreshed = await refresh(first ?? '');
        assert.equal(refreshed.status, 200, refreshed.text);
        const second = (refreshed.json as { refresh_token?: string; token_type: string }).refresh_token;
        assert.equal((refreshed.json as { token_type: string }).token_type, 'DPoP');
        assert.match(second ?? '', /^rt_/);
        assert.notEqual(second, first);
        const reused = await refresh(first ?? '');
        assert.equal(reused.status, 400, reused.text);
        assert.equal((reused.json as { error: string }).error, 'invalid_grant');
      });

      it('a public document client: the code flow without PAR, then /revoke', async () => {
        const { verifier, challenge } = pkce();
        const page = await browser.get(
          authorizePath(PUBLIC(), { scope: 'profile offline_access', code_challenge: challenge }),
        );
        const code = codeOf(await allow(browser, page));
        const token = await server().http.request('/token', {
          form: {
            grant_type: 'authorization_code',
            code,
            redirect_uri: CALLBACK,
            code_verifier: verifier,
            client_id: PUBLIC(),
          },
        });
        assert.equal(token.status, 200, token.text);
        const refreshToken = (token.json as { refresh_token: string }).refresh_token;
        const revoked = await server().http.request('/revoke', {
          form: { token: refreshToken, token_type_hint: 'refresh_token', client_id: PUBLIC() },
        });
        assert.equal(revoked.status, 200, revoked.text);
        const after = await server().http.request('/token', {
          form: { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: PUBLIC() },
        });
        assert.equal(after.status, 400, after.text);
        assert.equal((after.json as { error: string }).error, 'invalid_grant');
      });

      it('a private_key_jwt document client with jwks authenticates at /token with a client assertion', async () => {
        const { verifier, challenge } = pkce();
        const page = await browser.get(authorizePath(SIGNED(), { code_challenge: challenge }));
        assert.match(pageText(page), /Signed notes/);
        const code = codeOf(await allow(browser, page));
        const assertion = async (key: CryptoKey) =>
          new SignJWT({ jti: randomUUID() })
            .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
            .setIssuer(SIGNED())
            .setSubject(SIGNED())
            .setAudience(ISSUER)
            .setIssuedAt(server().clock.now())
            .setExpirationTime(server().clock.now() + 60)
            .sign(key);
        const form = {
          grant_type: 'authorization_code',
          code,
          redirect_uri: CALLBACK,
          code_verifier: verifier,
        };
        // Another key: refused, and the code is still there for the right one.
        const stranger = await generateKeyPair('ES256');
        const refused = await server().http.request('/token', {
          form: {
            ...form,
            client_assertion_type: CLIENT_ASSERTION_TYPE,
            client_assertion: await assertion(stranger.privateKey),
          },
        });
        assert.equal(refused.status, 401, refused.text);
        assert.equal((refused.json as { error: string }).error, 'invalid_client');
        const token = await server().http.request('/token', {
          form: {
            ...form,
            client_assertion_type: CLIENT_ASSERTION_TYPE,
            client_assertion: await assertion(signingKey.privateKey),
          },
        });
        assert.equal(token.status, 200, token.text);
        assert.equal(decodeJwt((token.json as { access_token: string }).access_token).client_id, SIGNED());
      });

      it("a loopback redirect URI with another port (RFC 8252 §7.3): taken for it, not for an operator's client", async () => {
        const id = host().url('/native.json');
        host().answers.set('/native.json', {
          json: documentFor(id, { redirect_uris: ['http://127.0.0.1:8080/cb'] }),
        });
        const otherPort = 'http://127.0.0.1:49152/cb';
        const page = await browser.get(authorizePath(id, { redirect_uri: otherPort }));
        const location = await allow(browser, page);
        codeOf(location, otherPort);
        const { client } = await server().client({
          name: 'operator native',
          public: true,
          redirect_uris: ['http://127.0.0.1:8080/cb'],
          scopes: ['profile'],
        });
        const refused = await browser.get(authorizePath(client.id, { redirect_uri: otherPort }));
        assert.equal(refused.status, 400, refused.text.slice(0, 400));
        assert.equal(refused.headers.location, undefined);
        assert.match(
          pageText(refused),
          /The return address \(redirect_uri\) is not one the application registered/,
        );
        // Its registered port is taken: the refusal was the port's.
        assert.ok(
          isConsentPage(
            await browser.get(authorizePath(client.id, { redirect_uri: 'http://127.0.0.1:8080/cb' })),
          ),
        );
      });

      const FAILURES: Array<[string, string, () => KeyServerAnswer, RegExp]> = [
        [
          "the document's client_id differs",
          '/mismatch.json',
          () => ({ json: documentFor(host().url('/other.json')) }),
          /the document's "client_id" is not the URL it was fetched from/,
        ],
        [
          'the document is not found',
          '/missing.json',
          () => ({ status: 404 }),
          /the document at 127\.0\.0\.1:\d+ could not be fetched: answered 404/,
        ],
        [
          'the answer is not JSON',
          '/page.html',
          () => ({ bytes: Buffer.from('<html>hello</html>') }),
          /the answer is not JSON/,
        ],
        [
          'the document holds a client secret',
          '/secret.json',
          () => ({ json: documentFor(host().url('/secret.json'), { client_secret: 'hunter2' }) }),
          /holds a client secret/,
        ],
        [
          'the name imitates the server',
          '/imitation.json',
          () => ({ json: documentFor(host().url('/imitation.json'), { client_name: 'Gatehouse' }) }),
          /client_name is, or looks like, the name of this server/,
        ],
      ];
      for (const [name, path, answer, why] of FAILURES) {
        it(`an error page, never a redirect, when ${name}`, async () => {
          host().answers.set(path, answer());
          const page = await browser.get(authorizePath(host().url(path)));
          assertDocumentErrorPage(page, why);
          assert.doesNotMatch(page.text, /hunter2/);
        });
      }

      it('caches the document for its lifetime, and fetches it again after', async () => {
        const id = host().url('/cached.json');
        host().answers.set('/cached.json', {
          json: documentFor(id),
          headers: { 'cache-control': 'max-age=120' },
        });
        assert.ok(isConsentPage(await browser.get(authorizePath(id))));
        assert.equal(fetchesOf(host(), '/cached.json'), 1);
        assert.ok(isConsentPage(await browser.get(authorizePath(id))));
        server().clock.advance(119);
        assert.ok(isConsentPage(await browser.get(authorizePath(id))));
        assert.equal(fetchesOf(host(), '/cached.json'), 1, 'the stored copy stood');
        server().clock.advance(1);
        host().answers.set('/cached.json', {
          json: documentFor(id, { client_name: 'Cached notes' }),
          headers: { 'cache-control': 'max-age=120' },
        });
        const page = await browser.get(authorizePath(id));
        assert.equal(fetchesOf(host(), '/cached.json'), 2, 'fetched again once stale');
        assert.match(pageText(page), /Cached notes/);
      });

      it('/v1/audit-events shows client.registered for the first fetch, without a secret', async () => {
        const res = await admin.get(`/audit-events?client_id=${encodeURIComponent(PUBLIC())}`);
        assert.equal(res.status, 200, res.text);
        const items = (res.json as { items: Array<{ type: string; detail: string | null; after: unknown }> })
          .items;
        const registered = items.filter((event) => event.type === 'client.registered');
        assert.equal(registered.length, 1, JSON.stringify(items));
        assert.equal(registered[0]?.detail, 'registration document');
        assert.equal((registered[0]?.after as { registration?: string }).registration, 'document');
        assert.doesNotMatch(JSON.stringify(items), /secret_hash|"client_secret"/);
        // The document did not change: no client.updated.
        assert.equal(items.filter((event) => event.type === 'client.updated').length, 0);
      });

      it('GET /v1/clients lists it with registration "document"', async () => {
        const res = await admin.get('/clients?registration=document&limit=100');
        assert.equal(res.status, 200, res.text);
        const items = (res.json as { items: Array<{ client_id: string; registration: string }> }).items;
        const ids = items.map((item) => item.client_id);
        assert.ok(ids.includes(PUBLIC()), ids.join(', '));
        assert.ok(ids.includes(SIGNED()));
        assert.ok(items.every((item) => item.registration === 'document'));
        const one = await admin.get(`/clients/${encodeURIComponent(PUBLIC())}`);
        assert.equal((one.json as { registration: string }).registration, 'document');
      });

      it('an operator cannot edit one through /v1/clients (409, change the document); deleting is allowed', async () => {
        const id = host().url('/edited.json');
        host().answers.set('/edited.json', { json: documentFor(id) });
        assert.ok(isConsentPage(await browser.get(authorizePath(id))));
        const path = `/clients/${encodeURIComponent(id)}`;
        for (const res of [
          await admin.patch(path, { name: 'Renamed' }),
          await admin.put(path, { name: 'Renamed', redirect_uris: [CALLBACK] }),
        ]) {
          const problem = assertProblem(res, 409, 'registration');
          assert.match(
            String(problem.detail),
            new RegExp(`described by its document at ${id.replace(/[.]/g, '\\.')}`),
          );
          assert.match(String(problem.detail), /change the document instead/);
        }
        assert.equal(((await admin.get(path)).json as { name: string }).name, 'Notes', 'unchanged');
        assert.equal((await admin.delete(path)).status, 204);
        assert.equal((await admin.get(path)).status, 404);
        // Fetched again when next used.
        const before = fetchesOf(host(), '/edited.json');
        assert.ok(isConsentPage(await browser.get(authorizePath(id))));
        assert.equal(fetchesOf(host(), '/edited.json'), before + 1);
        assert.equal((await admin.get(path)).status, 200);
      });

      it('nor through `gatehouse clients update`; `clients list` and `show` say "document"', async () => {
        const update = await cliOnServerStore(server(), ['clients', 'update', PUBLIC(), '--name', 'Renamed']);
        assert.notEqual(update.code, 0, update.stdout);
        assert.match(update.stderr, /described by its document at .*change the document instead/);
        const list = await cliOnServerStore(server(), ['clients', 'list', '--registration', 'document']);
        assert.equal(list.code, 0, list.stderr);
        const line = list.stdout.split('\n').find((entry) => entry.startsWith(`${PUBLIC()} `));
        assert.match(line ?? '', /\sdocument$/, list.stdout);
        const show = await cliOnServerStore(server(), ['clients', 'show', PUBLIC()]);
        assert.equal(show.code, 0, show.stderr);
        assert.match(show.stdout, /registration:\s+document/);
        assert.match(show.stdout, /name:\s+Notes/);
      });

      it('the purge drops a document client unused past the cutoff, and keeps one with a grant', async () => {
        const unused = host().url('/unused.json');
        host().answers.set('/unused.json', { json: documentFor(unused) });
        assert.ok(isConsentPage(await browser.get(authorizePath(unused))));
        const { clients } = server().gatehouse.storage;
        assert.ok(
          (await clients.list({ registration: 'document', limit: 100, offset: 0 })).items.some(
            (client) => client.id === unused,
          ),
        );
        // GATEHOUSE_DYNAMIC_REGISTRATION_UNUSED_DAYS, 7 by default; the signed client's grant is 'forever'.
        server().clock.advance(8 * 86_400);
        const purged = await server().gatehouse.purger.runOnce();
        assert.ok((purged.clients ?? 0) >= 1, JSON.stringify(purged));
        // Listed from the store itself (a client read by id may come from this process's short cache).
        const stored = async () =>
          (await clients.list({ registration: 'document', limit: 100, offset: 0 })).items.map(
            (client) => client.id,
          );
        const left = await stored();
        assert.ok(!left.includes(unused), 'the unused one is gone');
        assert.ok(left.includes(SIGNED()), 'the granted one stays');
      });
    });

    describe('on, private addresses not allowed (the default)', () => {
      const server = serverFor(backend, host, { clientIdMetadataDocuments: 'on' });

      it('an error page: the address is not public, and nothing reached the host', async () => {
        const before = host().requests.length;
        const port = new URL(host().origin).port;
        assertDocumentErrorPage(
          await server().http.request(authorizePath(host().url('/public.json'))),
          /could not be fetched: 127\.0\.0\.1 is not a public address/,
        );
        assertDocumentErrorPage(
          await server().http.request(authorizePath(`https://localhost:${port}/public.json`)),
          /could not be fetched: localhost resolves to a non-public address/,
        );
        assert.equal(host().requests.length, before);
      });
    });

    describe('on, only localhost allowed, and a low per-client limit at /authorize', () => {
      const server = serverFor(backend, host, {
        clientIdMetadataDocuments: 'on',
        allowPrivateClientMetadata: true,
        clientIdMetadataHosts: parseHostRule('localhost'),
        rateLimitWindowSeconds: 60,
        rateLimits: { authorize: { perAddress: 1000, perClient: 3 } },
      });
      const local = (path: string) => `https://localhost:${new URL(host().origin).port}${path}`;

      it('a host not on GATEHOUSE_CLIENT_ID_METADATA_HOSTS: an error page, nothing fetched', async () => {
        const before = host().requests.length;
        assertDocumentErrorPage(
          await server().http.request(authorizePath(host().url('/public.json'))),
          new RegExp(
            `applications from 127\\.0\\.0\\.1:${new URL(host().origin).port} are not accepted here`,
          ),
        );
        assert.equal(host().requests.length, before);
      });

      it('two client_ids on one host share the per-client allowance at /authorize', async () => {
        server().clock.advance(60 - (server().clock.now() % 60));
        for (const path of ['/rate-a.json', '/rate-b.json']) {
          host().answers.set(path, { json: documentFor(local(path)) });
        }
        const statuses = [];
        for (const path of ['/rate-a.json', '/rate-a.json', '/rate-b.json', '/rate-b.json']) {
          statuses.push((await server().http.request(authorizePath(local(path)))).status);
        }
        // Not signed in: the first three go to the sign-in page; the fourth is over the host's allowance.
        assert.notEqual(statuses[2], 429, statuses.join(', '));
        assert.equal(statuses[3], 429, statuses.join(', '));
        // An operator's client is counted as itself.
        const { client } = await server().client({
          name: 'operator app',
          public: true,
          redirect_uris: [CALLBACK],
        });
        assert.notEqual((await server().http.request(authorizePath(client.id))).status, 429);
      });
    });
  });
}
