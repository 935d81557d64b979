import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Client, User } from '../../src/core/model.js';
import { backends } from '../helpers/backends.js';
import { basicAuth, type HttpResponse } from '../helpers/https-client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { countRows } from '../helpers/store-sql.js';
import { FormBrowser } from '../helpers/form-browser.js';

// RFC 9126 over HTTPS, on each store: POST /par, then /authorize with the request_uri through the
// sign-in and consent pages (driven by HTTP here; test/browser/pushed-authorization-requests.test.ts
// does it in Chromium), single use, expiry, another client's request_uri, the per-client and
// server-wide requirement, and the token endpoint's rate limits.

const REDIRECT = 'https://client.test/cb';
const PREFIX = 'urn:ietf:params:oauth:request_uri:';

function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

function authorizePath(params: Record<string, string>): string {
  return `/authorize?${new URLSearchParams(params).toString()}`;
}

/** The 400 page of a request_uri that cannot be used: no redirect anywhere. */
function assertRefusedPage(res: HttpResponse, text = /expired or was already used/): void {
  assert.equal(res.status, 400, res.text.slice(0, 300));
  assert.equal(res.headers.location, undefined);
  assert.match(String(res.headers['content-type']), /^text\/html/);
  assert.match(res.text, text);
}

/** An RFC 6749 §5.2 JSON error, as RFC 9126 §2.3 has the pushed authorization request endpoint answer. */
function assertJsonError(res: HttpResponse, status: number, error: string): void {
  assert.equal(res.status, status, res.text.slice(0, 300));
  assert.match(String(res.headers['content-type']), /^application\/json/);
  assert.equal((res.json as { error?: string }).error, error);
  assert.ok(((res.json as { error_description?: string }).error_description ?? '').length > 0);
}

for (const backend of backends()) {
  describe(`RFC 9126 pushed authorization requests over HTTPS (${backend})`, () => {
    let server: TestServer;
    let alice: { user: User; password: string };
    let confidential: { client: Client; secret: string };
    let publicClient: Client;

    before(async () => {
      server = await startTestServer(backend);
      alice = await server.user();
      confidential = await server.client({
        name: 'Pushing App',
        redirect_uris: [REDIRECT],
        scopes: ['read', 'write'],
      });
      publicClient = (
        await server.client({
          name: 'Public Pusher',
          redirect_uris: [REDIRECT],
          scopes: ['read'],
          public: true,
        })
      ).client;
    });
    after(async () => {
      await server?.close();
    });

    const push = (form: Record<string, string>, headers: Record<string, string> = {}) =>
      server.http.request('/par', { form, headers });
    const pushBasic = (form: Record<string, string>, who = confidential) =>
      push(form, { authorization: basicAuth(who.client.id, who.secret) });

    /** Sign-in and consent through the pages for `path`; the 302 the consent answers with. */
    async function signInAndAllow(browser: FormBrowser, path: string): Promise<URL> {
      const signInPage = await browser.get(path);
      assert.equal(signInPage.status, 200, signInPage.text.slice(0, 300));
      // The page carries the request back as it came: client_id and request_uri only (RFC 9126 §4).
      assert.equal(FormBrowser.hidden(signInPage, 'next'), path);
      const signedIn = await browser.post('/sign-in', {
        csrf_token: FormBrowser.hidden(signInPage, 'csrf_token'),
        next: FormBrowser.hidden(signInPage, 'next'),
        username: alice.user.username,
        password: alice.password,
      });
      assert.equal(signedIn.status, 303);
      // A reload of the sign-in step's target: the same request, still there.
      const consentPage = await browser.get(String(signedIn.headers.location));
      assert.match(consentPage.text, /name="decision" value="allow"/, consentPage.text.slice(0, 300));
      assert.equal(FormBrowser.hidden(consentPage, 'request'), path.slice('/authorize?'.length));
      assert.equal((await browser.get(path)).status, 200, 'reloaded: the consent page again');
      const allowed = await browser.post('/consent', {
        csrf_token: FormBrowser.hidden(consentPage, 'csrf_token'),
        request: FormBrowser.hidden(consentPage, 'request'),
        decision: 'allow',
        lifetime: '3600',
        scope: ['read'],
      });
      assert.equal(allowed.status, 302, allowed.text.slice(0, 300));
      return new URL(String(allowed.headers.location));
    }

    it('the metadata names the endpoint and says pushing is not required of every client', async () => {
      for (const document of ['oauth-authorization-server', 'openid-configuration']) {
        const res = await server.http.request(`/.well-known/${document}`);
        const metadata = res.json as Record<string, unknown>;
        assert.equal(metadata.pushed_authorization_request_endpoint, 'https://gatehouse.test/par');
        assert.equal(metadata.require_pushed_authorization_requests, false);
      }
    });

    it('a confidential client (Basic): 201 with request_uri and expires_in, then the code flow; the request_uri is single use', async () => {
      const { verifier, challenge } = pkce();
      const pushed = await pushBasic({
        response_type: 'code',
        redirect_uri: REDIRECT,
        scope: 'read',
        state: 'st-1',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      });
      assert.equal(pushed.status, 201, pushed.text);
      assert.match(String(pushed.headers['content-type']), /^application\/json/);
      assert.equal(pushed.headers['cache-control'], 'no-store');
      const { request_uri, expires_in } = pushed.json as { request_uri: string; expires_in: number };
      assert.equal(expires_in, 60);
      assert.ok(request_uri.startsWith(PREFIX));
      // Stored by hash: the database holds nothing that opens it.
      const rows = await server.store.storage.db
        .selectFrom('pushed_authorization_requests')
        .selectAll()
        .where('client_id', '=', confidential.client.id)
        .execute();
      assert.equal(rows.length, 1);
      assert.ok(!JSON.stringify(rows).includes(request_uri.slice(PREFIX.length)));

      const path = authorizePath({ client_id: confidential.client.id, request_uri });
      const browser = new FormBrowser(server);
      const landed = await signInAndAllow(browser, path);
      assert.equal(landed.origin + landed.pathname, REDIRECT);
      assert.equal(landed.searchParams.get('state'), 'st-1');
      // RFC 9207: a pushed request's answer carries iss like any other.
      assert.equal(landed.searchParams.get('iss'), 'https://gatehouse.test');
      const code = landed.searchParams.get('code');
      assert.ok(code);

      const token = await server.http.request('/token', {
        headers: { authorization: basicAuth(confidential.client.id, confidential.secret) },
        form: { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
      });
      assert.equal(token.status, 200, token.text);
      assert.equal((token.json as { scope: string }).scope, 'read');

      // Replayed, by the same browser or another: refused, no second code.
      assertRefusedPage(await browser.get(path));
      assertRefusedPage(await new FormBrowser(server).get(path));
    });

    it('a public client with PKCE (client_id in the form): pushed, then the code flow', async () => {
      const { verifier, challenge } = pkce();
      const pushed = await push({
        client_id: publicClient.id,
        response_type: 'code',
        redirect_uri: REDIRECT,
        scope: 'read',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      });
      assert.equal(pushed.status, 201, pushed.text);
      const { request_uri } = pushed.json as { request_uri: string };
      const landed = await signInAndAllow(
        new FormBrowser(server),
        authorizePath({ client_id: publicClient.id, request_uri }),
      );
      const token = await server.http.request('/token', {
        form: {
          grant_type: 'authorization_code',
          client_id: publicClient.id,
          code: landed.searchParams.get('code') ?? '',
          redirect_uri: REDIRECT,
          code_verifier: verifier,
        },
      });
      assert.equal(token.status, 200, token.text);
    });

    it('a pushed request with errors is answered at /par: 400 (or 401, 405, 415) and nothing is stored', async () => {
      const before = await countRows(server.store.storage, 'pushed_authorization_requests');
      const { challenge } = pkce();
      const good = {
        response_type: 'code',
        redirect_uri: REDIRECT,
        scope: 'read',
        code_challenge: challenge,
      };
      const withS256 = { ...good, code_challenge_method: 'S256' };
      assertJsonError(await pushBasic({ ...withS256, scope: 'admin' }), 400, 'invalid_scope');
      assertJsonError(
        await pushBasic({ ...withS256, response_type: 'coded' }),
        400,
        'unsupported_response_type',
      );
      assertJsonError(
        await pushBasic({ ...withS256, redirect_uri: 'https://attacker.test/cb' }),
        400,
        'invalid_request',
      );
      assertJsonError(await pushBasic({ ...withS256, request_uri: `${PREFIX}x` }), 400, 'invalid_request');
      assertJsonError(
        await push({ ...good, client_id: publicClient.id, code_challenge_method: 'plain' }),
        400,
        'invalid_request',
      );
      assertJsonError(
        await push({ client_id: publicClient.id, response_type: 'code', scope: 'read' }),
        400,
        'invalid_request',
      );
      const wrongSecret = await push(withS256, { authorization: basicAuth(confidential.client.id, 'wrong') });
      assertJsonError(wrongSecret, 401, 'invalid_client');
      assert.match(String(wrongSecret.headers['www-authenticate']), /^Basic/);
      assertJsonError(await push(withS256), 401, 'invalid_client');
      const asGet = await server.http.request('/par');
      assertJsonError(asGet, 405, 'invalid_request');
      assert.equal(asGet.headers.allow, 'POST');
      const asJson = await server.http.request('/par', {
        body: JSON.stringify(withS256),
        headers: {
          'content-type': 'application/json',
          authorization: basicAuth(confidential.client.id, confidential.secret),
        },
      });
      assertJsonError(asJson, 415, 'invalid_request');
      assert.equal(await countRows(server.store.storage, 'pushed_authorization_requests'), before);
    });

    it('expired: a request_uri first used after expires_in is refused with a page', async () => {
      const pushed = await pushBasic({
        response_type: 'code',
        scope: 'read',
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
      });
      const { request_uri } = pushed.json as { request_uri: string };
      server.clock.advance(60);
      assertRefusedPage(
        await new FormBrowser(server).get(authorizePath({ client_id: confidential.client.id, request_uri })),
      );
    });

    it('another client’s request_uri is refused with a page, and the owner can still use it', async () => {
      const pushed = await pushBasic({
        response_type: 'code',
        scope: 'read',
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
      });
      const { request_uri } = pushed.json as { request_uri: string };
      assertRefusedPage(
        await new FormBrowser(server).get(authorizePath({ client_id: publicClient.id, request_uri })),
      );
      const signInPage = await new FormBrowser(server).get(
        authorizePath({ client_id: confidential.client.id, request_uri }),
      );
      assert.equal(signInPage.status, 200);
      assert.match(signInPage.text, /Pushing App/);
    });

    it('a request_uri that is not a pushed one stays refused: request_uri_not_supported at the redirect URI', async () => {
      const res = await server.http.request(
        authorizePath({
          client_id: confidential.client.id,
          response_type: 'code',
          redirect_uri: REDIRECT,
          state: 'x',
          request_uri: 'https://client.test/request.jwt',
        }),
      );
      assert.equal(res.status, 302);
      const location = new URL(String(res.headers.location));
      assert.equal(location.searchParams.get('error'), 'request_uri_not_supported');
      assert.equal(location.searchParams.get('state'), 'x');
    });

    it('a client registered with require_pushed_authorization_requests is refused /authorize without one', async () => {
      const strict = await server.client({
        name: 'Strict App',
        redirect_uris: [REDIRECT],
        scopes: ['read'],
        require_pushed_authorization_requests: true,
      });
      const plain = await server.http.request(
        authorizePath({
          client_id: strict.client.id,
          response_type: 'code',
          scope: 'read',
          state: 'p',
          code_challenge: pkce().challenge,
          code_challenge_method: 'S256',
        }),
      );
      assert.equal(plain.status, 302, plain.text.slice(0, 300));
      const location = new URL(String(plain.headers.location));
      assert.equal(location.origin + location.pathname, REDIRECT);
      assert.equal(location.searchParams.get('error'), 'invalid_request');
      assert.equal(location.searchParams.get('state'), 'p');

      const pushed = await pushBasic(
        {
          response_type: 'code',
          scope: 'read',
          code_challenge: pkce().challenge,
          code_challenge_method: 'S256',
        },
        strict,
      );
      const { request_uri } = pushed.json as { request_uri: string };
      const page = await new FormBrowser(server).get(
        authorizePath({ client_id: strict.client.id, request_uri }),
      );
      assert.equal(page.status, 200);
      assert.match(page.text, /Strict App/);
    });
  });

  describe(`RFC 9126 settings of the server (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(backend, {
        requirePushedAuthorizationRequests: true,
        rateLimits: { token: { perAddress: 3, perClient: 0 } },
      });
    });
    after(async () => {
      await server?.close();
    });

    it('GATEHOUSE_REQUIRE_PAR: the metadata says so, and every client must push', async () => {
      const metadata = (await server.http.request('/.well-known/oauth-authorization-server')).json as Record<
        string,
        unknown
      >;
      assert.equal(metadata.require_pushed_authorization_requests, true);
      const { client } = await server.client({ redirect_uris: [REDIRECT], scopes: ['read'] });
      const res = await server.http.request(
        authorizePath({
          client_id: client.id,
          response_type: 'code',
          code_challenge: pkce().challenge,
          code_challenge_method: 'S256',
        }),
      );
      assert.equal(res.status, 302);
      assert.equal(new URL(String(res.headers.location)).searchParams.get('error'), 'invalid_request');
    });

    it('/par counts against the token endpoint’s limits: one /token and two /par, then 429 at both', async () => {
      const { client, secret } = await server.client({ redirect_uris: [REDIRECT], scopes: ['read'] });
      const authorization = basicAuth(client.id, secret);
      const form = { response_type: 'code', code_challenge: pkce().challenge, code_challenge_method: 'S256' };
      const token = await server.http.request('/token', {
        headers: { authorization },
        form: { grant_type: 'client_credentials' },
      });
      assert.notEqual(token.status, 429);
      assert.equal((await server.http.request('/par', { headers: { authorization }, form })).status, 201);
      assert.equal((await server.http.request('/par', { headers: { authorization }, form })).status, 201);
      const limited = await server.http.request('/par', { headers: { authorization }, form });
      assertJsonError(limited, 429, 'rate_limited');
      assert.ok(Number(limited.headers['retry-after']) > 0);
      const tokenLimited = await server.http.request('/token', {
        headers: { authorization },
        form: { grant_type: 'client_credentials' },
      });
      assert.equal(tokenLimited.status, 429);
    });
  });
}
