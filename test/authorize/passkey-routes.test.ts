import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { RECENT_SIGN_IN_SECONDS } from '../../src/http/ui/security/recent-sign-in.js';
import { backends } from '../helpers/backends.js';
import { FormBrowser } from '../helpers/form-browser.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { SoftwareAuthenticator } from '../helpers/software-authenticator.js';

/**
 * The passkey routes without a browser (decision 33): what the page script does, done by a form client
 * and a software authenticator; the recent-sign-in rule on changes; answers to forged or stale forms.
 * Chromium drives the same pages with its own authenticator in test/browser/passkeys.test.ts.
 */
const ORIGIN = 'https://gatehouse.test';

for (const backend of backends()) {
  describe(`passkey routes (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(backend);
    });
    after(async () => {
      await server.close();
    });

    /** A signed-in browser on the security page, and the CSRF token its forms carry. */
    async function onSecurityPage(): Promise<{ browser: FormBrowser; csrf: string; userId: string }> {
      const { user, password } = await server.user();
      const browser = new FormBrowser(server);
      assert.equal((await browser.signIn(user.username, password, '/account/security')).status, 303);
      const page = await browser.get('/account/security');
      assert.equal(page.status, 200);
      assert.match(page.text, /<h2 id="passkeys">Passkeys<\/h2>/);
      return { browser, csrf: FormBrowser.hidden(page, 'csrf_token'), userId: user.id };
    }

    async function addPasskey(
      browser: FormBrowser,
      csrf: string,
      authenticator: SoftwareAuthenticator,
      name = 'Laptop',
    ) {
      const options = await browser.post('/account/security/passkeys/options', { csrf_token: csrf });
      assert.equal(options.status, 200);
      assert.equal(options.headers['cache-control'], 'no-store');
      return browser.post('/account/security/passkeys', {
        csrf_token: csrf,
        name,
        credential: JSON.stringify(authenticator.create(JSON.parse(options.text))),
      });
    }

    it('adds a passkey, then a fresh browser signs in with it and no user name', async () => {
      const { browser, csrf, userId } = await onSecurityPage();
      const authenticator = new SoftwareAuthenticator({ origin: ORIGIN, backupEligible: true });
      const added = await addPasskey(browser, csrf, authenticator, '  My   phone ');
      assert.equal(added.status, 303);
      assert.equal(added.headers.location, '/account/security');
      const page = await browser.get('/account/security');
      assert.match(page.text, /role="status">Passkey added</);
      assert.match(page.text, /<h3 id="passkey-0">My phone<\/h3>/);
      assert.match(page.text, /Synced between your devices/);

      const fresh = new FormBrowser(server);
      const signInPage = await fresh.get('/sign-in?next=/playground');
      assert.match(signInPage.text, /autocomplete="username webauthn"/);
      assert.match(signInPage.text, />Sign in with a passkey<\/button>/);
      const token = FormBrowser.hidden(signInPage, 'csrf_token');
      const options = await fresh.post('/sign-in/passkey/options', { csrf_token: token });
      const request = JSON.parse(options.text) as {
        rpId: string;
        allowCredentials: { id: string }[];
        challenge: string;
      };
      assert.equal(request.rpId, 'gatehouse.test');
      assert.deepEqual(request.allowCredentials, []);
      const res = await fresh.post('/sign-in/passkey', {
        csrf_token: token,
        next: '/playground',
        credential: JSON.stringify(authenticator.get(request)),
      });
      assert.equal(res.status, 303);
      assert.equal(res.headers.location, '/playground');
      const signedIn = await server.gatehouse.engine.browserSessions.authentication(
        fresh.currentCookie?.split('=')[1],
      );
      assert.equal(signedIn?.userId, userId);
      assert.deepEqual(signedIn?.amr, ['swk', 'user', 'mfa']);
    });

    it('confirms a signed-in user with one of their own passkeys (reauth=1), never another user’s', async () => {
      const alice = await onSecurityPage();
      const bob = await onSecurityPage();
      const aliceKey = new SoftwareAuthenticator({ origin: ORIGIN });
      const bobKey = new SoftwareAuthenticator({ origin: ORIGIN });
      assert.equal((await addPasskey(alice.browser, alice.csrf, aliceKey)).status, 303);
      assert.equal((await addPasskey(bob.browser, bob.csrf, bobKey)).status, 303);
      const sessionOf = (browser: FormBrowser) =>
        server.gatehouse.engine.browserSessions.authentication(browser.currentCookie?.split('=')[1]);
      const before = await sessionOf(alice.browser);
      server.clock.advance(RECENT_SIGN_IN_SECONDS + 1);

      const page = await alice.browser.get('/sign-in?reauth=1&next=/account/security');
      assert.match(page.text, /Enter your password again, or use a passkey/);
      assert.match(page.text, /action="\/sign-in\/passkey\/reauthentication"/);
      const token = FormBrowser.hidden(page, 'csrf_token');
      const ask = async () => {
        const options = await alice.browser.post('/sign-in/passkey/reauthentication/options', {
          csrf_token: token,
        });
        assert.equal(options.status, 200);
        return JSON.parse(options.text) as { challenge: string; allowCredentials: { id: string }[] };
      };
      const first = await ask();
      const [alices] = await server.gatehouse.engine.passkeys.list(alice.userId);
      assert.deepEqual(
        first.allowCredentials.map((c) => c.id),
        [alices?.id],
      );
      // Bob's passkey answering Alice's confirmation: refused, Alice's session unchanged.
      const wrong = await alice.browser.post('/sign-in/passkey/reauthentication', {
        csrf_token: token,
        next: '/account/security',
        credential: JSON.stringify(bobKey.get(first)),
      });
      assert.equal(wrong.status, 401);
      assert.match(wrong.text, /That passkey could not confirm it is you/);
      assert.equal((await sessionOf(alice.browser))?.authTime, before?.authTime);

      const right = await alice.browser.post('/sign-in/passkey/reauthentication', {
        csrf_token: token,
        next: '/account/security',
        credential: JSON.stringify(aliceKey.get(await ask())),
      });
      assert.equal(right.status, 303);
      assert.equal(right.headers.location, '/account/security');
      const after = await sessionOf(alice.browser);
      assert.equal(after?.sid, before?.sid);
      assert.equal(after?.authTime, server.clock.now());
      assert.deepEqual(after?.amr, ['pwd', 'hwk', 'user', 'mfa']);

      // Signed out: no options, and an answer goes to the ordinary sign-in.
      const fresh = new FormBrowser(server);
      const freshToken = FormBrowser.hidden(await fresh.get('/sign-in'), 'csrf_token');
      const signedOut = await fresh.post('/sign-in/passkey/reauthentication/options', {
        csrf_token: freshToken,
      });
      assert.equal(signedOut.status, 403);
      assert.match(signedOut.text, /signInAgain/);
      const answer = await fresh.post('/sign-in/passkey/reauthentication', {
        csrf_token: freshToken,
        next: '/account/security',
        credential: JSON.stringify(aliceKey.get(first)),
      });
      assert.equal(answer.status, 303);
      assert.equal(answer.headers.location, '/sign-in?next=%2Faccount%2Fsecurity');
    });

    it('refuses a forged or broken answer with the sign-in page, and a form without its token', async () => {
      const fresh = new FormBrowser(server);
      const page = await fresh.get('/sign-in');
      const token = FormBrowser.hidden(page, 'csrf_token');
      const noToken = await fresh.post('/sign-in/passkey/options', {});
      assert.equal(noToken.status, 403);
      assert.match(noToken.text, /expired/);
      for (const credential of ['', 'not json', '{"id":"x","rawId":"x","type":"public-key","response":{}}']) {
        const res = await fresh.post('/sign-in/passkey', {
          csrf_token: token,
          next: '/account/apps',
          credential,
        });
        assert.equal(res.status, 401);
        assert.match(res.text, /That passkey could not sign you in/);
      }
      assert.equal((await fresh.post('/sign-in/passkey', { credential: '{}' })).status, 403);
    });

    it('asks for a recent sign-in before adding or removing a passkey; removes only the user’s own', async () => {
      const alice = await onSecurityPage();
      const bob = await onSecurityPage();
      const bobKey = new SoftwareAuthenticator({ origin: ORIGIN });
      assert.equal((await addPasskey(bob.browser, bob.csrf, bobKey)).status, 303);
      const [bobs] = await server.gatehouse.engine.passkeys.list(bob.userId);
      assert.ok(bobs !== undefined);

      // Alice cannot remove Bob's passkey by its id.
      const removeOther = await alice.browser.post('/account/security/passkeys/remove', {
        csrf_token: alice.csrf,
        id: bobs.id,
      });
      assert.equal(removeOther.status, 303);
      assert.match((await alice.browser.get('/account/security')).text, /That passkey was already removed/);
      assert.equal((await server.gatehouse.engine.passkeys.list(bob.userId)).length, 1);

      server.clock.advance(RECENT_SIGN_IN_SECONDS + 1);
      const options = await bob.browser.post('/account/security/passkeys/options', { csrf_token: bob.csrf });
      assert.equal(options.status, 403);
      assert.deepEqual(JSON.parse(options.text), {
        signInAgain: '/sign-in?reauth=1&next=%2Faccount%2Fsecurity',
      });
      const remove = await bob.browser.post('/account/security/passkeys/remove', {
        csrf_token: bob.csrf,
        id: bobs.id,
      });
      assert.equal(remove.status, 303);
      assert.equal(remove.headers.location, '/sign-in?reauth=1&next=%2Faccount%2Fsecurity');
      assert.equal((await server.gatehouse.engine.passkeys.list(bob.userId)).length, 1);
    });

    it('answers the second-factor pair when no password sign-in is pending', async () => {
      const fresh = new FormBrowser(server);
      const token = FormBrowser.hidden(await fresh.get('/sign-in'), 'csrf_token');
      const options = await fresh.post('/sign-in/passkey/second-factor/options', { csrf_token: token });
      assert.equal(options.status, 409);
      const answer = await fresh.post('/sign-in/passkey/second-factor', {
        csrf_token: token,
        credential: '{}',
      });
      assert.equal(answer.status, 303);
      assert.equal(answer.headers.location, '/sign-in');
    });
  });
}
