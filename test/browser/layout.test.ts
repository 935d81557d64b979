import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { basicAuth } from '../helpers/https-client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  authorizeUrl,
  browserSkip,
  CLIENT_REDIRECT,
  clientContext,
  describeScopes,
  expectConsentPage,
  launchChromium,
  signIn,
  type TestBrowser,
} from '../helpers/browser-pages.js';

// Set GATEHOUSE_SCREENSHOTS=<dir> to keep a screenshot of every page at every width.
const SCREENSHOTS = process.env.GATEHOUSE_SCREENSHOTS;
const WIDTHS = [375, 1280];

/** Problems a person would meet: sideways scrolling, unlabelled controls, unnamed buttons. */
async function layoutProblems(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const problems: string[] = [];
    if (document.documentElement.scrollWidth > window.innerWidth) {
      const wide = [...document.querySelectorAll('body *')]
        .filter((element) => element.getBoundingClientRect().right > window.innerWidth)
        .map((element) => `${element.tagName.toLowerCase()}.${element.className}`);
      problems.push(
        `scrolls sideways: ${document.documentElement.scrollWidth} > ${window.innerWidth} (${wide.join(', ')})`,
      );
    }
    for (const control of document.querySelectorAll<HTMLInputElement | HTMLSelectElement>(
      'input:not([type=hidden]), select, textarea',
    )) {
      if ((control.labels?.length ?? 0) === 0 && !control.getAttribute('aria-label')) {
        problems.push(`no label: ${control.outerHTML.slice(0, 80)}`);
      }
    }
    for (const button of document.querySelectorAll('button')) {
      if ((button.textContent ?? '').trim() === '')
        problems.push(`unnamed button: ${button.outerHTML.slice(0, 80)}`);
    }
    return problems;
  });
}

describe('page layout at phone and desktop widths', { skip: browserSkip }, () => {
  let browser: TestBrowser;
  let server: TestServer;
  let clientId: string;
  let clientSecret: string;
  let username: string;
  let password: string;

  before(async () => {
    browser = await launchChromium();
    server = await startTestServer('sqlite', { productName: 'Acme Accounts' }, { transport: 'https' });
    await describeScopes(server, {
      profile: 'See your user name and account details',
      'notes.read': 'Read all of your notes, including the archived ones',
      'notes.write': 'Create, change and delete your notes',
    });
    ({
      client: { id: clientId },
      secret: clientSecret,
    } = await server.client({
      name: 'Acme Notes for iPhone and Android',
      // The playground lists clients with its callback under the issuer (the server's default).
      redirect_uris: [CLIENT_REDIRECT, 'https://gatehouse.test/playground/callback'],
      scopes: ['profile', 'notes.read', 'notes.write'],
      grant_types: [
        'authorization_code',
        'implicit',
        'password',
        'client_credentials',
        'refresh_token',
        'urn:ietf:params:oauth:grant-type:device_code',
      ],
    }));
    ({
      user: { username },
      password,
    } = await server.user('ada.lovelace'));
    if (SCREENSHOTS) mkdirSync(SCREENSHOTS, { recursive: true });
  });
  after(async () => {
    await server?.close();
    await browser?.close();
  });

  for (const width of WIDTHS) {
    it(`fits every page into ${width} px, with labelled controls`, async () => {
      const { context, page } = await clientContext(browser, width);
      const check = async (name: string) => {
        assert.deepEqual(await layoutProblems(page), [], `${name} at ${width}px`);
        if (SCREENSHOTS)
          await page.screenshot({ path: join(SCREENSHOTS, `${name}-${width}.png`), fullPage: true });
      };
      await page.goto(
        authorizeUrl(server, {
          prompt: 'consent',
          response_type: 'code',
          client_id: clientId,
          redirect_uri: CLIENT_REDIRECT,
          scope: 'profile notes.read notes.write',
        }),
      );
      await check('sign-in');
      await page.getByLabel('Username').fill(username);
      await page.getByLabel('Password').fill('not the password');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('alert').waitFor();
      await check('sign-in-failed');
      await signIn(page, username, password);
      await expectConsentPage(page, 'Acme Notes for iPhone and Android');
      await check('consent');
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.waitForURL((url) => url.hostname === 'client.test');

      await page.goto(`${server.url}/account/apps`);
      await check('connected-apps');
      await page.goto(`${server.url}/`);
      await page.getByRole('link', { name: 'OpenID Provider configuration' }).waitFor();
      await check('home');
      await page.goto(`${server.url}/playground`);
      await page.getByLabel('Client', { exact: true }).selectOption(clientId);
      await page.getByRole('button', { name: 'Client credentials' }).click();
      await page.locator('#log article').first().waitFor();
      await check('playground');
      // The device grant's pages (RFC 8628): the code, a wrong one, the consent with the code, the end.
      const started = await server.http.request('/device_authorization', {
        form: { scope: 'profile notes.read notes.write' },
        headers: { authorization: basicAuth(clientId, clientSecret) },
      });
      const { user_code: userCode } = started.json as { user_code: string };
      await page.goto(`${server.url}/device`);
      await check('device');
      await page.getByLabel('Code').fill('ZZZZ-ZZZZ');
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByRole('alert').waitFor();
      await check('device-wrong-code');
      await page.getByLabel('Code').fill(userCode);
      await page.getByRole('button', { name: 'Continue' }).click();
      await expectConsentPage(page, 'Acme Notes for iPhone and Android');
      await check('device-consent');
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.getByRole('heading', { name: 'Device connected' }).waitFor();
      await check('device-connected');
      await page.goto(authorizeUrl(server, { response_type: 'code', client_id: 'unknown' }));
      await check('error');
      await context.close();
    });
  }

  it('moves the keyboard focus through the sign-in form in reading order', async () => {
    const { context, page } = await clientContext(browser);
    await page.goto(`${server.url}/sign-in`);
    // The user name field has the focus on arrival; Tab goes on to the password and the button.
    const focused = () =>
      page.evaluate(() => document.activeElement?.id || document.activeElement?.textContent?.trim());
    // Chromium applies autofocus at a rendering update, which can come after the load event that
    // goto() waits for: wait until something other than the body has the focus (a page without
    // autofocus times out here; one that focuses the wrong field fails the assertion below).
    await page.waitForFunction(
      () => document.activeElement !== null && document.activeElement !== document.body,
    );
    assert.equal(await focused(), 'username');
    await page.keyboard.press('Tab');
    assert.equal(await focused(), 'password');
    await page.keyboard.press('Tab');
    assert.equal(await focused(), 'Sign in');
    // And the whole flow works from the keyboard alone.
    await page.getByLabel('Username').focus();
    await page.keyboard.type(username);
    await page.keyboard.press('Tab');
    await page.keyboard.type(password);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Connected apps', level: 1 }).waitFor();
    assert.match(await page.locator('.brand').innerText(), /Acme Accounts/);
    await context.close();
  });
});
