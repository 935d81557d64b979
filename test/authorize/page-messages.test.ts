import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { formatWait } from '../../src/http/ui/pages/format.js';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { FormBrowser } from '../helpers/form-browser.js';

describe('formatWait', () => {
  it('writes seconds under a minute and whole minutes above, singular or plural', () => {
    assert.equal(formatWait(1), '1 second');
    assert.equal(formatWait(0.2), '1 second');
    assert.equal(formatWait(45), '45 seconds');
    assert.equal(formatWait(60), '1 minute');
    assert.equal(formatWait(61), '2 minutes');
    assert.equal(formatWait(899), '15 minutes');
    assert.equal(formatWait(900), '15 minutes');
  });
});

for (const backend of backends()) {
  describe(`sign-in page messages and field errors (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(backend, {
        passwordFailuresPerUsername: 2,
        passwordFailureWindowSeconds: 900,
      });
    });
    after(async () => {
      await server.close();
    });

    it('marks the password field invalid, described by the error, and focuses it', async () => {
      const { user } = await server.user();
      const res = await new FormBrowser(server).signIn(user.username, 'not the password');
      assert.equal(res.status, 401);
      assert.match(
        res.text,
        /<p class="error" id="form-error" role="alert">Wrong user name or password\.<\/p>/,
      );
      const password = /<input[^>]*id="password"[^>]*>/.exec(res.text)?.[0] ?? '';
      const username = /<input[^>]*id="username"[^>]*>/.exec(res.text)?.[0] ?? '';
      assert.match(password, /aria-invalid="true"/);
      assert.match(password, /aria-describedby="form-error"/);
      assert.match(password, /autofocus/);
      assert.doesNotMatch(username, /autofocus|aria-invalid/);
      assert.match(username, new RegExp(`value="${user.username}"`));

      // Without an error the user name has the focus and nothing is marked.
      const fresh = await new FormBrowser(server).get('/sign-in');
      assert.match(/<input[^>]*id="username"[^>]*>/.exec(fresh.text)?.[0] ?? '', /autofocus/);
      assert.doesNotMatch(fresh.text, /aria-invalid/);
    });

    it('spells "user name" one way in what people read (the field label stays "Username")', async () => {
      const { user, password } = await server.user();
      const browser = new FormBrowser(server);
      const failed = await browser.signIn(user.username, 'not the password');
      await browser.signIn(user.username, password, '/playground');
      const pages = [failed, await browser.get('/playground'), await browser.get('/account/apps')];
      for (const page of pages) {
        const text = page.text.replace(/<script[\s\S]*?<\/script>/g, ' ').replace(/<[^>]*>/g, ' ');
        const spellings = (text.match(/\buser[ -]?names?\b/gi) ?? []).filter((word) => word !== 'Username');
        for (const word of spellings)
          assert.match(word, /^[Uu]ser names?$/, `"${word}" in ${page.text.slice(0, 80)}`);
      }
      assert.match(failed.text, /Wrong user name or password/);
    });

    it('says how long to wait in words, without "minute(s)"', async () => {
      const { user } = await server.user();
      const browser = new FormBrowser(server);
      let res = await browser.signIn(user.username, 'wrong 1');
      for (let attempt = 2; attempt <= 5 && res.status !== 429; attempt += 1) {
        res = await browser.signIn(user.username, `wrong ${attempt}`);
      }
      assert.equal(res.status, 429);
      const retryAfter = Number(res.headers['retry-after']);
      assert.ok(retryAfter > 0);
      assert.ok(res.text.includes(`Wait ${formatWait(retryAfter)} and try again.`), res.text);
      assert.doesNotMatch(res.text, /\(s\)/);
    });
  });
}
