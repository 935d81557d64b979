import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_RATE_LIMITS, loadConfig } from '../../src/config.js';
import { FormBrowser } from '../helpers/form-browser.js';
import { backends } from '../helpers/backends.js';
import type { HttpResponse } from '../helpers/https-client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// The request rate limits of /userinfo (OpenID Connect Core §5.3) and /logout (RP-Initiated Logout
// 1.0 §2), per address as docs/limits.md says: over the limit, 429 with Retry-After before anything is
// done (docs/decisions.md 11, 14): the refused request reads no claims and ends no session.

const off = { perAddress: 0, perClient: 0 };
const WINDOW = 60;

function assertRefused(res: HttpResponse, type: RegExp): void {
  assert.equal(res.status, 429, res.text.slice(0, 300));
  const retryAfter = Number(res.headers['retry-after']);
  assert.ok(retryAfter >= 1 && retryAfter <= WINDOW, `Retry-After ${String(res.headers['retry-after'])}`);
  assert.match(String(res.headers['content-type']), type);
}

describe('the /userinfo and /logout limits are configured like the others', () => {
  const load = (env: NodeJS.ProcessEnv) =>
    loadConfig(
      { dataDir: '/nonexistent' },
      { GATEHOUSE_SECRET: Buffer.alloc(32, 1).toString('base64url'), ...env },
    ).rateLimits;

  it('defaults per address only; GATEHOUSE_RATE_LIMIT_{USERINFO,LOGOUT}_PER_ADDRESS; off with the rest', () => {
    assert.deepEqual(DEFAULT_RATE_LIMITS.userinfo, { perAddress: 600, perClient: 0 });
    assert.deepEqual(DEFAULT_RATE_LIMITS.logout, { perAddress: 300, perClient: 0 });
    const set = load({
      GATEHOUSE_RATE_LIMIT_USERINFO_PER_ADDRESS: '7',
      GATEHOUSE_RATE_LIMIT_LOGOUT_PER_ADDRESS: '0',
    });
    assert.equal(set.userinfo.perAddress, 7);
    assert.equal(set.logout.perAddress, 0);
    const off = load({ GATEHOUSE_RATE_LIMITS: 'off' });
    assert.deepEqual([off.userinfo.perAddress, off.logout.perAddress], [0, 0]);
    assert.throws(() => load({ GATEHOUSE_RATE_LIMIT_LOGOUT_PER_ADDRESS: 'many' }), /LOGOUT_PER_ADDRESS/);
  });
});

for (const backend of backends()) {
  describe(`rate limits of /userinfo and /logout (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(backend, {
        purgeIntervalSeconds: 0,
        rateLimitWindowSeconds: WINDOW,
        rateLimits: {
          token: off,
          authorize: off,
          introspect: off,
          signIn: off,
          revoke: off,
          userinfo: { perAddress: 3, perClient: 0 },
          logout: { perAddress: 2, perClient: 0 },
        },
      });
    });
    after(async () => {
      await server.close();
    });

    it('/userinfo: GET and POST share one allowance per address; refused with rate_limited, no claims', async () => {
      const rp = await server.client({
        redirect_uris: ['https://rp.example/cb'],
        scopes: ['openid', 'email'],
      });
      const { user } = await server.user('ulla', 'correct horse battery', { email: 'ulla@example.com' });
      const { code } = await server.seedCode({ client: rp.client, user, scope: ['openid', 'email'] });
      const tokens = await server.http.token(
        { grant_type: 'authorization_code', code, redirect_uri: 'https://rp.example/cb' },
        { id: rp.client.id, secret: rp.secret },
      );
      assert.equal(tokens.status, 200, tokens.text);
      const bearer = { authorization: `Bearer ${(tokens.json as { access_token: string }).access_token}` };
      const get = () => server.http.request('/userinfo', { headers: bearer });
      const post = () => server.http.request('/userinfo', { method: 'POST', form: {}, headers: bearer });

      server.clock.advance(WINDOW);
      const answered = [await get(), await post(), await get()];
      assert.deepEqual(
        answered.map((res) => res.status),
        [200, 200, 200],
      );
      const claims = answered[0]?.json as Record<string, unknown>;
      assert.equal(claims.sub, user.id);
      assert.equal(claims.email, 'ulla@example.com');

      for (const refused of [await get(), await post()]) {
        assertRefused(refused, /^application\/json/);
        assert.deepEqual(Object.keys(refused.json as object).sort(), ['error', 'error_description']);
        assert.equal((refused.json as { error: string }).error, 'rate_limited');
        assert.doesNotMatch(refused.text, /ulla/);
      }
      const metrics = (await server.http.request('/metrics')).text;
      assert.match(metrics, /gatehouse_throttled_total\{route="\/userinfo",limit="address"\} 2/);

      // The next window: the same token, the same claims.
      server.clock.advance(WINDOW);
      const again = await get();
      assert.equal(again.status, 200, again.text);
      assert.deepEqual(again.json, claims);
    });

    it('/userinfo: a HEAD, answered by the GET handler, counts in the same allowance (decision 31)', async () => {
      const rp = await server.client({ redirect_uris: ['https://rp.example/cb'], scopes: ['openid'] });
      const { user } = await server.user();
      const { code } = await server.seedCode({ client: rp.client, user, scope: ['openid'] });
      const tokens = await server.http.token(
        { grant_type: 'authorization_code', code, redirect_uri: 'https://rp.example/cb' },
        { id: rp.client.id, secret: rp.secret },
      );
      assert.equal(tokens.status, 200, tokens.text);
      const bearer = { authorization: `Bearer ${(tokens.json as { access_token: string }).access_token}` };
      const head = () => server.http.request('/userinfo', { method: 'HEAD', headers: bearer });

      server.clock.advance(WINDOW);
      assert.deepEqual(
        [(await head()).status, (await head()).status, (await head()).status],
        [200, 200, 200],
      );
      assert.equal((await head()).status, 429);
      assertRefused(await server.http.request('/userinfo', { headers: bearer }), /^application\/json/);
    });

    it('/logout: the pages and the confirmation share one allowance; a refused confirmation ends no session', async () => {
      const { user, password } = await server.user('lars', 'correct horse battery');
      const browser = new FormBrowser(server);
      assert.equal((await browser.signIn(user.username, password)).status, 303);
      const signedIn = async () => (await browser.get('/account/apps')).status === 200;
      assert.equal(await signedIn(), true);

      server.clock.advance(WINDOW);
      const page = await browser.get('/logout');
      assert.equal(page.status, 200, page.text.slice(0, 300));
      const form = {
        csrf_token: FormBrowser.hidden(page, 'csrf_token'),
        request: FormBrowser.hidden(page, 'request'),
      };
      // POST /logout is sent on to GET (§2): the second request of the window, then the limit.
      assert.equal((await browser.post('/logout', {})).status, 303);
      assertRefused(await browser.get('/logout'), /^text\/html/);
      assertRefused(await browser.post('/logout', {}), /^text\/html/);
      assertRefused(await browser.post('/logout/confirm', form), /^text\/html/);
      assert.equal(await signedIn(), true, 'the refused confirmation signed nobody out');

      // The next window: the same form signs out.
      server.clock.advance(WINDOW);
      const confirmed = await browser.post('/logout/confirm', form);
      assert.equal(confirmed.status, 200, confirmed.text.slice(0, 300));
      assert.equal(await signedIn(), false);
    });
  });
}
