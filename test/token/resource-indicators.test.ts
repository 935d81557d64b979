import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, jwtVerify, type JWTPayload } from 'jose';
import type { Client, User } from '../../src/core/model.js';
import { FormBrowser } from '../helpers/form-browser.js';
import { backends } from '../helpers/backends.js';
import { basicAuth, type HttpResponse } from '../helpers/https-client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  assertOAuthError,
  assertTokenSuccess,
  fetchJwks,
  ISSUER,
  pkcePair,
  type TokenBody,
} from '../helpers/token-responses.js';

const REDIRECT = 'https://app.example/cb';
const CALENDAR = 'https://calendar.example';
const FILES = 'https://files.example/v1';
/** Registered without scopes: it accepts any scope the client has. */
const ANYTHING = 'https://anything.example/mcp';
const UNREGISTERED = 'https://unregistered.example';

/**
 * RFC 8707 resource indicators end to end: /authorize, /token (code, refresh, client_credentials),
 * the tokens' `aud` checked with jose against /jwks, introspection, and /v1 refusing a token issued for
 * another resource.
 */
for (const backend of backends()) {
  describe(`resource indicators (${backend})`, () => {
    let server: TestServer;
    let client: Client;
    let credentials: { id: string; secret: string };
    let user: User;
    let password: string;
    before(async () => {
      server = await startTestServer(backend);
      const { resources } = server.gatehouse.engine;
      await resources.create({ uri: CALENDAR, scopes: ['calendar'] });
      await resources.create({ uri: FILES, scopes: ['files'] });
      await resources.create({ uri: ANYTHING });
      const created = await server.client({
        redirect_uris: [REDIRECT],
        grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
        scopes: ['calendar', 'files', 'admin'],
      });
      client = created.client;
      credentials = { id: client.id, secret: created.secret };
      ({ user, password } = await server.user());
    });
    after(async () => {
      await server.close();
    });

    /** The claims of an access token, verified as a resource server for `audience` would (RFC 9068 §4). */
    async function verifiedFor(token: string, audience: string): Promise<JWTPayload> {
      const { payload } = await jwtVerify(token, createLocalJWKSet(await fetchJwks(server)), {
        issuer: ISSUER,
        audience,
        typ: 'at+jwt',
        currentDate: new Date(server.clock.now() * 1000),
      });
      return payload;
    }

    function authorizePath(params: Record<string, string | string[]>): string {
      const query = new URLSearchParams();
      for (const [name, value] of Object.entries(params)) {
        for (const item of [value].flat()) query.append(name, item);
      }
      return `/authorize?${query.toString()}`;
    }

    /** Allows on the consent page `consent`, every box left ticked. */
    async function allow(browser: FormBrowser, consent: HttpResponse): Promise<HttpResponse> {
      assert.match(consent.text, /name="decision" value="allow"/, consent.text.slice(0, 300));
      const ticked = [...consent.text.matchAll(/name="scope"\s+value="([^"]+)"/g)].map((m) => m[1] ?? '');
      const allowed = await browser.post('/consent', {
        csrf_token: FormBrowser.hidden(consent, 'csrf_token'),
        request: FormBrowser.hidden(consent, 'request'),
        decision: 'allow',
        lifetime: '3600',
        scope: ticked,
      });
      assert.equal(allowed.status, 302, allowed.text.slice(0, 300));
      return allowed;
    }

    /** Signs a new browser in, allows the request (unless remembered), and returns the code. */
    async function codeFor(params: Record<string, string | string[]>): Promise<string> {
      const path = authorizePath({
        response_type: 'code',
        client_id: client.id,
        redirect_uri: REDIRECT,
        ...params,
      });
      const browser = new FormBrowser(server);
      const signIn = await browser.get(path);
      const signedIn = await browser.post('/sign-in', {
        csrf_token: FormBrowser.hidden(signIn, 'csrf_token'),
        next: FormBrowser.hidden(signIn, 'next'),
        username: user.username,
        password,
      });
      assert.equal(signedIn.status, 303, signedIn.text.slice(0, 300));
      const consent = await browser.get(String(signedIn.headers.location));
      // A confidential client's earlier consent is remembered (docs/decisions.md, decision 10).
      const allowed = consent.status === 302 ? consent : await allow(browser, consent);
      const code = new URL(String(allowed.headers.location)).searchParams.get('code');
      assert.ok(code, String(allowed.headers.location));
      return code;
    }

    const redeem = (code: string, form: Record<string, string | string[]> = {}) =>
      server.http.token(
        { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, ...form },
        credentials,
      );
    const refresh = (refreshToken: string, form: Record<string, string | string[]> = {}) =>
      server.http.token({ grant_type: 'refresh_token', refresh_token: refreshToken, ...form }, credentials);

    it('code flow: the token is for both resources, verified by each; narrowing at /token and at refresh', async () => {
      const code = await codeFor({ resource: [CALENDAR, FILES], scope: 'calendar files' });
      const first = assertTokenSuccess(await redeem(code));
      const claims = await verifiedFor(first.access_token, CALENDAR);
      assert.deepEqual(claims.aud, [CALENDAR, FILES]);
      assert.equal(claims.scope, 'calendar files');
      await verifiedFor(first.access_token, FILES);
      // Not Gatehouse's own: a resource server expecting the issuer refuses it.
      await assert.rejects(verifiedFor(first.access_token, ISSUER), /aud/);

      // Refresh narrowed to one resource: that token is for it alone, with its scope.
      const narrowed = assertTokenSuccess(await refresh(first.refresh_token ?? '', { resource: FILES }));
      const narrowClaims = await verifiedFor(narrowed.access_token, FILES);
      assert.equal(narrowClaims.aud, FILES);
      assert.equal(narrowClaims.scope, 'files');
      assert.equal(narrowed.scope, 'files');
      // The rotated refresh token keeps both.
      const full = assertTokenSuccess(await refresh(narrowed.refresh_token ?? ''));
      assert.deepEqual((await verifiedFor(full.access_token, CALENDAR)).aud, [CALENDAR, FILES]);
      assert.equal(full.scope, 'calendar files');

      // Widening is refused, and the refresh token is not spent.
      const current = full.refresh_token ?? '';
      assertOAuthError(await refresh(current, { resource: [CALENDAR, UNREGISTERED] }), 400, 'invalid_target');
      assertOAuthError(await refresh(current, { resource: CALENDAR, scope: 'files' }), 400, 'invalid_target');
      assertTokenSuccess(await refresh(current));
    });

    it('code flow: a resource at /token narrows the code’s; another is invalid_target and the code stays', async () => {
      const code = await codeFor({ resource: [CALENDAR, FILES] });
      assertOAuthError(await redeem(code, { resource: UNREGISTERED }), 400, 'invalid_target');
      assertOAuthError(await redeem(code, { resource: 'not a uri' }), 400, 'invalid_target');
      const token = assertTokenSuccess(await redeem(code, { resource: `${CALENDAR}/` }));
      const claims = await verifiedFor(token.access_token, CALENDAR);
      assert.equal(claims.aud, CALENDAR);
      assert.equal(claims.scope, 'calendar');
      // The refresh token remembers both resources.
      const other = assertTokenSuccess(await refresh(token.refresh_token ?? '', { resource: FILES }));
      assert.equal((await verifiedFor(other.access_token, FILES)).scope, 'files');
    });

    it('code flow without resource: the issuer; a resource at /token is then invalid_target', async () => {
      const code = await codeFor({ scope: 'calendar' });
      assertOAuthError(await redeem(code, { resource: CALENDAR }), 400, 'invalid_target');
      const token = assertTokenSuccess(await redeem(code));
      assert.equal((await verifiedFor(token.access_token, ISSUER)).aud, ISSUER);
      assertOAuthError(
        await refresh(token.refresh_token ?? '', { resource: CALENDAR }),
        400,
        'invalid_target',
      );
    });

    /** An error redirect from /authorize, before any sign-in: its parameters. */
    async function errorRedirect(params: Record<string, string | string[]>): Promise<URLSearchParams> {
      const res: HttpResponse = await server.http.request(
        authorizePath({ response_type: 'code', client_id: client.id, redirect_uri: REDIRECT, ...params }),
      );
      assert.equal(res.status, 302, res.text.slice(0, 300));
      const location = new URL(String(res.headers.location));
      assert.equal(`${location.origin}${location.pathname}`, REDIRECT);
      return location.searchParams;
    }

    it('/authorize: an unregistered resource, or a scope it does not offer, is an invalid_target redirect keeping state', async () => {
      const cases: Record<string, string | string[]>[] = [
        { resource: UNREGISTERED },
        { resource: [CALENDAR, 'https://calendar.example/#x'] },
        { resource: CALENDAR, scope: 'files' },
      ];
      for (const params of cases) {
        const answer = await errorRedirect({ ...params, state: 's-42' });
        assert.equal(answer.get('error'), 'invalid_target', JSON.stringify(params));
        assert.equal(answer.get('state'), 's-42');
        assert.equal(answer.get('iss') ?? ISSUER, ISSUER);
      }
      // The client and redirect URI come first: no redirect to an unregistered URI.
      const page = await server.http.request(
        authorizePath({
          response_type: 'code',
          client_id: client.id,
          redirect_uri: 'https://attacker.example/cb',
          resource: UNREGISTERED,
        }),
      );
      assert.equal(page.status, 400);
      assert.equal(page.headers.location, undefined);
    });

    it('client_credentials: the aud is the resource, the default scope what it offers; errors are invalid_target', async () => {
      const cc = (form: Record<string, string | string[]>) =>
        server.http.token({ grant_type: 'client_credentials', ...form }, credentials);
      const token = assertTokenSuccess(await cc({ resource: CALENDAR }));
      const claims = await verifiedFor(token.access_token, CALENDAR);
      assert.equal(claims.aud, CALENDAR);
      assert.equal(claims.scope, 'calendar');
      const both = assertTokenSuccess(await cc({ resource: [CALENDAR, FILES], scope: 'calendar files' }));
      assert.deepEqual((await verifiedFor(both.access_token, FILES)).aud, [CALENDAR, FILES]);
      assertOAuthError(await cc({ resource: UNREGISTERED }), 400, 'invalid_target');
      assertOAuthError(await cc({ resource: CALENDAR, scope: 'files' }), 400, 'invalid_target');
      assertOAuthError(await cc({ resource: `${CALENDAR}#frag` }), 400, 'invalid_target');
      // Other parameters still may not repeat (RFC 6749 §3.2).
      assertOAuthError(
        await cc({ resource: CALENDAR, scope: ['calendar', 'calendar'] }),
        400,
        'invalid_request',
      );
    });

    it('introspection reports aud; /v1 refuses a token for another resource with 401 invalid_token', async () => {
      const cc = (form: Record<string, string | string[]>): Promise<TokenBody> =>
        server.http
          .token({ grant_type: 'client_credentials', scope: 'admin', ...form }, credentials)
          .then(assertTokenSuccess);
      const forCalendar = await cc({ resource: CALENDAR, scope: 'calendar' });
      const adminElsewhere = await cc({ resource: ANYTHING });
      const adminHere = await cc({ resource: [ISSUER, FILES] });
      const plain = await cc({});

      const introspect = async (token: string) => {
        const res = await server.http.request('/introspect', {
          form: { token },
          headers: { authorization: basicAuth(credentials.id, credentials.secret) },
        });
        assert.equal(res.status, 200, res.text);
        return res.json as { active: boolean; aud?: string | string[] };
      };
      assert.deepEqual(await introspect(forCalendar.access_token).then((r) => [r.active, r.aud]), [
        true,
        CALENDAR,
      ]);
      assert.deepEqual((await introspect(adminHere.access_token)).aud, [ISSUER, FILES]);
      assert.equal((await introspect(plain.access_token)).aud, ISSUER);

      const list = (token: string) =>
        server.http.request('/v1/scopes', { headers: { authorization: `Bearer ${token}` } });
      const refused = await list(adminElsewhere.access_token);
      assert.equal(refused.status, 401, refused.text);
      assert.match(String(refused.headers['www-authenticate']), /error="invalid_token"/);
      assert.match(String((refused.json as { detail?: string }).detail), /another resource/);
      assert.equal((await list(adminHere.access_token)).status, 200);
      assert.equal((await list(plain.access_token)).status, 200);
    });

    it('a deleted resource is refused from then on; tokens already issued for it stay valid', async () => {
      const temporary = 'https://temporary.example';
      await server.gatehouse.engine.resources.create({ uri: temporary });
      const token = assertTokenSuccess(
        await server.http.token({ grant_type: 'client_credentials', resource: temporary }, credentials),
      );
      await server.gatehouse.engine.resources.delete(temporary);
      assertOAuthError(
        await server.http.token({ grant_type: 'client_credentials', resource: temporary }, credentials),
        400,
        'invalid_target',
      );
      await verifiedFor(token.access_token, temporary);
      const res = await server.http.request('/introspect', {
        form: { token: token.access_token },
        headers: { authorization: basicAuth(credentials.id, credentials.secret) },
      });
      assert.equal((res.json as { active: boolean }).active, true);
    });

    it('a pushed request (RFC 9126) carries its resources; an unregistered one is refused at /par', async () => {
      const push = (form: Record<string, string | string[]>) =>
        server.http.request('/par', {
          headers: { authorization: basicAuth(credentials.id, credentials.secret) },
          form: { response_type: 'code', redirect_uri: REDIRECT, ...form },
        });
      const refused = await push({ resource: [CALENDAR, UNREGISTERED] });
      assertOAuthError(refused, 400, 'invalid_target');
      const pushed = await push({ resource: [CALENDAR, FILES], scope: 'calendar files' });
      assert.equal(pushed.status, 201, pushed.text);
      const { request_uri: requestUri } = pushed.json as { request_uri: string };
      const code = await codeFor({ request_uri: requestUri });
      const token = assertTokenSuccess(await redeem(code));
      assert.deepEqual((await verifiedFor(token.access_token, FILES)).aud, [CALENDAR, FILES]);
    });

    it('a public client’s code flow with PKCE and a resource', async () => {
      const pub = await server.client({
        redirect_uris: [REDIRECT],
        grant_types: ['authorization_code'],
        scopes: ['calendar'],
        public: true,
      });
      const pkce = pkcePair();
      const previous = client;
      client = pub.client;
      try {
        const code = await codeFor({
          resource: CALENDAR,
          code_challenge: pkce.challenge,
          code_challenge_method: 'S256',
        });
        const res = await server.http.token({
          grant_type: 'authorization_code',
          code,
          redirect_uri: REDIRECT,
          client_id: pub.client.id,
          code_verifier: pkce.verifier,
          resource: CALENDAR,
        });
        assert.equal((await verifiedFor(assertTokenSuccess(res).access_token, CALENDAR)).aud, CALENDAR);
      } finally {
        client = previous;
      }
    });
  });
}
