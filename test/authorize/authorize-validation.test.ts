import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Client } from '../../src/core/model.js';
import { backends } from '../helpers/backends.js';
import type { HttpResponse } from '../helpers/https-client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const REDIRECT = 'https://client.test/cb';

function authorizePath(params: Record<string, string | string[]>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    for (const item of Array.isArray(value) ? value : [value]) query.append(name, item);
  }
  return `/authorize?${query.toString()}`;
}

/** A 400 HTML error page that sends the browser nowhere (RFC 6749 §4.1.2.1). */
function assertErrorPage(res: HttpResponse): void {
  assert.equal(res.status, 400, res.text.slice(0, 200));
  assert.equal(res.headers.location, undefined);
  assert.match(String(res.headers['content-type']), /^text\/html/);
  assert.match(res.text, /This request cannot be completed/);
}

/** A 302 to the registered redirect URI with the error where the response type puts it. */
function assertErrorRedirect(
  res: HttpResponse,
  error: string,
  options: { state?: string; mode?: 'query' | 'fragment'; base?: string } = {},
): URLSearchParams {
  assert.equal(res.status, 302, res.text.slice(0, 200));
  const location = new URL(String(res.headers.location));
  assert.equal(location.origin + location.pathname, options.base ?? REDIRECT);
  const params =
    options.mode === 'fragment' ? new URLSearchParams(location.hash.slice(1)) : location.searchParams;
  if (options.mode === 'fragment') assert.equal(location.search, '', 'nothing in the query');
  else assert.equal(location.hash, '', 'nothing in the fragment');
  assert.equal(params.get('error'), error);
  assert.ok((params.get('error_description') ?? '').length > 0);
  assert.equal(params.get('state'), options.state ?? null);
  // RFC 9207 §2: errors name the issuer too.
  assert.equal(params.get('iss'), 'https://gatehouse.test');
  return params;
}

const challenge = () =>
  createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');

for (const backend of backends()) {
  describe(`GET /authorize validation (${backend})`, () => {
    let server: TestServer;
    let confidential: Client;
    let publicClient: Client;
    let implicitOnly: Client;
    let twoUris: Client;

    before(async () => {
      server = await startTestServer(backend);
      confidential = (
        await server.client({ redirect_uris: [REDIRECT], scopes: ['read', 'write'], name: 'Confidential' })
      ).client;
      publicClient = (
        await server.client({ redirect_uris: [REDIRECT], scopes: ['read'], public: true, name: 'Public' })
      ).client;
      implicitOnly = (
        await server.client({ redirect_uris: [REDIRECT], grant_types: ['implicit'], scopes: ['read'] })
      ).client;
      twoUris = (
        await server.client({ redirect_uris: [REDIRECT, 'https://client.test/other'], scopes: ['read'] })
      ).client;
    });
    after(async () => {
      await server.close();
    });

    it('shows a 400 page, never a redirect, for a missing or unknown client', async () => {
      assertErrorPage(
        await server.http.request(authorizePath({ response_type: 'code', redirect_uri: REDIRECT })),
      );
      assertErrorPage(
        await server.http.request(
          authorizePath({ response_type: 'code', client_id: 'no-such-client', redirect_uri: REDIRECT }),
        ),
      );
      assertErrorPage(
        await server.http.request(
          authorizePath({ response_type: 'code', client_id: [confidential.id, confidential.id] }),
        ),
      );
    });

    it('shows a 400 page for a redirect URI that does not match a registered one exactly', async () => {
      for (const redirect of [
        'https://attacker.test/cb',
        `${REDIRECT}/`,
        `${REDIRECT}?x=1`,
        'https://CLIENT.test/cb',
        'https://client.test/cb#frag',
      ]) {
        const res = await server.http.request(
          authorizePath({
            response_type: 'code',
            client_id: confidential.id,
            redirect_uri: redirect,
            state: 's',
          }),
        );
        assertErrorPage(res);
        assert.doesNotMatch(res.text, /attacker/);
      }
    });

    it('lets redirect_uri be omitted only when exactly one is registered', async () => {
      const one = await server.http.request(
        authorizePath({ response_type: 'code', client_id: confidential.id, state: 'x' }),
      );
      assert.equal(one.status, 200);
      assert.match(one.text, /<label for="username">Username<\/label>/);
      assertErrorPage(
        await server.http.request(authorizePath({ response_type: 'code', client_id: twoUris.id })),
      );
      assertErrorPage(
        await server.http.request(
          authorizePath({ response_type: 'code', client_id: twoUris.id, redirect_uri: [REDIRECT, REDIRECT] }),
        ),
      );
    });

    it('redirects every later error with error, error_description and state in the query', async () => {
      const base = { client_id: confidential.id, redirect_uri: REDIRECT, state: 'st 1/2' };
      assertErrorRedirect(await server.http.request(authorizePath(base)), 'invalid_request', {
        state: 'st 1/2',
      });
      assertErrorRedirect(
        await server.http.request(authorizePath({ ...base, response_type: 'id_token' })),
        'unsupported_response_type',
        { state: 'st 1/2' },
      );
      assertErrorRedirect(
        await server.http.request(authorizePath({ ...base, response_type: 'code', scope: 'read admin' })),
        'invalid_scope',
        { state: 'st 1/2' },
      );
      assertErrorRedirect(
        await server.http.request(
          authorizePath({ ...base, response_type: 'code', scope: ['read', 'write'] }),
        ),
        'invalid_request',
        { state: 'st 1/2' },
      );
      // A repeated state cannot be echoed: which one would it be?
      assertErrorRedirect(
        await server.http.request(authorizePath({ ...base, response_type: 'code', state: ['a', 'b'] })),
        'invalid_request',
      );
    });

    it('sends errors of the implicit flow in the fragment', async () => {
      const res = await server.http.request(
        authorizePath({
          response_type: 'token',
          client_id: confidential.id,
          redirect_uri: REDIRECT,
          state: 'f',
        }),
      );
      // The client is not registered for the implicit grant.
      assertErrorRedirect(res, 'unauthorized_client', { state: 'f', mode: 'fragment' });
      assertErrorRedirect(
        await server.http.request(
          authorizePath({ response_type: 'token', client_id: implicitOnly.id, scope: 'nope', state: 'g' }),
        ),
        'invalid_scope',
        { state: 'g', mode: 'fragment' },
      );
    });

    it('answers unauthorized_client when the client may not use the code flow', async () => {
      assertErrorRedirect(
        await server.http.request(authorizePath({ response_type: 'code', client_id: implicitOnly.id })),
        'unauthorized_client',
      );
    });

    it('requires public clients to send an S256 code challenge', async () => {
      const base = { response_type: 'code', client_id: publicClient.id, state: 'p' };
      assertErrorRedirect(await server.http.request(authorizePath(base)), 'invalid_request', { state: 'p' });
      const verifierLike = randomBytes(32).toString('base64url');
      // plain, explicitly or by default (RFC 7636 §4.3), is off unless configured.
      assertErrorRedirect(
        await server.http.request(
          authorizePath({ ...base, code_challenge: verifierLike, code_challenge_method: 'plain' }),
        ),
        'invalid_request',
        { state: 'p' },
      );
      assertErrorRedirect(
        await server.http.request(authorizePath({ ...base, code_challenge: verifierLike })),
        'invalid_request',
        { state: 'p' },
      );
      assertErrorRedirect(
        await server.http.request(
          authorizePath({ ...base, code_challenge: 'too-short', code_challenge_method: 'S256' }),
        ),
        'invalid_request',
        { state: 'p' },
      );
      assertErrorRedirect(
        await server.http.request(authorizePath({ ...base, code_challenge_method: 'S256' })),
        'invalid_request',
        { state: 'p' },
      );
      const ok = await server.http.request(
        authorizePath({ ...base, code_challenge: challenge(), code_challenge_method: 'S256' }),
      );
      assert.equal(ok.status, 200);
      assert.match(ok.text, /Sign in/);
    });

    it('keeps the query a redirect URI was registered with', async () => {
      const withQuery = 'https://client.test/cb?tenant=7';
      const { client } = await server.client({ redirect_uris: [withQuery], scopes: ['read'] });
      const res = await server.http.request(
        authorizePath({ response_type: 'code', client_id: client.id, scope: 'write', state: 'q' }),
      );
      const params = assertErrorRedirect(res, 'invalid_scope', { state: 'q' });
      assert.equal(params.get('tenant'), '7');
    });

    it('escapes what the request says on its pages and refuses framing', async () => {
      const { client } = await server.client({
        redirect_uris: [REDIRECT],
        name: '<img src=x onerror=alert(1)>',
      });
      const res = await server.http.request(authorizePath({ response_type: 'code', client_id: client.id }));
      assert.equal(res.status, 200);
      assert.doesNotMatch(res.text, /<img src=x/);
      assert.match(res.text, /&lt;img src=x onerror=alert\(1\)&gt;/);
      assert.equal(res.headers['x-frame-options'], 'DENY');
      const csp = String(res.headers['content-security-policy']);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.match(csp, /script-src 'self'(;|$)/);
      assert.doesNotMatch(csp, /unsafe-inline/);
      assert.match(csp, /form-action 'self' https:\/\/client\.test/);
      assert.equal(res.headers['cache-control'], 'no-store');
      const cookie = String(res.headers['set-cookie']);
      assert.match(cookie, /^__Host-gatehouse=bs_/);
      assert.match(cookie, /Secure/);
      assert.match(cookie, /HttpOnly/);
      assert.match(cookie, /SameSite=Lax/);
    });

    it('advertises the authorization endpoint and both response types in the metadata', async () => {
      const res = await server.http.request('/.well-known/oauth-authorization-server');
      const metadata = res.json as Record<string, unknown>;
      assert.equal(metadata.authorization_endpoint, 'https://gatehouse.test/authorize');
      assert.ok((metadata.response_types_supported as string[]).includes('code'));
      assert.ok((metadata.response_types_supported as string[]).includes('token'));
      assert.ok((metadata.grant_types_supported as string[]).includes('implicit'));
    });
  });

  describe(`GET /authorize with plain PKCE allowed (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(backend, { allowPlainPkce: true });
    });
    after(async () => {
      await server.close();
    });

    it('accepts a plain challenge from a public client only when configured', async () => {
      const { client } = await server.client({ redirect_uris: [REDIRECT], public: true });
      const res = await server.http.request(
        authorizePath({
          response_type: 'code',
          client_id: client.id,
          code_challenge: randomBytes(32).toString('base64url'),
          code_challenge_method: 'plain',
        }),
      );
      assert.equal(res.status, 200);
      assert.match(res.text, /Sign in/);
    });
  });
}
