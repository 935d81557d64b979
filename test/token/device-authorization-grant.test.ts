import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import type { Client, User } from '../../src/core/model.js';
import { FormBrowser } from '../helpers/form-browser.js';
import { backends } from '../helpers/backends.js';
import { basicAuth, type HttpResponse } from '../helpers/https-client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { countRows } from '../helpers/store-sql.js';

// RFC 8628 over HTTPS, on each store: POST /device_authorization, the verification and consent pages
// (driven by HTTP here; test/browser/device-flow.test.ts does it in Chromium), each answer of the
// polling token endpoint, deny, expiry, concurrent redemption, the throttle of wrong user codes and
// the endpoint's rate limit.

const GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';
const ISSUER = 'https://gatehouse.test';

interface Started {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

/** An RFC 6749 §5.2 JSON error, never cached. */
function assertJsonError(res: HttpResponse, status: number, error: string, description?: RegExp): void {
  assert.equal(res.status, status, res.text.slice(0, 300));
  assert.match(String(res.headers['content-type']), /^application\/json/);
  assert.equal(res.headers['cache-control'], 'no-store');
  const body = res.json as { error?: string; error_description?: string };
  assert.equal(body.error, error, res.text);
  assert.ok((body.error_description ?? '').length > 0);
  if (description !== undefined) assert.match(body.error_description ?? '', description);
}

/** An HTML page with a message, never a redirect. */
function assertPage(res: HttpResponse, status: number, text: RegExp): void {
  assert.equal(res.status, status, res.text.slice(0, 400));
  assert.equal(res.headers.location, undefined);
  assert.match(String(res.headers['content-type']), /^text\/html/);
  assert.match(res.text, text);
}

for (const backend of backends()) {
  describe(`RFC 8628 device authorization grant over HTTPS (${backend})`, () => {
    let server: TestServer;
    let alice: { user: User; password: string };
    let tv: Client;
    let confidential: { client: Client; secret: string };

    before(async () => {
      server = await startTestServer(backend);
      alice = await server.user();
      tv = (
        await server.client({
          name: 'Living Room TV',
          public: true,
          grant_types: [GRANT_TYPE, 'refresh_token'],
          scopes: ['read', 'write', 'profile'],
        })
      ).client;
      confidential = await server.client({
        name: 'Printer',
        grant_types: [GRANT_TYPE],
        scopes: ['read'],
      });
    });
    after(async () => {
      await server?.close();
    });

    const start = async (form: Record<string, string> = {}, client: Client = tv): Promise<Started> => {
      const res = await server.http.request('/device_authorization', {
        form: { client_id: client.id, scope: 'read write', ...form },
      });
      assert.equal(res.status, 200, res.text);
      return res.json as Started;
    };
    const poll = (started: Started, client: Client = tv) =>
      server.http.token({ grant_type: GRANT_TYPE, client_id: client.id, device_code: started.device_code });

    /** The verification page's Continue, then sign-in when needed: the consent page. */
    async function toConsent(browser: FormBrowser, started: Started, signIn = true): Promise<HttpResponse> {
      const form = await browser.get(`/device?user_code=${encodeURIComponent(started.user_code)}`);
      assert.equal(form.status, 200);
      const entered = await browser.post('/device', {
        csrf_token: FormBrowser.hidden(form, 'csrf_token'),
        user_code: started.user_code,
      });
      assert.equal(entered.status, 303, entered.text.slice(0, 300));
      const target = String(entered.headers.location);
      assert.match(target, /^\/device\/consent\?user_code=/);
      let page = await browser.get(target);
      if (signIn && /name="password"/.test(page.text)) {
        assert.equal(FormBrowser.hidden(page, 'next'), target);
        const signedIn = await browser.post('/sign-in', {
          csrf_token: FormBrowser.hidden(page, 'csrf_token'),
          next: FormBrowser.hidden(page, 'next'),
          username: alice.user.username,
          password: alice.password,
        });
        assert.equal(signedIn.status, 303);
        // The same consent page, its ticket made again for the new browser id sign-in gives.
        const after = String(signedIn.headers.location);
        assert.match(after, /^\/device\/consent\?user_code=/);
        assert.equal(
          new URL(after, ISSUER).searchParams.get('user_code'),
          new URL(target, ISSUER).searchParams.get('user_code'),
        );
        page = await browser.get(after);
      }
      return page;
    }

    function answer(browser: FormBrowser, consent: HttpResponse, form: Record<string, string | string[]>) {
      return browser.post('/device/consent', {
        csrf_token: FormBrowser.hidden(consent, 'csrf_token'),
        user_code: FormBrowser.hidden(consent, 'user_code'),
        ticket: FormBrowser.hidden(consent, 'ticket'),
        lifetime: '3600',
        ...form,
      });
    }

    it('the metadata names the endpoint and the grant type', async () => {
      for (const document of ['oauth-authorization-server', 'openid-configuration']) {
        const metadata = (await server.http.request(`/.well-known/${document}`)).json as Record<
          string,
          unknown
        >;
        assert.equal(metadata.device_authorization_endpoint, `${ISSUER}/device_authorization`);
        assert.ok((metadata.grant_types_supported as string[]).includes(GRANT_TYPE));
      }
    });

    it('the whole flow: code, sign-in, consent narrowed, then the device’s poll gets tokens once', async () => {
      const before = await countRows(server.store.storage, 'device_authorizations');
      const res = await server.http.request('/device_authorization', {
        form: { client_id: tv.id, scope: 'read write profile' },
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers['cache-control'], 'no-store');
      const started = res.json as Started;
      assert.equal(started.verification_uri, `${ISSUER}/device`);
      assert.equal(started.verification_uri_complete, `${ISSUER}/device?user_code=${started.user_code}`);
      assert.deepEqual([started.expires_in, started.interval], [600, 5]);
      // Stored by hash: the database holds neither code.
      const rows = await server.store.storage.db.selectFrom('device_authorizations').selectAll().execute();
      assert.equal(rows.length, before + 1);
      const dump = JSON.stringify(rows);
      assert.ok(!dump.includes(started.device_code) && !dump.includes(started.user_code.replace('-', '')));

      assertJsonError(await poll(started), 400, 'authorization_pending');

      const browser = new FormBrowser(server);
      // verification_uri_complete fills the field; the user still presses Continue.
      const form = await browser.get(`/device?user_code=${started.user_code}`);
      assertPage(form, 200, /<label for="user_code">Code<\/label>/);
      assert.match(form.text, new RegExp(`value="${started.user_code}"`));
      assert.match(form.text, /<button type="submit" class="primary">Continue<\/button>/);
      const consent = await toConsent(browser, started);
      assertPage(consent, 200, /Allow <span class="client">Living Room TV<\/span> to access your account\?/);
      assert.match(
        consent.text,
        new RegExp(`<p class="user-code" id="device-code">${started.user_code}</p>`),
      );
      assert.match(consent.text, /If someone sent you this code or link, choose Deny/);
      assert.match(consent.text, /<label for="lifetime">Access valid for<\/label>/);
      for (const scope of ['read', 'write', 'profile']) {
        assert.match(consent.text, new RegExp(`name="scope"\\s+value="${scope}"\\s+checked`));
      }

      const done = await answer(browser, consent, {
        decision: 'allow',
        scope: ['read', 'profile'],
        lifetime: '86400',
      });
      assertPage(done, 200, /Device connected/);
      assert.match(done.text, /Your device may continue/);

      server.clock.advance(5);
      const token = await poll(started);
      assert.equal(token.status, 200, token.text);
      assert.equal(token.headers['cache-control'], 'no-store');
      const tokens = token.json as {
        access_token: string;
        refresh_token?: string;
        scope: string;
        expires_in: number;
      };
      assert.equal(tokens.scope, 'read profile');
      assert.equal(typeof tokens.refresh_token, 'string');
      const claims = decodeJwt(tokens.access_token);
      assert.equal(claims.sub, alice.user.id);
      assert.equal(claims.client_id, tv.id);
      // Who signed in, as the device asks /v1/users/me.
      const me = await server.http.request('/v1/users/me', {
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      assert.equal(me.status, 200, me.text);
      assert.equal((me.json as { username: string }).username, alice.user.username);

      // Redeemed once; the page with the same code says it was used, and changes nothing.
      server.clock.advance(5);
      assertJsonError(await poll(started), 400, 'invalid_grant', /already used/);
      // Signed in now: the browser's id, and so its CSRF token, changed (no session fixation).
      const again = await browser.post('/device', {
        csrf_token: FormBrowser.hidden(await browser.get('/device'), 'csrf_token'),
        user_code: started.user_code,
      });
      assertPage(again, 400, /That code has already been used/);
      // The grant is the user's choice: a day, the scope they left ticked; listed under Connected apps.
      const grants = await server.store.storage.grants.listByUser(alice.user.id);
      const grant = grants.find((g) => g.id === claims.gid);
      assert.deepEqual(
        { scope: grant?.scope, lifetime: (grant?.expiresAt ?? 0) - (grant?.createdAt ?? 0) },
        { scope: ['read', 'profile'], lifetime: 86400 },
      );
    });

    it('polling: authorization_pending, slow_down when sooner than the interval (which grows by 5 s), access_denied once denied', async () => {
      const grantsBefore = (await server.store.storage.grants.listByClient(tv.id)).length;
      const started = await start();
      assertJsonError(await poll(started), 400, 'authorization_pending');
      server.clock.advance(2);
      assertJsonError(await poll(started), 400, 'slow_down', /at least 10 seconds/);
      server.clock.advance(9);
      assertJsonError(await poll(started), 400, 'slow_down', /at least 15 seconds/);
      server.clock.advance(15);
      assertJsonError(await poll(started), 400, 'authorization_pending');

      const browser = new FormBrowser(server);
      const consent = await toConsent(browser, started);
      const done = await answer(browser, consent, { decision: 'deny' });
      assertPage(done, 200, /Access denied/);
      server.clock.advance(15);
      assertJsonError(await poll(started), 400, 'access_denied');
      server.clock.advance(15);
      assertJsonError(await poll(started), 400, 'access_denied');
      assert.equal((await server.store.storage.grants.listByClient(tv.id)).length, grantsBefore);
    });

    it('expiry: expired_token for the device; the page says the code has expired and changes nothing', async () => {
      const started = await start();
      const browser = new FormBrowser(server);
      const consent = await toConsent(browser, started);
      server.clock.advance(600);
      assertJsonError(await poll(started), 400, 'expired_token');
      const late = await answer(browser, consent, { decision: 'allow', scope: ['read'] });
      assertPage(late, 400, /That code has expired/);
      const form = await browser.get('/device');
      const typed = await browser.post('/device', {
        csrf_token: FormBrowser.hidden(form, 'csrf_token'),
        user_code: started.user_code,
      });
      assertPage(typed, 400, /That code has expired/);
      assertJsonError(await poll(started), 400, 'expired_token');
    });

    it('errors at /device_authorization: 401, 400, 405, 415, and nothing is stored', async () => {
      const before = await countRows(server.store.storage, 'device_authorizations');
      const post = (form: Record<string, string>, headers: Record<string, string> = {}) =>
        server.http.request('/device_authorization', { form, headers });
      assertJsonError(await post({ client_id: 'nobody' }), 401, 'invalid_client');
      assertJsonError(
        await post({ scope: 'read' }, { authorization: basicAuth(confidential.client.id, 'wrong') }),
        401,
        'invalid_client',
      );
      assertJsonError(await post({ client_id: confidential.client.id }), 401, 'invalid_client');
      assertJsonError(await post({ client_id: tv.id, scope: 'admin' }), 400, 'invalid_scope');
      assertJsonError(
        await post({ client_id: tv.id, resource: 'https://nowhere.example' }),
        400,
        'invalid_target',
      );
      const codeClient = await server.client({ name: 'Web app', redirect_uris: ['https://client.test/cb'] });
      assertJsonError(
        await post({}, { authorization: basicAuth(codeClient.client.id, codeClient.secret) }),
        400,
        'unauthorized_client',
      );
      const repeated = await server.http.request('/device_authorization', {
        body: `client_id=${tv.id}&scope=read&scope=write`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      assertJsonError(repeated, 400, 'invalid_request', /repeated/);
      const json = await server.http.request('/device_authorization', {
        body: JSON.stringify({ client_id: tv.id }),
        headers: { 'content-type': 'application/json' },
      });
      assertJsonError(json, 415, 'invalid_request');
      const get = await server.http.request('/device_authorization');
      assertJsonError(get, 405, 'invalid_request');
      assert.equal(get.headers.allow, 'POST');
      assert.equal(await countRows(server.store.storage, 'device_authorizations'), before);

      // A confidential client authenticates with its secret, and polls with it.
      const res = await post(
        { scope: 'read' },
        { authorization: basicAuth(confidential.client.id, confidential.secret) },
      );
      assert.equal(res.status, 200, res.text);
      const started = res.json as Started;
      assertJsonError(await poll(started, confidential.client), 401, 'invalid_client');
      const pending = await server.http.token(
        { grant_type: GRANT_TYPE, device_code: started.device_code },
        { id: confidential.client.id, secret: confidential.secret },
      );
      assertJsonError(pending, 400, 'authorization_pending');
      // Another client's device code is an unknown one.
      assertJsonError(await poll(started, tv), 400, 'invalid_grant', /unknown device_code/);
    });

    it('of 10 concurrent polls after approval exactly one gets tokens', async () => {
      const started = await start();
      const browser = new FormBrowser(server);
      const consent = await toConsent(browser, started);
      assertPage(
        await answer(browser, consent, { decision: 'allow', scope: ['read'] }),
        200,
        /Device connected/,
      );
      const answers = await Promise.all(Array.from({ length: 10 }, () => poll(started)));
      assert.equal(answers.filter((res) => res.status === 200).length, 1);
      for (const res of answers.filter((r) => r.status !== 200)) {
        assert.ok(['invalid_grant', 'slow_down'].includes((res.json as { error: string }).error), res.text);
      }
    });

    it('the pages: a wrong or malformed code says so (400) and changes nothing; a forged ticket or form is refused', async () => {
      const started = await start();
      const browser = new FormBrowser(server);
      const form = await browser.get('/device');
      const enter = (code: string) =>
        browser.post('/device', { csrf_token: FormBrowser.hidden(form, 'csrf_token'), user_code: code });
      assertPage(await enter('hello'), 400, /Codes are eight letters/);
      assertPage(await enter('ZZZZ-ZZZZ'), 400, /That code is not right/);
      // No CSRF token: 403.
      assertPage(
        await browser.post('/device', { user_code: started.user_code }),
        403,
        /This form has expired/,
      );
      // The consent page needs the ticket POST /device gives: a guess without it shows the code page.
      const forged = await browser.get(`/device/consent?user_code=${started.user_code}&ticket=forged`);
      assertPage(forged, 400, /Enter the code your device shows/);
      const unticketed = await browser.post('/device/consent', {
        csrf_token: FormBrowser.hidden(form, 'csrf_token'),
        user_code: started.user_code,
        decision: 'allow',
        lifetime: '3600',
        scope: 'read',
      });
      assertPage(unticketed, 400, /Enter the code your device shows/);
      // Typed in lower case with a space: the same code.
      const consent = await toConsent(browser, {
        ...started,
        user_code: started.user_code.toLowerCase().replace('-', ' '),
      });
      assertPage(consent, 200, /Living Room TV/);
      // A scope not asked for: refused, nothing decided.
      const widened = await answer(browser, consent, { decision: 'allow', scope: ['read', 'admin'] });
      assertPage(widened, 400, /did not request/);
      assertJsonError(await poll(started), 400, 'authorization_pending');
    });

    it('a consent page left open while the session ended asks to sign in again, then continues', async () => {
      const started = await start();
      const browser = new FormBrowser(server);
      const consent = await toConsent(browser, started);
      const cookie = browser.currentCookie;
      await browser.post('/sign-out', { csrf_token: FormBrowser.hidden(consent, 'csrf_token') });
      browser.currentCookie = cookie;
      const res = await answer(browser, consent, { decision: 'allow', scope: ['read'] });
      assertPage(res, 401, /Your session has ended/);
      assert.match(FormBrowser.hidden(res, 'next'), /^\/device\/consent\?user_code=/);
      assertJsonError(await poll(started), 400, 'authorization_pending');
    });
  });

  describe(`RFC 8628 §5.1: wrong user codes throttled per source (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(backend, {
        rateLimits: { token: { perAddress: 3, perClient: 0 } },
      });
    });
    after(async () => {
      await server?.close();
    });

    it('after 10 wrong codes in 15 minutes: 429 with Retry-After, even for a right code; again after the window', async () => {
      const tv = (
        await server.client({ name: 'TV', public: true, grant_types: [GRANT_TYPE], scopes: ['read'] })
      ).client;
      const res = await server.http.request('/device_authorization', { form: { client_id: tv.id } });
      const started = res.json as Started;
      const browser = new FormBrowser(server);
      const form = await browser.get('/device');
      const enter = (code: string) =>
        browser.post('/device', { csrf_token: FormBrowser.hidden(form, 'csrf_token'), user_code: code });
      for (let i = 0; i < 10; i++) assertPage(await enter(`ZZZZ-ZZZ${'BCDFGHJKLM'[i]}`), 400, /not right/);
      server.clock.advance(60);
      const throttled = await enter(started.user_code);
      assertPage(throttled, 429, /Too many wrong codes\. Wait 14 minutes and try again\./);
      assert.equal(throttled.headers['retry-after'], String(900 - 60));
      server.clock.advance(840);
      // The window is over, and the ten minutes of the code too: expired, not throttled.
      assertPage(await enter(started.user_code), 400, /expired/);
    });

    it('/device_authorization counts with the token endpoint’s rate limit', async () => {
      const tv = (
        await server.client({ name: 'TV 2', public: true, grant_types: [GRANT_TYPE], scopes: ['read'] })
      ).client;
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        statuses.push(
          (await server.http.request('/device_authorization', { form: { client_id: tv.id } })).status,
        );
      }
      assert.deepEqual(statuses.slice(0, 3), [200, 200, 200]);
      const limited = await server.http.request('/device_authorization', { form: { client_id: tv.id } });
      assertJsonError(limited, 429, 'rate_limited');
      assert.ok(Number(limited.headers['retry-after']) > 0);
    });
  });
}
