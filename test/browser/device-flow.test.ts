import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import type { Client } from '../../src/core/model.js';
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

// RFC 8628 in a real browser: a device starts the flow, Chromium opens verification_uri_complete (the
// code already in the field), presses Continue, signs in, sees the application and the code on the
// consent page, narrows the scope and allows; the device's next poll gets tokens. Then: a wrong code
// says so on the page, and Deny leaves the device with access_denied.

const GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

interface Started {
  device_code: string;
  user_code: string;
  verification_uri_complete: string;
}

describe('the device authorization grant in Chromium', { skip: browserSkip }, () => {
  let browser: TestBrowser;
  before(async () => {
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });

  for (const backend of backends()) {
    describe(backend, () => {
      let server: TestServer;
      let tv: Client;

      before(async () => {
        server = await startTestServer(backend, {}, { transport: 'https' });
        tv = (
          await server.client({
            name: 'Kitchen Radio',
            public: true,
            grant_types: [GRANT_TYPE, 'refresh_token'],
            scopes: ['read', 'write'],
          })
        ).client;
      });
      after(async () => {
        await server?.close();
      });

      const start = async (): Promise<Started> => {
        const res = await server.http.request('/device_authorization', {
          form: { client_id: tv.id, scope: 'read write' },
        });
        assert.equal(res.status, 200, res.text);
        return res.json as Started;
      };
      const poll = (started: Started) =>
        server.http.token({ grant_type: GRANT_TYPE, client_id: tv.id, device_code: started.device_code });
      /** verification_uri_complete, at the test server's address (the issuer's host resolves nowhere). */
      const complete = (started: Started) =>
        `${server.url}${new URL(started.verification_uri_complete).pathname}${new URL(started.verification_uri_complete).search}`;

      it('verification_uri_complete, Continue, sign-in, consent with the code shown, Allow; the device gets tokens', async () => {
        const { user, password } = await server.user();
        const started = await start();
        assert.equal((await poll(started)).status, 400);
        const { context, page } = await clientContext(browser);
        try {
          await page.goto(complete(started));
          // The code is filled in, and nothing happens until the user presses Continue.
          const field = page.getByLabel('Code');
          assert.equal(await field.inputValue(), started.user_code);
          assert.equal(new URL(page.url()).pathname, '/device');
          await page.getByRole('button', { name: 'Continue' }).click();
          await signIn(page, user.username, password);
          await expectConsentPage(page, 'Kitchen Radio');
          assert.equal(await page.locator('#device-code').textContent(), started.user_code);
          await page.getByText('If someone sent you this code or link, choose Deny.').waitFor();
          await page.getByRole('checkbox', { name: /write/ }).uncheck();
          await page.getByLabel('Access valid for').selectOption('86400');
          await page.getByRole('button', { name: 'Allow' }).click();
          await page.getByRole('heading', { name: 'Device connected' }).waitFor();
          await page.getByText('Your device may continue').waitFor();
        } finally {
          await context.close();
        }
        server.clock.advance(5);
        const token = await poll(started);
        assert.equal(token.status, 200, token.text);
        const tokens = token.json as { access_token: string; scope: string; refresh_token?: string };
        assert.equal(tokens.scope, 'read');
        assert.equal(decodeJwt(tokens.access_token).sub, user.id);
        assert.equal(typeof tokens.refresh_token, 'string');
      });

      it('a wrong code says so on the page; a right one typed in lower case works; Deny leaves the device access_denied', async () => {
        const { user, password } = await server.user();
        const started = await start();
        const { context, page } = await clientContext(browser);
        try {
          await page.goto(`${server.url}/device`);
          await page.getByLabel('Code').fill('ZZZZ-ZZZZ');
          await page.getByRole('button', { name: 'Continue' }).click();
          await page.getByText('That code is not right.').waitFor();
          assert.equal(await page.getByLabel('Code').getAttribute('aria-invalid'), 'true');
          await page.getByLabel('Code').fill(started.user_code.toLowerCase().replace('-', ' '));
          await page.getByRole('button', { name: 'Continue' }).click();
          await signIn(page, user.username, password);
          await expectConsentPage(page, 'Kitchen Radio');
          await page.getByRole('button', { name: 'Deny' }).click();
          await page.getByRole('heading', { name: 'Access denied' }).waitFor();
        } finally {
          await context.close();
        }
        server.clock.advance(5);
        const denied = await poll(started);
        assert.equal(denied.status, 400);
        assert.equal((denied.json as { error: string }).error, 'access_denied');
      });
    });
  }
});
