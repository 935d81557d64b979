import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { tableRows } from '../helpers/store-sql.js';
import { FormBrowser } from '../helpers/form-browser.js';

for (const backend of backends()) {
  describe(`sign-in and sessions (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(backend, { passwordFailuresPerUsername: 3 });
    });
    after(async () => {
      await server.close();
    });

    it('signs in with a new cookie, keeps only its hash, and continues to the page asked for', async () => {
      const { user, password } = await server.user();
      const browser = new FormBrowser(server);
      const form = await browser.get('/sign-in?next=/playground');
      assert.equal(form.status, 200);
      assert.match(form.text, /<label for="username">Username<\/label>/);
      assert.match(form.text, /<label for="password">Password<\/label>/);
      assert.match(form.text, />Sign in<\/button>/);
      const before = String(form.headers['set-cookie']).split(';', 1)[0] ?? '';

      const res = await browser.post('/sign-in', {
        csrf_token: FormBrowser.hidden(form, 'csrf_token'),
        username: user.username,
        password,
        next: '/playground',
      });
      assert.equal(res.status, 303);
      assert.equal(res.headers.location, '/playground');
      const cookie = String(res.headers['set-cookie']);
      assert.match(cookie, /^__Host-gatehouse=bs_[\w-]{43}; Path=\/; HttpOnly; Secure; SameSite=Lax/);
      // Session fixation: the id known before sign-in is not the session.
      assert.notEqual(cookie.split(';', 1)[0], before);
      const id = cookie.split(';', 1)[0]?.split('=')[1] ?? '';
      const rows = await tableRows(server.store.storage, 'browser_sessions');
      assert.ok(
        rows.every((row) => row.hash !== id),
        'the raw id is never stored',
      );
      assert.ok(rows.some((row) => row.user_id === user.id));

      const apps = await browser.get('/account/apps');
      assert.equal(apps.status, 200);
      assert.match(apps.text, /Connected apps/);
    });

    it('records on the session that the password signed the user in, and when (decision 30)', async () => {
      const { user, password } = await server.user();
      const browser = new FormBrowser(server);
      const form = await browser.get('/sign-in?next=/playground');
      const res = await browser.post('/sign-in', {
        csrf_token: FormBrowser.hidden(form, 'csrf_token'),
        username: user.username,
        password,
        next: '/playground',
      });
      assert.equal(res.status, 303);
      const rows = await tableRows(server.store.storage, 'browser_sessions');
      const mine = rows.filter((row) => row.user_id === user.id);
      assert.equal(mine.length, 1);
      assert.deepEqual(JSON.parse(String(mine[0]?.authentications)), [
        { method: 'password', at: server.clock.now() },
      ]);
    });

    it('never continues to another site after sign-in', async () => {
      const { user, password } = await server.user();
      for (const next of [
        'https://evil.test/',
        '//evil.test/x',
        '/\\evil.test',
        '/authorize#x',
        'javascript:alert(1)',
      ]) {
        const res = await new FormBrowser(server).signIn(user.username, password, next);
        assert.equal(res.status, 303);
        assert.equal(res.headers.location, '/account/apps', next);
      }
    });

    it('answers a wrong password with 401, then throttles the user name with 429 and Retry-After', async () => {
      const { user, password } = await server.user();
      const browser = new FormBrowser(server);
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const res = await browser.signIn(user.username, 'wrong password');
        assert.equal(res.status, 401);
        assert.match(res.text, /Wrong user name or password/);
        assert.doesNotMatch(res.text, /wrong password/, 'the password is not echoed');
      }
      // Even the right password is refused while the counter is full, from another browser too.
      const throttled = await new FormBrowser(server).signIn(user.username, password);
      assert.equal(throttled.status, 429);
      assert.ok(Number(throttled.headers['retry-after']) > 0);
      server.clock.advance(Number(throttled.headers['retry-after']));
      const after = await new FormBrowser(server).signIn(user.username, password);
      assert.equal(after.status, 303);
    });

    it('throttles failures per address across user names', async () => {
      const local = await startTestServer(backend, { passwordFailuresPerSource: 2 });
      try {
        const { user, password } = await local.user();
        const browser = new FormBrowser(local);
        assert.equal((await browser.signIn('nobody-1', 'x')).status, 401);
        assert.equal((await browser.signIn('nobody-2', 'x')).status, 401);
        assert.equal((await browser.signIn(user.username, password)).status, 429);
      } finally {
        await local.close();
      }
    });

    it('signs out: the session row is gone and the old cookie no longer signs in', async () => {
      const { user, password } = await server.user();
      const browser = new FormBrowser(server);
      await browser.signIn(user.username, password);
      const apps = await browser.get('/account/apps');
      assert.equal(apps.status, 200);
      const signedInCookie = browser.currentCookie;
      const out = await browser.post('/sign-out', { csrf_token: FormBrowser.hidden(apps, 'csrf_token') });
      assert.equal(out.status, 303);
      assert.equal(out.headers.location, '/sign-in');
      const again = await browser.get('/account/apps');
      assert.equal(again.status, 303);
      assert.equal(again.headers.location, '/sign-in?next=/account/apps');
      // Replaying the cookie of the signed-in browser does not bring the session back.
      const replay = new FormBrowser(server);
      replay.currentCookie = signedInCookie;
      assert.equal((await replay.get('/account/apps')).status, 303);
    });

    it('ends sessions when they expire', async () => {
      const { user, password } = await server.user();
      const browser = new FormBrowser(server);
      await browser.signIn(user.username, password);
      assert.equal((await browser.get('/account/apps')).status, 200);
      server.clock.advance(12 * 3600 + 1);
      assert.equal((await browser.get('/account/apps')).status, 303);
    });
  });
}
