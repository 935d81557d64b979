import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '../../src/core/model.js';
import { UPSTREAM_STATE_COOKIE } from '../../src/http/ui/federation/upstream-state.js';
import { backends } from '../helpers/backends.js';
import { insertProvider } from '../helpers/federation.js';
import { FormBrowser } from '../helpers/form-browser.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const REDIRECT = 'https://app.example/cb';
const LOGO = 'https://logos.example/corp.svg';

/** Decision 40: the upstream flow's routes as a browser without an upstream reaches them. */
for (const backend of backends()) {
  describe(`upstream sign-in routes (${backend})`, () => {
    let server: TestServer;
    let client: Client;
    before(async () => {
      server = await startTestServer(backend);
      // A provider whose issuer answers nothing (a closed port), and one with a logo.
      await insertProvider(server.store.storage, {
        id: 'corp',
        name: 'Corp',
        issuer: 'https://127.0.0.1:1',
        logoUri: LOGO,
      });
      await insertProvider(server.store.storage, { id: 'other', name: 'Other' });
      ({ client } = await server.client({ name: 'App', redirect_uris: [REDIRECT], scopes: ['openid'] }));
    });
    after(async () => {
      await server.close();
    });

    const authorize = (extra: Record<string, string>) =>
      `/authorize?${new URLSearchParams({
        response_type: 'code',
        client_id: client.id,
        redirect_uri: REDIRECT,
        scope: 'openid',
        nonce: 'n',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
        ...extra,
      })}`;

    it('the sign-in page has "Continue with NAME" per provider, carrying next, its logo allowed for that page only', async () => {
      const browser = new FormBrowser(server);
      const page = await browser.get('/sign-in?next=/account/security');
      assert.equal(page.status, 200);
      assert.match(page.text, /href="\/sign-in\/upstream\/corp\?next=%2Faccount%2Fsecurity"/);
      assert.match(page.text, /Continue with Corp<\/span>/);
      assert.match(page.text, /Continue with Other<\/span>/);
      assert.match(page.text, new RegExp(`<img src="${LOGO}" alt=""`));
      assert.match(
        String(page.headers['content-security-policy']),
        /img-src 'self' data: https:\/\/logos\.example;/,
      );
      const elsewhere = await browser.get('/account/apps');
      assert.doesNotMatch(String(elsewhere.headers['content-security-policy']), /logos\.example/);
    });

    it('idp_hint (or login_hint=idp:<id>) goes straight to the provider; one naming none shows the page', async () => {
      const browser = new FormBrowser(server);
      for (const hint of [{ idp_hint: 'corp' }, { login_hint: 'idp:corp' }] as Record<string, string>[]) {
        const res = await browser.get(authorize(hint));
        assert.equal(res.status, 303, res.text);
        const location = new URL(String(res.headers.location), 'https://gatehouse.test');
        assert.equal(location.pathname, '/sign-in/upstream/corp');
        assert.match(location.searchParams.get('next') ?? '', /^\/authorize\?/);
      }
      const unknown = await browser.get(authorize({ idp_hint: 'nobody' }));
      assert.equal(unknown.status, 200);
      assert.match(unknown.text, /Continue with Corp/);
    });

    it('a client that chose its providers (decision 39) offers only those: buttons, idp_hint and the start', async () => {
      const { client: chooser } = await server.client({
        name: 'Chooser',
        redirect_uris: [REDIRECT],
        scopes: ['openid'],
        identity_providers: ['other'],
      });
      const request = `/authorize?${new URLSearchParams({
        response_type: 'code',
        client_id: chooser.id,
        redirect_uri: REDIRECT,
        scope: 'openid',
        nonce: 'n',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      })}`;
      const browser = new FormBrowser(server);
      const page = await browser.get(`/sign-in?next=${encodeURIComponent(request)}`);
      assert.equal(page.status, 200);
      assert.match(page.text, /Continue with Other<\/span>/);
      assert.doesNotMatch(page.text, /Continue with Corp/);
      // A hint naming a provider the client does not offer shows the page instead.
      const hinted = await browser.get(`${request}&idp_hint=corp`);
      assert.equal(hinted.status, 200);
      assert.doesNotMatch(hinted.text, /Continue with Corp/);
      // And a start URL made by hand cannot widen the choice.
      const forced = await browser.get(`/sign-in/upstream/corp?next=${encodeURIComponent(request)}`);
      assert.equal(forced.status, 404);
      assert.equal(browser.hasCookie(UPSTREAM_STATE_COOKIE), false, 'no flow was started');
      // With no choice (null), every provider: the default client above.
      const all = await browser.get('/sign-in?next=/account/apps');
      assert.match(all.text, /Continue with Corp/);
    });

    it('failures before the upstream: an unknown provider, an unreachable one, a callback of no flow; never a session', async () => {
      const browser = new FormBrowser(server);
      const unknown = await browser.get('/sign-in/upstream/nobody?next=/account/security');
      assert.equal(unknown.status, 404);
      assert.match(unknown.text, /There is no sign-in provider of that name here\./);
      assert.match(unknown.text, /href="\/sign-in\?next=%2Faccount%2Fsecurity">Back to sign in/);

      const unreachable = await browser.get('/sign-in/upstream/corp?next=/account/security');
      assert.equal(unreachable.status, 502);
      assert.match(unreachable.text, /Corp could not be reached\./);
      assert.equal(browser.hasCookie(UPSTREAM_STATE_COOKIE), false, 'no flow was started');

      const callback = await browser.get('/sign-in/callback/corp?code=c&state=s');
      assert.equal(callback.status, 400);
      assert.match(callback.text, /This sign-in link has expired or was already used\. Start again\./);
      assert.equal((await browser.get('/account/security')).status, 303, 'still signed out');
    });

    it('"Link NAME" needs the page’s CSRF token and a signed-in user; "Remove" and "Don’t link it" are CSRF-checked', async () => {
      const browser = new FormBrowser(server);
      const forged = await browser.get('/sign-in/upstream/other?link=1');
      assert.equal(forged.status, 403);
      const { user, password } = await server.user();
      assert.equal((await browser.signIn(user.username, password, '/account/security')).status, 303);
      const page = await browser.get('/account/security');
      assert.match(page.text, /<h2 id="linked-accounts">Linked accounts<\/h2>/);
      assert.match(page.text, /You have no linked accounts\./);
      assert.match(
        page.text,
        /href="\/sign-in\/upstream\/other\?link=1&amp;csrf_token=[^"]+"[^>]*>Link Other</,
      );
      assert.equal((await browser.post('/account/security/linked-accounts/remove', { id: 'x' })).status, 403);
      assert.equal(
        (await browser.post('/sign-in/pending-link/cancel', { next: '/account/apps' })).status,
        403,
      );
    });

    it('a user with no password: "Set a password" by mail instead of "Change password", which is refused', async () => {
      const browser = new FormBrowser(server);
      const { user, password } = await server.user(undefined, undefined, { email: 'nopass@example.com' });
      assert.equal((await browser.signIn(user.username, password, '/account/security')).status, 303);
      // As a federated sign-in leaves a user it created.
      assert.ok(await server.store.storage.users.update({ ...user, passwordHash: '' }));
      const page = await browser.get('/account/security');
      assert.match(page.text, /You have no password/);
      assert.match(page.text, /action="\/forgot-password"/);
      assert.doesNotMatch(page.text, />Change password</);
      const change = await browser.post('/account/security/password', {
        csrf_token: FormBrowser.hidden(page, 'csrf_token'),
        current_password: '',
        new_password: 'a new password here',
      });
      assert.equal(change.status, 409);
      assert.match(change.text, /You have no password/);
    });
  });
}
