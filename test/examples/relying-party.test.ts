import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { createRelyingParty } from '../../examples/relying-party.js';
import type { User } from '../../src/core/model.js';
import {
  browserSkip,
  clientContext,
  expectConsentPage,
  launchChromium,
  signIn,
  type TestBrowser,
} from '../helpers/browser-pages.js';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { trustingFetch } from '../helpers/trusting-fetch.js';
import { freePort } from '../helpers/spawned-server.js';

// examples/relying-party.ts end to end: Chromium signs in to the example app through Gatehouse's
// sign-in and consent pages, sees its claims, and signs out through the end_session_endpoint.

describe('examples/relying-party signs a user in with Gatehouse, in Chromium', { skip: browserSkip }, () => {
  let browser: TestBrowser;
  before(async () => {
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });

  for (const backend of backends()) {
    describe(backend, () => {
      let gatehouse: TestServer;
      let https: ReturnType<typeof trustingFetch>;
      let app: Server;
      let appUrl: string;
      let alice: { user: User; password: string };
      before(async () => {
        const port = await freePort();
        const issuer = `https://localhost:${port}`;
        gatehouse = await startTestServer(backend, { port, issuer }, { transport: 'https' });
        https = trustingFetch(gatehouse.ca);
        alice = await gatehouse.user(undefined, undefined, {
          email: 'alice@example.com',
          name: 'Alice Example',
        });
        // As examples/README.md registers it: an http app on the loopback address (Gatehouse allows http there).
        const appPort = await freePort();
        appUrl = `http://127.0.0.1:${appPort}`;
        const { client, secret } = await gatehouse.client({
          name: 'Example app',
          redirect_uris: [`${appUrl}/callback`],
          post_logout_redirect_uris: [`${appUrl}/signed-out`],
          grant_types: ['authorization_code'],
          scopes: ['openid', 'profile', 'email'],
        });
        app = await createRelyingParty({
          issuer,
          clientId: client.id,
          clientSecret: secret,
          baseUrl: appUrl,
          fetch: https.fetch,
        });
        await new Promise<void>((resolve) => app.listen(appPort, '127.0.0.1', resolve));
      });
      after(async () => {
        app?.closeAllConnections();
        await new Promise((resolve) => app?.close(resolve));
        https?.close();
        await gatehouse?.close();
      });

      it('sign in: discovery, code flow with PKCE, nonce and state, ID token and UserInfo shown; then sign out', async () => {
        const { context, page } = await clientContext(browser);
        try {
          await page.goto(appUrl);
          await page.getByText('Not signed in.').waitFor();
          await page.getByRole('link', { name: 'Sign in with Gatehouse' }).click();
          await page.waitForURL((url) => url.href.startsWith(`${gatehouse.gatehouse.config.issuer}/`));
          await signIn(page, alice.user.username, alice.password);
          await expectConsentPage(page, 'Example app');
          await page.getByRole('button', { name: 'Allow' }).click();

          await page.waitForURL(`${appUrl}/`);
          await page.getByText('Signed in as Alice Example').waitFor();
          assert.equal(await page.locator('#email').textContent(), 'alice@example.com');
          const claims = JSON.parse((await page.locator('#claims').textContent()) ?? '{}') as Record<
            string,
            unknown
          >;
          assert.equal(claims.sub, alice.user.id);
          assert.equal(claims.iss, gatehouse.gatehouse.config.issuer);
          assert.equal(typeof claims.nonce, 'string');
          const userinfo = JSON.parse((await page.locator('#userinfo').textContent()) ?? '{}') as Record<
            string,
            unknown
          >;
          assert.equal(userinfo.preferred_username, alice.user.username);
          // The pending sign-in cookie is gone; the session cookie stays HttpOnly.
          const cookies = await context.cookies(appUrl);
          assert.deepEqual(
            cookies.map((cookie) => [cookie.name, cookie.httpOnly, cookie.sameSite]),
            [['rp_session', true, 'Lax']],
          );

          // RP-Initiated Logout: the app, then Gatehouse's confirmation page, then back to the app.
          await page.getByRole('button', { name: 'Sign out' }).click();
          await page.getByRole('heading', { name: 'Sign out of Gatehouse?' }).waitFor();
          await page.locator('main').getByRole('button', { name: 'Sign out' }).click();
          await page.waitForURL((url) => url.href.startsWith(`${appUrl}/signed-out`));
          await page.getByText('You are signed out.').waitFor();
          assert.deepEqual(await context.cookies(appUrl), []);

          // Signed out at Gatehouse too: signing in again asks for the password.
          await page.getByRole('link', { name: 'Sign in again' }).click();
          await page.getByLabel('Password').waitFor();
        } finally {
          await context.close();
        }
      });

      it('a callback without the sign-in cookie, or with a forged one, is refused', async () => {
        const { context, page } = await clientContext(browser);
        try {
          const missing = await page.goto(`${appUrl}/callback?code=x&state=y`);
          assert.equal(missing?.status(), 400);
          await context.addCookies([{ name: 'rp_login', value: 'e30.forged', url: appUrl }]);
          const forged = await page.goto(`${appUrl}/callback?code=x&state=y`);
          assert.equal(forged?.status(), 400);
          await page.getByText('No sign-in in progress.').waitFor();
        } finally {
          await context.close();
        }
      });
    });
  }
});
