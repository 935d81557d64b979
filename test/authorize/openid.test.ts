import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, jwtVerify, type JWTPayload } from 'jose';
import type { Client, User } from '../../src/core/model.js';
import { backends } from '../helpers/backends.js';
import type { HttpResponse } from '../helpers/https-client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { FormBrowser } from '../helpers/form-browser.js';

// OpenID Connect at the authorization endpoint over HTTPS, on every store: prompt=none, prompt=login,
// max_age, login_hint, prompt=select_account, request objects refused, form_post, POST /authorize,
// and RP-initiated logout. Named after the conformance suite's modules where one applies.

const REDIRECT = 'https://rp.test/cb';
const AFTER_LOGOUT = 'https://rp.test/signed-out';
const LONG_STATE = 'st-' + 'x'.repeat(125);

function authorizePath(params: Record<string, string>): string {
  return `/authorize?${new URLSearchParams(params).toString()}`;
}

/** The parameters of a 302 to the redirect URI, from the query or the fragment. */
function redirected(res: HttpResponse, mode: 'query' | 'fragment' = 'query'): URLSearchParams {
  assert.equal(res.status, 302, `${res.status} ${res.text.slice(0, 300)}`);
  const location = new URL(String(res.headers.location));
  assert.equal(location.origin + location.pathname, REDIRECT);
  if (mode === 'fragment') {
    assert.equal(location.search, '');
    return new URLSearchParams(location.hash.slice(1));
  }
  assert.equal(location.hash, '');
  return location.searchParams;
}

const isSignInPage = (res: HttpResponse) =>
  res.status === 200 && /<label for="password">Password<\/label>/.test(res.text);
const isConsentPage = (res: HttpResponse) =>
  res.status === 200 && /name="decision" value="allow"/.test(res.text);

for (const backend of backends()) {
  describe(`OpenID Connect at /authorize and /logout (${backend})`, () => {
    let server: TestServer;
    let rp: Client;
    let secret: string;
    let user: User;
    let password: string;

    before(async () => {
      server = await startTestServer(backend);
      ({ client: rp, secret } = await server.client({
        name: 'Relying Party',
        redirect_uris: [REDIRECT],
        grant_types: ['authorization_code', 'implicit', 'refresh_token'],
        scopes: ['openid', 'profile', 'email'],
        post_logout_redirect_uris: [AFTER_LOGOUT],
      }));
      ({ user, password } = await server.user('oidc-alice'));
    });
    after(async () => {
      await server.close();
    });

    const request = (extra: Record<string, string> = {}) =>
      authorizePath({
        response_type: 'code',
        client_id: rp.id,
        redirect_uri: REDIRECT,
        scope: 'openid profile',
        state: LONG_STATE,
        nonce: 'n-1',
        ...extra,
      });

    /** Signs in on the sign-in page `page` and follows the redirect back to /authorize. */
    async function signInOn(
      browser: FormBrowser,
      page: HttpResponse,
      as: User = user,
    ): Promise<HttpResponse> {
      assert.ok(
        isSignInPage(page),
        `expected the sign-in page, got ${page.status} ${page.text.slice(0, 200)}`,
      );
      const signedIn = await browser.post('/sign-in', {
        csrf_token: FormBrowser.hidden(page, 'csrf_token'),
        next: FormBrowser.hidden(page, 'next'),
        username: as.username,
        password,
      });
      assert.equal(signedIn.status, 303);
      return browser.get(String(signedIn.headers.location));
    }

    /** Allows on the consent page `page` (every box left ticked) and returns the answer. */
    async function allowOn(browser: FormBrowser, page: HttpResponse): Promise<HttpResponse> {
      assert.ok(
        isConsentPage(page),
        `expected the consent page, got ${page.status} ${page.text.slice(0, 200)}`,
      );
      const ticked = [...page.text.matchAll(/name="scope"\s+value="([^"]+)"/g)].map(
        (match) => match[1] ?? '',
      );
      return browser.post('/consent', {
        csrf_token: FormBrowser.hidden(page, 'csrf_token'),
        request: FormBrowser.hidden(page, 'request'),
        decision: 'allow',
        lifetime: '3600',
        scope: ticked,
      });
    }

    async function idTokenOf(code: string): Promise<JWTPayload> {
      const res = await server.http.token(
        { grant_type: 'authorization_code', code, redirect_uri: REDIRECT },
        { id: rp.id, secret },
      );
      assert.equal(res.status, 200, res.text);
      return verify(String((res.json as { id_token?: string }).id_token));
    }

    async function verify(idToken: string): Promise<JWTPayload> {
      const jwks = (await server.http.request('/jwks')).json as Parameters<typeof createLocalJWKSet>[0];
      const { payload } = await jwtVerify(idToken, createLocalJWKSet(jwks), {
        issuer: 'https://gatehouse.test',
        audience: rp.id,
        currentDate: new Date(server.clock.now() * 1000),
      });
      return payload;
    }

    /**
     * A browser signed in as a new user, who allowed the client once: the user and the first
     * id_token's claims.
     */
    async function signedInAndAllowed(): Promise<{ browser: FormBrowser; first: JWTPayload; as: User }> {
      const { user: as } = await server.user(undefined, password);
      const browser = new FormBrowser(server);
      const consent = await signInOn(browser, await browser.get(request()), as);
      const answer = redirected(await allowOn(browser, consent));
      assert.equal(answer.get('state'), LONG_STATE);
      return { browser, first: await idTokenOf(answer.get('code') ?? ''), as };
    }

    it('oidcc-prompt-none-not-logged-in: login_required by redirect, state intact, no page', async () => {
      const res = await new FormBrowser(server).get(request({ prompt: 'none' }));
      const params = redirected(res);
      assert.equal(params.get('error'), 'login_required');
      assert.equal(params.get('state'), LONG_STATE);
    });

    it('oidcc-prompt-none-logged-in: answered at once, the same sub and auth_time', async () => {
      const { browser, first, as } = await signedInAndAllowed();
      assert.equal(first.sub, as.id);
      assert.equal(first.nonce, 'n-1');
      assert.equal(typeof first.sid, 'string');
      server.clock.advance(5);
      const again = redirected(await browser.get(request({ prompt: 'none', nonce: 'n-2' })));
      const second = await idTokenOf(again.get('code') ?? '');
      assert.equal(second.sub, first.sub);
      assert.equal(second.auth_time, first.auth_time);
      assert.equal(second.sid, first.sid);
      assert.equal(second.nonce, 'n-2');
    });

    it('prompt=none for a client never allowed: consent_required', async () => {
      const { client } = await server.client({
        name: 'Never Allowed',
        redirect_uris: [REDIRECT],
        scopes: ['openid'],
      });
      const { browser } = await signedInAndAllowed();
      const params = redirected(
        await browser.get(
          authorizePath({
            response_type: 'code',
            client_id: client.id,
            redirect_uri: REDIRECT,
            scope: 'openid',
            prompt: 'none',
            state: 's',
          }),
        ),
      );
      assert.equal(params.get('error'), 'consent_required');
      assert.equal(params.get('state'), 's');
    });

    it('oidcc-id-token-hint: prompt=none with the id_token as hint answers at once', async () => {
      const { browser, as } = await signedInAndAllowed();
      const implicit = redirected(await browser.get(request({ response_type: 'code id_token' })), 'fragment');
      const hint = implicit.get('id_token') ?? '';
      assert.equal((await verify(hint)).sub, as.id);
      const again = redirected(
        await browser.get(request({ response_type: 'code id_token', prompt: 'none', id_token_hint: hint })),
        'fragment',
      );
      assert.equal(again.get('error'), null, again.toString());
      assert.ok(again.get('code'));
    });

    it('oidcc-prompt-login: the password again although signed in, once, and a later auth_time', async () => {
      const { browser, first, as } = await signedInAndAllowed();
      server.clock.advance(10);
      const page = await browser.get(request({ prompt: 'login' }));
      assert.ok(isSignInPage(page));
      assert.match(page.text, /asks you to enter your password again/);
      // The signed-in user's name is filled in.
      assert.match(page.text, new RegExp(`value="${as.username}"`));
      const answer = redirected(await signInOn(browser, page, as));
      const second = await idTokenOf(answer.get('code') ?? '');
      assert.equal(second.sub, first.sub);
      assert.equal(second.auth_time, Number(first.auth_time) + 10);
      assert.notEqual(second.sid, first.sid, 'a new sign-in is a new session');
      // The next prompt=login asks again.
      assert.ok(isSignInPage(await browser.get(request({ prompt: 'login' }))));
    });

    it('oidcc-max-age-1: an older sign-in asks again; the new auth_time is later', async () => {
      const { browser, first, as } = await signedInAndAllowed();
      server.clock.advance(2);
      const page = await browser.get(request({ max_age: '1' }));
      assert.ok(isSignInPage(page));
      assert.match(page.text, /You signed in a while ago/);
      const answer = redirected(await signInOn(browser, page, as));
      const second = await idTokenOf(answer.get('code') ?? '');
      assert.equal(second.auth_time, Number(first.auth_time) + 2);
    });

    it('oidcc-max-age-10000: a recent sign-in answers at once', async () => {
      const { browser, first } = await signedInAndAllowed();
      server.clock.advance(60);
      const answer = redirected(await browser.get(request({ max_age: '10000' })));
      assert.equal((await idTokenOf(answer.get('code') ?? '')).auth_time, first.auth_time);
    });

    it('max_age=0 asks for the password like prompt=login, then answers', async () => {
      const { browser, as } = await signedInAndAllowed();
      const page = await browser.get(request({ max_age: '0' }));
      assert.ok(isSignInPage(page));
      assert.ok(redirected(await signInOn(browser, page, as)).get('code'));
    });

    it('oidcc-login-hint: the user name is filled in', async () => {
      const page = await new FormBrowser(server).get(request({ login_hint: 'oidc-alice' }));
      assert.ok(isSignInPage(page));
      assert.match(page.text, /id="username"[^>]*value="oidc-alice"/s);
    });

    it('prompt=select_account: continue as the signed-in user, or sign in as another', async () => {
      const { browser, as } = await signedInAndAllowed();
      const page = await browser.get(request({ prompt: 'select_account' }));
      assert.equal(page.status, 200);
      assert.match(page.text, new RegExp(`Continue as ${as.username}`));
      assert.match(page.text, /Or sign in as someone else/);
      const chosen = await browser.post('/sign-in/continue', {
        csrf_token: FormBrowser.hidden(page, 'csrf_token'),
        next: FormBrowser.hidden(page, 'next'),
      });
      assert.equal(chosen.status, 303);
      assert.ok(redirected(await browser.get(String(chosen.headers.location))).get('code'));
    });

    it('the consent page names openid plainly, without a box to untick', async () => {
      const browser = new FormBrowser(server);
      const consent = await signInOn(browser, await browser.get(request({ scope: 'openid profile email' })));
      assert.ok(isConsentPage(consent));
      assert.match(consent.text, /Sign you in with your Gatehouse account/);
      assert.match(consent.text, /Your email address/);
      assert.doesNotMatch(consent.text, /name="scope"\s+value="openid"/);
      assert.match(consent.text, /name="scope"\s+value="email"/);
      // Unticking everything that can be unticked still signs the user in.
      const res = await browser.post('/consent', {
        csrf_token: FormBrowser.hidden(consent, 'csrf_token'),
        request: FormBrowser.hidden(consent, 'request'),
        decision: 'allow',
        lifetime: '3600',
      });
      const code = redirected(res).get('code') ?? '';
      const token = await server.http.token(
        { grant_type: 'authorization_code', code, redirect_uri: REDIRECT },
        { id: rp.id, secret },
      );
      assert.equal((token.json as { scope?: string }).scope, 'openid');
      assert.ok((token.json as { id_token?: string }).id_token);
    });

    it('oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported: request_not_supported', async () => {
      const params = redirected(
        await new FormBrowser(server).get(request({ request: 'eyJhbGciOiJub25lIn0.e30.' })),
      );
      assert.equal(params.get('error'), 'request_not_supported');
      assert.equal(params.get('state'), LONG_STATE);
    });

    it('oidcc-request-uri-unsigned-supported-correctly-or-rejected-as-unsupported: request_uri_not_supported', async () => {
      const params = redirected(
        await new FormBrowser(server).get(request({ request_uri: 'https://rp.test/request.jwt' })),
      );
      assert.equal(params.get('error'), 'request_uri_not_supported');
    });

    it('oidcc-ensure-post-request-succeeds: POST /authorize goes on to GET with the same parameters', async () => {
      const browser = new FormBrowser(server);
      const path = request({ prompt: 'none' });
      const res = await browser.post(
        '/authorize',
        Object.fromEntries(new URLSearchParams(path.split('?')[1])),
      );
      assert.equal(res.status, 303);
      const location = String(res.headers.location);
      assert.ok(location.startsWith('/authorize?'));
      assert.deepEqual(
        [...new URLSearchParams(location.split('?')[1])].sort(),
        [...new URLSearchParams(path.split('?')[1])].sort(),
      );
      assert.equal(redirected(await browser.get(location)).get('error'), 'login_required');
    });

    it('form_post: a page that posts the response to the redirect URI, under the pages’ policy', async () => {
      const { browser } = await signedInAndAllowed();
      const res = await browser.get(request({ response_type: 'code id_token', response_mode: 'form_post' }));
      assert.equal(res.status, 200);
      assert.equal(res.headers.location, undefined);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(res.headers['x-frame-options'], 'DENY');
      const csp = String(res.headers['content-security-policy']);
      assert.match(csp, /script-src 'self'(;|$)/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.match(csp, /form-action 'self' https:\/\/rp\.test(;|$)/);
      assert.match(
        res.text,
        /<form method="post" action="https:\/\/rp\.test\/cb" id="authorization-response"/,
      );
      assert.match(res.text, /<script type="module" src="\/assets\/form-post"><\/script>/);
      assert.match(res.text, /<noscript>[\s\S]*>Continue<\/button>[\s\S]*<\/noscript>/);
      const fields = new Map(
        [...res.text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [
          m[1],
          m[2],
        ]),
      );
      assert.deepEqual([...fields.keys()], ['code', 'id_token', 'state', 'iss']);
      assert.equal(fields.get('state'), LONG_STATE);
      assert.equal((await verify(fields.get('id_token') ?? '')).nonce, 'n-1');
      const script = await server.http.request('/assets/form-post');
      assert.equal(script.status, 200);
      assert.match(String(script.headers['content-type']), /^text\/javascript/);
      assert.match(script.text, /\.submit\(\)/);
    });

    it('form_post errors are posted too: prompt=none signed out', async () => {
      const res = await new FormBrowser(server).get(request({ prompt: 'none', response_mode: 'form_post' }));
      assert.equal(res.status, 200);
      assert.match(res.text, /name="error" value="login_required"/);
      assert.match(res.text, new RegExp(`name="state" value="${LONG_STATE}"`));
    });

    describe('RP-initiated logout', () => {
      const logoutPath = (params: Record<string, string>) =>
        `/logout?${new URLSearchParams(params).toString()}`;

      it('oidcc-rp-initiated-logout: "Sign out" confirms, the session ends, back with state; prompt=none then fails', async () => {
        const { browser } = await signedInAndAllowed();
        const implicit = redirected(
          await browser.get(request({ response_type: 'code id_token' })),
          'fragment',
        );
        const page = await browser.get(
          logoutPath({
            id_token_hint: implicit.get('id_token') ?? '',
            post_logout_redirect_uri: AFTER_LOGOUT,
            state: 'bye/1',
          }),
        );
        assert.equal(page.status, 200);
        assert.match(page.text, />Sign out<\/button>/);
        assert.match(page.text, /Relying Party<\/strong> asks you to sign out/);
        assert.equal(page.headers['x-frame-options'], 'DENY');
        assert.match(
          String(page.headers['content-security-policy']),
          /form-action 'self' https:\/\/rp\.test/,
        );
        // Without the form's CSRF token nothing happens.
        const forged = await browser.post('/logout/confirm', {
          request: FormBrowser.hidden(page, 'request'),
        });
        assert.equal(forged.status, 403);
        assert.ok(redirected(await browser.get(request({ prompt: 'none' }))).get('code'), 'still signed in');

        const done = await browser.post('/logout/confirm', {
          csrf_token: FormBrowser.hidden(page, 'csrf_token'),
          request: FormBrowser.hidden(page, 'request'),
        });
        assert.equal(done.status, 303);
        assert.equal(done.headers.location, `${AFTER_LOGOUT}?state=bye%2F1`);
        const after = redirected(await browser.get(request({ prompt: 'none' })));
        assert.equal(after.get('error'), 'login_required');
      });

      it('tokens issued before signing out stay valid', async () => {
        const { browser } = await signedInAndAllowed();
        const answer = redirected(await browser.get(request()));
        const token = await server.http.token(
          { grant_type: 'authorization_code', code: answer.get('code') ?? '', redirect_uri: REDIRECT },
          { id: rp.id, secret },
        );
        const { access_token: accessToken } = token.json as { access_token: string };
        const page = await browser.get('/logout');
        await browser.post('/logout/confirm', {
          csrf_token: FormBrowser.hidden(page, 'csrf_token'),
          request: FormBrowser.hidden(page, 'request'),
        });
        const introspection = await server.http.request('/introspect', {
          form: { token: accessToken },
          headers: { authorization: `Basic ${Buffer.from(`${rp.id}:${secret}`).toString('base64')}` },
        });
        assert.equal((introspection.json as { active: boolean }).active, true);
      });

      it('oidcc-rp-initiated-logout-only-state / no-params: "You are signed out"', async () => {
        const { browser } = await signedInAndAllowed();
        const page = await browser.get(logoutPath({ state: 'only' }));
        const done = await browser.post('/logout/confirm', {
          csrf_token: FormBrowser.hidden(page, 'csrf_token'),
          request: FormBrowser.hidden(page, 'request'),
        });
        assert.equal(done.status, 200);
        assert.equal(done.headers.location, undefined);
        assert.match(done.text, /You are signed out/);
        // Signed out already: the same page at once.
        const again = await browser.get('/logout');
        assert.equal(again.status, 200);
        assert.match(again.text, /You are signed out/);
      });

      it('signed out already, with a valid return address: straight back with state', async () => {
        const res = await new FormBrowser(server).get(
          logoutPath({ client_id: rp.id, post_logout_redirect_uri: AFTER_LOGOUT, state: 's' }),
        );
        assert.equal(res.status, 302);
        assert.equal(res.headers.location, `${AFTER_LOGOUT}?state=s`);
      });

      it('oidcc-rp-initiated-logout-bad-post-logout-redirect-uri / no-id-token-hint / modified-id-token-hint: a page, never a redirect', async () => {
        const { browser } = await signedInAndAllowed();
        const implicit = redirected(
          await browser.get(request({ response_type: 'code id_token' })),
          'fragment',
        );
        const hint = implicit.get('id_token') ?? '';
        const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
        const requests: Record<string, string>[] = [
          { id_token_hint: hint, post_logout_redirect_uri: 'https://attacker.test/', state: 's' },
          { id_token_hint: hint, post_logout_redirect_uri: `${AFTER_LOGOUT}?foo=bar`, state: 's' },
          { post_logout_redirect_uri: AFTER_LOGOUT, state: 's' },
          { id_token_hint: `${header}.${hint.split('.')[1] ?? ''}.`, post_logout_redirect_uri: AFTER_LOGOUT },
        ];
        for (const params of requests) {
          const res = await browser.get(logoutPath(params));
          assert.equal(res.status, 400, JSON.stringify(params));
          assert.equal(res.headers.location, undefined);
          assert.match(res.text, /This sign-out request cannot be completed/);
        }
        // Still signed in: nothing was ended.
        assert.ok(redirected(await browser.get(request({ prompt: 'none' }))).get('code'));
      });

      it('POST /logout goes on to GET with the same parameters', async () => {
        const res = await new FormBrowser(server).post('/logout', { client_id: rp.id, state: 'p' });
        assert.equal(res.status, 303);
        assert.equal(res.headers.location, `/logout?client_id=${encodeURIComponent(rp.id)}&state=p`);
      });
    });
  });
}
