import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import type { User } from '../../src/core/model.js';
import { ACR_MULTI_FACTOR } from '../../src/core/sign-in/assurance.js';
import { BROWSER_COOKIE } from '../../src/http/ui/browser-context.js';
import { RECENT_SIGN_IN_SECONDS } from '../../src/http/ui/security/recent-sign-in.js';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  authorizeUrl,
  browserSkip,
  CLIENT_REDIRECT,
  clientContext,
  expectConsentPage,
  landedAtClient,
  launchChromium,
  pkcePair,
  signIn,
  type TestBrowser,
} from '../helpers/browser-pages.js';
import { appCode } from '../helpers/totp.js';

/** docs/decisions.md, decision 34: a second factor after the password, as a person uses it. */

const WRONG_CODE = 'That code is not right. Try the newest code, or another recovery code.';

/** The "Setup key" as the page shows it, as a person would type it into an app (spaces dropped). */
async function setupKey(page: Page): Promise<string> {
  await page.getByRole('heading', { name: 'Set up an authenticator app' }).waitFor();
  const text = await page.locator('#setup-key').textContent();
  const key = (text ?? '').replace(/\s/g, '');
  assert.match(key, /^[A-Z2-7]{32}$/);
  // The QR code is there too, as an image with a name (inline SVG, allowed by the CSP).
  assert.equal(
    await page.getByRole('img', { name: 'QR code for your authenticator app' }).locator('svg').count(),
    1,
  );
  return key;
}

async function enterCode(page: Page, code: string): Promise<number> {
  await page.getByLabel('Code', { exact: true }).fill(code);
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST'),
    page.getByRole('button', { name: 'Verify' }).click(),
  ]);
  return response.status();
}

/** What the browser's session is worth (decision 30), read from its cookie. */
async function sessionAssurance(server: TestServer, context: BrowserContext) {
  const cookie = (await context.cookies()).find((c) => c.name === BROWSER_COOKIE);
  return server.gatehouse.engine.browserSessions.authentication(cookie?.value);
}

async function signOut(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(/\/sign-in$/);
}

describe('a second factor after the password, in Chromium', { skip: browserSkip }, () => {
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
      before(async () => {
        // Three wrong attempts per (user name, source), so the lockout is reached in a few codes.
        server = await startTestServer(backend, { passwordFailuresPerUsername: 3 }, { transport: 'https' });
      });
      after(async () => {
        await server?.close();
      });

      /** Gives `user` an authenticator app through the engine; returns its setup key. */
      async function withApp(user: User): Promise<string> {
        const { engine } = server.gatehouse;
        const setUp = await engine.secondFactors.beginTotp(user);
        assert.ok(setUp);
        const code = appCode(setUp.secret, server.clock.now());
        const result = await engine.confirmTotpSetUp({ userId: user.id, code, address: '203.0.113.9' });
        assert.equal(result.outcome, 'signed-in');
        return setUp.secret;
      }

      it('"Set up" on the security page, then sign-ins ask for a code: a replayed code refused, recovery codes once', async () => {
        const { user, password } = await server.user();
        const { context, page } = await clientContext(browser);
        await page.goto(`${server.url}/sign-in?next=/account/security`);
        await signIn(page, user.username, password);
        await page.getByRole('heading', { name: 'Authenticator app' }).waitFor();

        // Set up: the QR code and "Setup key", then the app's code confirms it.
        await page.getByRole('button', { name: 'Set up' }).click();
        const key = await setupKey(page);
        const firstCode = appCode(key, server.clock.now());
        assert.equal(await enterCode(page, '000000'), 401, 'a wrong code does not confirm it');
        await page.getByRole('alert').filter({ hasText: WRONG_CODE }).waitFor();
        assert.equal((await setupKey(page)).length, 32, 'the same set-up is shown again');
        assert.equal(await enterCode(page, firstCode), 303);
        await page.getByRole('status').filter({ hasText: 'Authenticator app set up' }).waitFor();
        assert.equal(await page.getByRole('button', { name: 'Remove' }).count(), 1);

        // Recovery codes: ten, shown once.
        await page.getByRole('button', { name: 'Generate' }).click();
        await page.getByRole('heading', { name: 'Recovery codes' }).waitFor();
        const codes = await page.locator('.recovery-codes code').allTextContents();
        assert.equal(codes.length, 10);
        for (const code of codes) assert.match(code, /^[a-z2-7]{5}-[a-z2-7]{5}$/);
        await page.getByRole('link', { name: 'Back to Security' }).click();
        await page.getByText('10 recovery codes left.').waitFor();

        // Signing in again: the password, then "Enter a code". The code used at set-up is refused.
        await signOut(page);
        await page.goto(`${server.url}/sign-in?next=/account/security`);
        await signIn(page, user.username, password);
        await page.getByRole('heading', { name: 'Enter a code' }).waitFor();
        assert.equal(await sessionAssurance(server, context), undefined, 'not signed in after the password');
        assert.equal(await enterCode(page, firstCode), 401, 'a replayed code');
        await page.getByRole('alert').filter({ hasText: WRONG_CODE }).waitFor();
        assert.equal(await page.getByLabel('Code', { exact: true }).getAttribute('aria-invalid'), 'true');
        server.clock.advance(30);
        assert.equal(await enterCode(page, appCode(key, server.clock.now())), 303);
        await page.getByRole('heading', { name: 'Authenticator app' }).waitFor();
        const signedIn = await sessionAssurance(server, context);
        assert.deepEqual(signedIn?.amr, ['pwd', 'otp', 'mfa']);
        assert.equal(signedIn?.acr, ACR_MULTI_FACTOR);

        // A recovery code signs in once.
        for (const expected of [303, 401]) {
          await signOut(page);
          await page.goto(`${server.url}/sign-in?next=/account/security`);
          await signIn(page, user.username, password);
          await page.getByRole('heading', { name: 'Enter a code' }).waitFor();
          assert.equal(await enterCode(page, codes[0]!), expected);
        }
        await page.getByRole('alert').filter({ hasText: WRONG_CODE }).waitFor();
        assert.equal(await enterCode(page, codes[1]!), 303);
        await page.getByText('8 recovery codes left.').waitFor();

        // "Remove": the next sign-in takes the password alone.
        await page.getByRole('button', { name: 'Remove' }).click();
        await page.getByRole('status').filter({ hasText: 'Authenticator app removed' }).waitFor();
        await signOut(page);
        await page.goto(`${server.url}/sign-in?next=/account/security`);
        await signIn(page, user.username, password);
        await page.getByRole('heading', { name: 'Authenticator app' }).waitFor();
        assert.equal(await page.getByRole('button', { name: 'Set up' }).count(), 1);
        await context.close();
      });

      it('re-authentication asks a user with an app for a code too, and keeps the session (decisions 34, 37)', async () => {
        const { user, password } = await server.user();
        const key = await withApp(user);
        const { context, page } = await clientContext(browser);
        await page.goto(`${server.url}/sign-in?next=/account/security`);
        await signIn(page, user.username, password);
        await page.getByRole('heading', { name: 'Enter a code' }).waitFor();
        server.clock.advance(30);
        assert.equal(await enterCode(page, appCode(key, server.clock.now())), 303);
        await page.getByRole('heading', { name: 'Authenticator app' }).waitFor();
        const cookie = async () => (await context.cookies()).find((c) => c.name === BROWSER_COOKIE)?.value;
        const before = await server.gatehouse.engine.browserSessions.authentication(await cookie());
        assert.ok(before !== undefined);

        // The sign-in gets old: a change asks again, and the password alone does not do.
        server.clock.advance(RECENT_SIGN_IN_SECONDS + 1);
        await page.getByRole('button', { name: 'Generate' }).click();
        await page.getByRole('heading', { name: "Confirm it's you" }).waitFor();
        await page.getByLabel('Password').fill(password);
        await page.getByRole('button', { name: 'Confirm' }).click();
        await page.getByRole('heading', { name: 'Enter a code' }).waitFor();
        const during = await server.gatehouse.engine.browserSessions.authentication(await cookie());
        assert.equal(during?.authTime, before.authTime, 'the password alone moved nothing');
        assert.equal(await enterCode(page, appCode(key, server.clock.now())), 303);
        await page.getByRole('heading', { name: 'Security', level: 1 }).waitFor();

        // The same session (sid), now recording the password and the code just given.
        const after = await server.gatehouse.engine.browserSessions.authentication(await cookie());
        assert.equal(after?.sid, before.sid);
        assert.equal(after?.authTime, server.clock.now());
        assert.deepEqual(after?.amr, ['pwd', 'otp', 'mfa']);
        await context.close();
      });

      it('wrong codes lock out, and the password from that source with them', async () => {
        const { user, password } = await server.user();
        await withApp(user);
        const { context, page } = await clientContext(browser);
        await page.goto(`${server.url}/sign-in`);
        await signIn(page, user.username, password);
        await page.getByRole('heading', { name: 'Enter a code' }).waitFor();
        for (let i = 0; i < 3; i++) assert.equal(await enterCode(page, '000000'), 401);
        assert.equal(await enterCode(page, '000000'), 429);
        await page.getByRole('heading', { name: 'Too many attempts' }).waitFor();
        await page.goto(`${server.url}/sign-in`);
        await signIn(page, user.username, password);
        await page.getByRole('heading', { name: 'Too many attempts' }).waitFor();
        await context.close();
      });

      it('a client with require_mfa: a user without a second factor sets the app up before the consent', async () => {
        const { client } = await server.client({
          name: 'Payroll',
          redirect_uris: [CLIENT_REDIRECT],
          scopes: ['read'],
          require_mfa: true,
        });
        const { user, password } = await server.user();
        const { context, page } = await clientContext(browser);
        const pkce = pkcePair();
        await page.goto(
          authorizeUrl(server, {
            response_type: 'code',
            client_id: client.id,
            redirect_uri: CLIENT_REDIRECT,
            scope: 'read',
            code_challenge: pkce.challenge,
            code_challenge_method: 'S256',
          }),
        );
        await signIn(page, user.username, password);
        const key = await setupKey(page);
        await page.getByText('Your account needs a second step at sign-in.').waitFor();
        assert.equal(await enterCode(page, appCode(key, server.clock.now())), 303);
        await expectConsentPage(page, 'Payroll');
        assert.deepEqual((await sessionAssurance(server, context))?.amr, ['pwd', 'otp', 'mfa']);
        await page.getByRole('button', { name: 'Allow' }).click();
        const landed = await landedAtClient(page);
        assert.match(landed.searchParams.get('code') ?? '', /^ac_/);
        await context.close();
      });

      it('a require_mfa device client: a password-only session signs in again on /device, and the app is set up before the consent', async () => {
        const { client } = await server.client({
          name: 'Payroll Terminal',
          public: true,
          grant_types: ['urn:ietf:params:oauth:grant-type:device_code'],
          scopes: ['read'],
          require_mfa: true,
        });
        const started = await server.http.request('/device_authorization', {
          form: { client_id: client.id, scope: 'read' },
        });
        assert.equal(started.status, 200, started.text);
        const { user_code: userCode } = started.json as { user_code: string };
        const { user, password } = await server.user();
        const { context, page } = await clientContext(browser);
        // Signed in with the password alone, for another purpose first.
        await page.goto(`${server.url}/sign-in?next=/account/apps`);
        await signIn(page, user.username, password);
        await page.getByRole('heading', { name: 'Connected apps' }).waitFor();
        assert.deepEqual((await sessionAssurance(server, context))?.amr, ['pwd']);

        await page.goto(`${server.url}/device`);
        await page.getByLabel('Code').fill(userCode);
        await page.getByRole('button', { name: 'Continue' }).click();
        // That session is not enough for this client: the sign-in page, then the app's set-up.
        await signIn(page, user.username, password);
        const key = await setupKey(page);
        assert.equal(await enterCode(page, appCode(key, server.clock.now())), 303);
        await expectConsentPage(page, 'Payroll Terminal');
        assert.deepEqual((await sessionAssurance(server, context))?.amr, ['pwd', 'otp', 'mfa']);
        await page.getByRole('button', { name: 'Allow' }).click();
        await page.getByRole('heading', { name: 'Device connected' }).waitFor();
        await context.close();
      });

      it('a sign-in with the password alone counts as none for a require_mfa client: prompt=none gets login_required, else the code is asked', async () => {
        const { client } = await server.client({
          name: 'Ledger',
          redirect_uris: [CLIENT_REDIRECT],
          scopes: ['openid', 'read'],
          require_mfa: true,
        });
        const { user, password } = await server.user();
        const key = await withApp(user);
        // Signed in with the password alone: the app was set up after this session began.
        const { context, page } = await clientContext(browser);
        const plain = await server.gatehouse.engine.browserSessions.start(user.id, {
          method: 'password',
          at: server.clock.now(),
        });
        await context.addCookies([{ name: BROWSER_COOKIE, value: plain, url: server.url, secure: true }]);
        const pkce = pkcePair();
        const params = {
          response_type: 'code',
          client_id: client.id,
          redirect_uri: CLIENT_REDIRECT,
          // OpenID Connect: prompt=none is its parameter (Core §3.1.2.1).
          scope: 'openid read',
          nonce: 'n1',
          code_challenge: pkce.challenge,
          code_challenge_method: 'S256',
          state: 's1',
        };
        await page.goto(authorizeUrl(server, { ...params, prompt: 'none' }));
        const refused = await landedAtClient(page);
        assert.equal(refused.searchParams.get('error'), 'login_required');
        await page.goto(authorizeUrl(server, params));
        await signIn(page, user.username, password);
        await page.getByRole('heading', { name: 'Enter a code' }).waitFor();
        server.clock.advance(30);
        assert.equal(await enterCode(page, appCode(key, server.clock.now())), 303);
        await expectConsentPage(page, 'Ledger');
        assert.equal((await sessionAssurance(server, context))?.acr, ACR_MULTI_FACTOR);
        await context.close();
      });
    });
  }

  it('the set-up, code and recovery-code pages fit a 375 px phone, every field labelled', async () => {
    const server = await startTestServer('sqlite', {}, { transport: 'https' });
    try {
      const { user, password } = await server.user();
      const { context, page } = await clientContext(browser, 375);
      const fits = async (name: string) => {
        const problems = await page.evaluate(() => {
          const found: string[] = [];
          if (document.documentElement.scrollWidth > window.innerWidth) found.push('scrolls sideways');
          for (const control of document.querySelectorAll<HTMLInputElement>('input:not([type=hidden])')) {
            if ((control.labels?.length ?? 0) === 0) found.push(`no label: ${control.name}`);
          }
          return found;
        });
        assert.deepEqual(problems, [], name);
        if (process.env.GATEHOUSE_SCREENSHOTS) {
          await page.screenshot({
            path: `${process.env.GATEHOUSE_SCREENSHOTS}/${name}-375.png`,
            fullPage: true,
          });
        }
      };
      await page.goto(`${server.url}/sign-in?next=/account/security`);
      await signIn(page, user.username, password);
      await page.getByRole('button', { name: 'Set up' }).click();
      const key = await setupKey(page);
      await fits('totp-set-up');
      assert.equal(await enterCode(page, appCode(key, server.clock.now())), 303);
      await page.getByRole('status').filter({ hasText: 'Authenticator app set up' }).waitFor();
      await fits('security');
      await page.getByRole('button', { name: 'Generate' }).click();
      await page.getByRole('heading', { name: 'Recovery codes' }).waitFor();
      await fits('recovery-codes');
      await signOut(page);
      await signIn(page, user.username, password);
      await page.getByRole('heading', { name: 'Enter a code' }).waitFor();
      assert.equal(await enterCode(page, '000000'), 401);
      await fits('second-factor');
      await context.close();
    } finally {
      await server.close();
    }
  });

  describe('GATEHOUSE_REQUIRE_MFA=all', () => {
    for (const backend of backends()) {
      it(`${backend}: a user without a second factor sets the app up right after the password`, async () => {
        const server = await startTestServer(backend, { requireMfa: 'all' }, { transport: 'https' });
        try {
          const { user, password } = await server.user();
          const { context, page } = await clientContext(browser);
          await page.goto(`${server.url}/sign-in`);
          await signIn(page, user.username, password);
          const key = await setupKey(page);
          assert.equal(await sessionAssurance(server, context), undefined);
          assert.equal(await enterCode(page, appCode(key, server.clock.now())), 303);
          await page.getByRole('heading', { name: 'Connected apps' }).waitFor();
          assert.equal((await sessionAssurance(server, context))?.acr, ACR_MULTI_FACTOR);
          await context.close();
        } finally {
          await server.close();
        }
      });
    }
  });
});
