import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  browserSkip,
  clientContext,
  expectConsentPage,
  launchChromium,
  signIn,
  type TestBrowser,
} from '../helpers/browser-pages.js';

/** The test server's issuer: the playground's callback is under it only, so the page is opened there. */
const ISSUER = 'https://gatehouse.test';

describe('OAuth playground in Chromium', { skip: browserSkip }, () => {
  for (const backend of backends()) {
    describe(backend, () => {
      let server: TestServer;
      let browser: TestBrowser;
      before(async () => {
        server = await startTestServer(backend, { issuer: ISSUER }, { transport: 'https' });
        // The issuer's host resolves to this server in this Chromium.
        browser = await launchChromium({ 'gatehouse.test': Number(new URL(server.url).port) });
      });
      after(async () => {
        await browser?.close();
        await server?.close();
      });

      /**
       * Chooses a client and waits for the playground script to have shown its facts: the script is a
       * module, so it runs after the page is parsed, and until then the choice has no effect.
       */
      async function chooseClient(page: Page, clientId: string): Promise<void> {
        await page.getByLabel('Client', { exact: true }).selectOption(clientId);
        await page.locator('#client-facts', { hasText: 'client · grants:' }).waitFor();
      }

      /** The newest entry of the playground's log, once it is there. */
      async function newestEntry(page: Page, title: string): Promise<string> {
        const entry = page.locator('#log article.exchange').first();
        await entry.locator('h3', { hasText: title }).waitFor();
        return entry.innerText();
      }

      it('runs all four grants and refresh from the browser, showing requests, responses and claims', async () => {
        const callback = `${ISSUER}/playground/callback`;
        const { client, secret } = await server.client({
          name: 'Playground Client',
          redirect_uris: [callback],
          grant_types: ['authorization_code', 'implicit', 'password', 'client_credentials', 'refresh_token'],
          scopes: ['profile'],
        });
        const { user, password } = await server.user();
        const { context, page } = await clientContext(browser);
        const scriptErrors: string[] = [];
        page.on('pageerror', (error) => scriptErrors.push(error.message));
        page.on('console', (message) => {
          if (message.type() === 'error') scriptErrors.push(message.text());
        });

        // Signed in only: the page lists the registered clients.
        await page.goto(`${ISSUER}/playground`);
        await signIn(page, user.username, password);
        await page.getByRole('heading', { name: 'OAuth playground' }).waitFor();
        assert.equal(new URL(page.url()).pathname, '/playground');
        await chooseClient(page, client.id);
        await page.getByLabel('Client secret').fill(secret);
        assert.equal(await page.getByLabel('Scope').inputValue(), 'profile');
        assert.equal(await page.locator('#callback-url').innerText(), callback);

        // Authorization code with PKCE: out to /authorize, consent, back to the callback page.
        await page.getByRole('button', { name: 'Authorization code with PKCE' }).click();
        await expectConsentPage(page, 'Playground Client');
        await page.getByRole('button', { name: 'Allow' }).click();
        await page.getByText('Code exchanged: access token received.').waitFor();
        assert.equal(page.url(), callback, 'the code is gone from the address bar');
        const exchanged = await newestEntry(page, 'Authorization code grant');
        assert.match(exchanged, /grant_type=authorization_code/);
        assert.match(exchanged, /code_verifier=/);
        assert.match(exchanged, /HTTP 200/);
        assert.match(exchanged, /"refresh_token": "rt_/);
        assert.match(exchanged, new RegExp(`"client_id": "${client.id}"`));
        assert.match(exchanged, new RegExp(`"sub": "${user.id}"`));
        assert.doesNotMatch(exchanged, new RegExp(secret), 'the secret is never shown');

        // Implicit: the token goes straight to the redirect, so the consent page is shown every time
        // (RFC 8252 §8.6), then back with the token in the fragment.
        await page.getByRole('link', { name: 'Back to the playground' }).click();
        await chooseClient(page, client.id);
        await page.getByRole('button', { name: 'Implicit' }).click();
        await expectConsentPage(page, 'Playground Client');
        await page.getByRole('button', { name: 'Allow' }).click();
        await page
          .getByText('Access token received in the URL fragment and removed from the address bar.')
          .waitFor();
        assert.equal(page.url(), callback, 'the fragment is gone from the address bar');
        const implicit = await newestEntry(page, 'Implicit grant response');
        assert.match(implicit, /URL fragment/);
        assert.match(implicit, /"access_token": "ey/);
        assert.doesNotMatch(implicit, /refresh_token/);
        assert.match(implicit, /"scope": "profile"/);

        // Password, client credentials and refresh run as fetches from the playground page.
        await page.getByRole('link', { name: 'Back to the playground' }).click();
        await chooseClient(page, client.id);
        await page.getByLabel('Client secret').fill(secret);
        await page.getByLabel('User name for the password grant').fill(user.username);
        await page.getByLabel('Password for the password grant').fill(password);
        await page.getByRole('button', { name: 'Password', exact: true }).click();
        const passwordEntry = await newestEntry(page, 'Password grant');
        assert.match(passwordEntry, /HTTP 200/);
        assert.match(passwordEntry, /password=••••••/);
        assert.doesNotMatch(passwordEntry, new RegExp(password.replace(/ /g, '\\+')));

        await page.getByRole('button', { name: 'Client credentials' }).click();
        const credentials = await newestEntry(page, 'Client credentials grant');
        assert.match(credentials, /HTTP 200/);
        assert.match(credentials, new RegExp(`"sub": "${client.id}"`));

        const refreshToken = await page.getByLabel('Refresh token').inputValue();
        assert.match(refreshToken, /^rt_/);
        await page.getByRole('button', { name: 'Refresh' }).click();
        const refreshed = await newestEntry(page, 'Refresh');
        assert.match(refreshed, /grant_type=refresh_token/);
        assert.match(refreshed, /HTTP 200/);
        assert.notEqual(await page.getByLabel('Refresh token').inputValue(), refreshToken, 'rotated');

        // A wrong secret shows the error response too.
        await page.getByLabel('Client secret').fill('wrong');
        await page.getByRole('button', { name: 'Client credentials' }).click();
        const refused = await newestEntry(page, 'Client credentials grant');
        assert.match(refused, /HTTP 401/);
        assert.match(refused, /invalid_client/);

        // The console shows only the refused request (fetch logs 401s); no script errors.
        assert.deepEqual(
          scriptErrors.filter((text) => !/status of 401/.test(text)),
          [],
        );
        await context.close();
      });

      it('ignores a response whose state this tab did not send', async () => {
        const { context, page } = await clientContext(browser);
        await page.goto(`${ISSUER}/playground/callback?code=ac_forged&state=forged`);
        await page
          .getByText('This response does not belong to a request this tab made; it was ignored.')
          .waitFor();
        assert.equal(page.url(), `${ISSUER}/playground/callback`);
        await context.close();
      });
    });
  }
});
