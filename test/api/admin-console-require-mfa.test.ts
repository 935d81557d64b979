import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../helpers/backends.js';
import { FormBrowser } from '../helpers/form-browser.js';
import type { HttpResponse } from '../helpers/https-client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { appCode } from '../helpers/totp.js';

/** Follows redirects within the server (absolute or relative Location) until a page answers. */
async function follow(
  browser: FormBrowser,
  first: HttpResponse,
): Promise<{ page: HttpResponse; path: string }> {
  let res = first;
  let path = '';
  for (let hops = 0; res.status >= 300 && res.status < 400; hops++) {
    assert.ok(hops < 10, 'too many redirects');
    const location = String(res.headers.location);
    const url = new URL(location, 'https://gatehouse.test');
    path = `${url.pathname}${url.search}`;
    res = await browser.get(path);
  }
  return { page: res, path };
}

const setupKey = (page: HttpResponse): string => {
  const match = /id="setup-key"[^>]*>([^<]+)</.exec(page.text);
  assert.ok(match?.[1], 'the set-up page shows the setup key');
  return match[1].replace(/\s/g, '');
};

/**
 * Issue 30 point 1 and decision 42: GATEHOUSE_ADMIN_REQUIRE_MFA=true makes the console's client require
 * a second factor, so an administrator without one is led to set the authenticator app up after the
 * password, and reaches the console only with it; there is then no standing prompt, as there is
 * nothing to add. (The prompt with the setting off is in test/browser/admin-console.test.ts.)
 */
for (const backend of backends()) {
  describe(`the admin console with GATEHOUSE_ADMIN_REQUIRE_MFA=true (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(backend, { adminRequireMfa: true });
    });
    after(async () => {
      await server?.close();
    });

    it('an administrator without a second factor sets one up after the password, then gets the console', async () => {
      const { user, password } = await server.user();
      await server.gatehouse.engine.users.update(user, { admin: true });
      const browser = new FormBrowser(server);
      const { page: signInPage, path: signInPath } = await follow(browser, await browser.get('/admin/users'));
      // /authorize shows the sign-in form itself (decision 42: the console signs in like any client).
      assert.match(signInPath, /^\/authorize\?.*client_id=gatehouse-admin/);
      assert.match(signInPage.text, /name="password"/);
      const posted = await browser.post('/sign-in', {
        csrf_token: FormBrowser.hidden(signInPage, 'csrf_token'),
        username: user.username,
        password,
        next: FormBrowser.hidden(signInPage, 'next'),
      });
      // The password alone does not open the console: the app's set-up comes next.
      const { page: setUp, path: setUpPath } = await follow(browser, posted);
      assert.equal(setUpPath, '/sign-in/second-factor/set-up');
      assert.equal(setUp.status, 200);
      assert.doesNotMatch(setUp.text, /Admin console/);
      // Not signed in yet: the password alone started no session.
      assert.equal(browser.hasCookie('__Host-gatehouse-admin'), false);

      const key = setupKey(setUp);
      const confirmed = await browser.post('/sign-in/second-factor/set-up', {
        csrf_token: FormBrowser.hidden(setUp, 'csrf_token'),
        code: appCode(key, server.clock.now()),
      });
      const { page: consolePage, path } = await follow(browser, confirmed);
      assert.equal(consolePage.status, 200, consolePage.text.slice(0, 300));
      assert.match(path, /^\/admin\/users/);
      assert.match(consolePage.text, /<h1>Users<\/h1>/);
      assert.doesNotMatch(consolePage.text, /has no second factor/);
      const added = await server.gatehouse.engine.audit.list({
        types: ['second-factor.added'],
        userId: user.id,
        limit: 5,
      });
      assert.equal(added.items.length, 1, 'the set-up is recorded');
      // The console's consent (skipped on screen, recorded all the same) carries the request's address.
      const consent = await server.gatehouse.engine.audit.list({
        types: ['consent.given'],
        userId: user.id,
        limit: 5,
      });
      assert.equal(consent.items[0]?.clientId, 'gatehouse-admin');
      assert.equal(typeof consent.items[0]?.address, 'string');
    });

    it('a user who is no administrator gets no console even with a second factor', async () => {
      const { user, password } = await server.user();
      const browser = new FormBrowser(server);
      const { page: signInPage } = await follow(browser, await browser.get('/admin'));
      const posted = await browser.post('/sign-in', {
        csrf_token: FormBrowser.hidden(signInPage, 'csrf_token'),
        username: user.username,
        password,
        next: FormBrowser.hidden(signInPage, 'next'),
      });
      const { page: setUp } = await follow(browser, posted);
      const confirmed = await browser.post('/sign-in/second-factor/set-up', {
        csrf_token: FormBrowser.hidden(setUp, 'csrf_token'),
        code: appCode(setupKey(setUp), server.clock.now()),
      });
      const { page } = await follow(browser, confirmed);
      assert.equal(page.status, 403);
      assert.match(page.text, /Your account is not an administrator\./);
    });
  });
}
