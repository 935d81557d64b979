import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { sha256 } from '../../src/shared/crypto.js';
import { lockoutKey } from '../../src/core/users/account-lockout.js';
import { BROWSER_COOKIE } from '../../src/http/ui/browser-context.js';
import { RECENT_SIGN_IN_SECONDS } from '../../src/http/ui/security/recent-sign-in.js';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { browserSkip, launchChromium, signIn, type TestBrowser } from '../helpers/browser-pages.js';

// Set GATEHOUSE_SCREENSHOTS=<dir> to keep a screenshot of the security page at each width.
const SCREENSHOTS = process.env.GATEHOUSE_SCREENSHOTS;

const FIREFOX_ON_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0';
const SAFARI_ON_IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) ' +
  'Version/18.1 Mobile/15E148 Safari/604.1';
const NEW_PASSWORD = 'a brand new password';

/** Problems a person would meet: sideways scrolling, unlabelled controls, unnamed buttons (as layout.test.ts). */
async function layoutProblems(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const problems: string[] = [];
    if (document.documentElement.scrollWidth > window.innerWidth) {
      problems.push(`scrolls sideways: ${document.documentElement.scrollWidth} > ${window.innerWidth}`);
    }
    for (const control of document.querySelectorAll<HTMLInputElement>('input:not([type=hidden])')) {
      if ((control.labels?.length ?? 0) === 0) problems.push(`no label: ${control.outerHTML.slice(0, 80)}`);
    }
    for (const button of document.querySelectorAll('button')) {
      if ((button.textContent ?? '').trim() === '')
        problems.push(`unnamed button: ${button.outerHTML.slice(0, 80)}`);
    }
    const ids = [...document.querySelectorAll('[id]')].map((element) => element.id);
    const repeated = ids.filter((id, index) => ids.indexOf(id) !== index);
    if (repeated.length > 0) problems.push(`repeated ids: ${repeated.join(', ')}`);
    for (const element of document.querySelectorAll('[aria-describedby], [aria-labelledby]')) {
      for (const attribute of ['aria-describedby', 'aria-labelledby']) {
        for (const id of (element.getAttribute(attribute) ?? '').split(/\s+/).filter(Boolean)) {
          if (document.getElementById(id) === null) problems.push(`${attribute} names no element: ${id}`);
        }
      }
    }
    return problems;
  });
}

for (const backend of backends()) {
  describe(`the account's security page in Chromium (${backend}, decision 37)`, { skip: browserSkip }, () => {
    let browser: TestBrowser;
    let server: TestServer;
    const contexts: BrowserContext[] = [];

    before(async () => {
      browser = await launchChromium();
      server = await startTestServer(backend, {}, { transport: 'https' });
    });
    after(async () => {
      for (const context of contexts) await context.close();
      await server?.close();
      await browser?.close();
    });

    /** A browser of its own (its own cookies), as `userAgent`, 1280 px wide unless said. */
    async function device(userAgent?: string, width = 1280): Promise<Page> {
      const context = await browser.browser.newContext({
        ignoreHTTPSErrors: true,
        viewport: { width, height: 900 },
        ...(userAgent === undefined ? {} : { userAgent }),
      });
      contexts.push(context);
      return context.newPage();
    }

    async function signedIn(page: Page, username: string, password: string): Promise<void> {
      await page.goto(`${server.url}/sign-in?next=/account/security`);
      await signIn(page, username, password);
      await page.getByRole('heading', { name: 'Security', level: 1 }).waitFor();
    }

    /** Whether the page's browser is still signed in: the security page, or the sign-in form. */
    async function stillSignedIn(page: Page): Promise<boolean> {
      await page.goto(`${server.url}/account/security`);
      await page.getByRole('heading', { level: 1 }).waitFor();
      return new URL(page.url()).pathname === '/account/security';
    }

    /** The stored session behind a page's cookie. */
    async function storedSession(page: Page) {
      const cookie = (await page.context().cookies()).find((c) => c.name === BROWSER_COOKIE);
      assert.ok(cookie !== undefined);
      return server.store.storage.browserSessions.get(sha256(cookie.value), server.clock.now());
    }

    it('lists this browser and the others with device, address and times; "Sign out" ends another', async () => {
      const { user, password } = await server.user();
      const here = await device();
      const laptop = await device(FIREFOX_ON_WINDOWS);
      const phone = await device(SAFARI_ON_IPHONE);
      await signedIn(laptop, user.username, password);
      await signedIn(phone, user.username, password);
      await signedIn(here, user.username, password);

      const sessions = here.getByRole('region', { name: 'Sessions' });
      await sessions.getByRole('heading', { name: 'Chrome on Linux (this browser)' }).waitFor();
      const laptopItem = sessions.getByRole('listitem').filter({ hasText: 'Firefox on Windows' });
      assert.equal(await laptopItem.count(), 1);
      assert.match(await laptopItem.innerText(), /Address\s+127\.0\.0\.1/);
      assert.match(await laptopItem.innerText(), /Last active\s+\d{4}-\d\d-\d\d \d\d:\d\d UTC/);
      assert.equal(await sessions.getByRole('listitem').filter({ hasText: 'Safari on iPhone' }).count(), 1);
      // "Sign out" for each other session, none for this browser (the page's own "Sign out" is in the header).
      assert.equal(await sessions.getByRole('button', { name: 'Sign out', exact: true }).count(), 2);

      await laptopItem.getByRole('button', { name: 'Sign out' }).click();
      await here.getByRole('status').filter({ hasText: 'Signed out of that session.' }).waitFor();
      assert.equal(await sessions.getByRole('listitem').filter({ hasText: 'Firefox on Windows' }).count(), 0);
      assert.equal(await stillSignedIn(laptop), false, 'the other browser is signed out');
      assert.equal(await stillSignedIn(phone), true);
      assert.equal(await stillSignedIn(here), true);
    });

    it('a session id of another user’s session is refused and ends nothing', async () => {
      const { user: mallory, password: malloryPassword } = await server.user();
      const { user: alice, password: alicePassword } = await server.user();
      const attacker = await device();
      const victim = await device();
      await signedIn(attacker, mallory.username, malloryPassword);
      await signedIn(victim, alice.username, alicePassword);
      const victimSid = (await storedSession(victim))?.sid;
      assert.ok(victimSid !== undefined);
      // The attacker's own form, its session field changed to the victim's sid.
      await attacker.goto(`${server.url}/account/security`);
      const csrf = await attacker.locator('input[name=csrf_token]').first().inputValue();
      const answer = await attacker.request.post(`${server.url}/account/security/sessions/sign-out`, {
        form: { csrf_token: csrf, session: victimSid },
        maxRedirects: 0,
      });
      assert.equal(answer.status(), 303);
      assert.equal(answer.headers().location, '/account/security', 'answered as a session already ended');
      assert.equal(await stillSignedIn(victim), true, 'the victim stays signed in');
    });

    it('"Sign out everywhere else" ends every other session', async () => {
      const { user, password } = await server.user();
      const here = await device();
      const others = [await device(FIREFOX_ON_WINDOWS), await device(SAFARI_ON_IPHONE)];
      for (const page of others) await signedIn(page, user.username, password);
      await signedIn(here, user.username, password);
      await here.getByRole('button', { name: 'Sign out everywhere else' }).click();
      await here.getByRole('status').filter({ hasText: 'Signed out of 2 other sessions.' }).waitFor();
      const sessions = here.getByRole('region', { name: 'Sessions' });
      assert.equal(await sessions.getByRole('listitem').count(), 1);
      await sessions.getByText('You are not signed in anywhere else.').waitFor();
      for (const page of others) assert.equal(await stillSignedIn(page), false);
    });

    it("asks to confirm it's you when the sign-in is older than a few minutes, then does the change", async () => {
      const { user, password } = await server.user();
      const here = await device();
      const other = await device(FIREFOX_ON_WINDOWS);
      await signedIn(other, user.username, password);
      await signedIn(here, user.username, password);
      const before = await storedSession(here);
      server.clock.advance(RECENT_SIGN_IN_SECONDS + 1);

      await here.getByRole('button', { name: 'Sign out everywhere else' }).click();
      await here.getByRole('heading', { name: "Confirm it's you" }).waitFor();
      assert.equal(await stillSignedIn(other), true, 'nothing was ended before the confirmation');
      await here.goBack();
      await here.getByRole('button', { name: 'Sign out everywhere else' }).click();
      await here.getByRole('heading', { name: "Confirm it's you" }).waitFor();
      const username = here.getByLabel('Username');
      assert.equal(await username.inputValue(), user.username);
      assert.equal(await username.getAttribute('readonly'), '', 'the user name is the signed-in one');
      assert.deepEqual(await layoutProblems(here), []);

      await here.getByLabel('Password').fill('not the password');
      await here.getByRole('button', { name: 'Confirm' }).click();
      await here.getByRole('alert').filter({ hasText: 'Wrong password.' }).waitFor();
      assert.equal(await here.getByLabel('Password').getAttribute('aria-invalid'), 'true');
      await here.getByLabel('Password').fill(password);
      await here.getByRole('button', { name: 'Confirm' }).click();
      await here.getByRole('heading', { name: 'Security', level: 1 }).waitFor();

      // The same session (sid, creation), its record grown by the password just given: auth_time moved.
      const after = await storedSession(here);
      assert.equal(after?.sid, before?.sid);
      assert.equal(after?.createdAt, before?.createdAt);
      assert.deepEqual(
        after?.authentications?.map((entry) => entry.at),
        [before?.createdAt, server.clock.now()],
      );
      await here.getByRole('button', { name: 'Sign out everywhere else' }).click();
      await here.getByRole('status').filter({ hasText: 'Signed out of 1 other session.' }).waitFor();
      assert.equal(await stillSignedIn(other), false);
    });

    it('Change password: a wrong current one is a field error counted by the lockout; the right one signs out the rest', async () => {
      const { user, password } = await server.user();
      const here = await device();
      const other = await device(SAFARI_ON_IPHONE);
      await signedIn(other, user.username, password);
      await signedIn(here, user.username, password);
      const form = here.getByRole('region', { name: 'Password' });

      await form.getByLabel('Current password').fill('not the password');
      await form.getByLabel('New password').fill(NEW_PASSWORD);
      await form.getByRole('button', { name: 'Change password' }).click();
      await here.getByRole('alert').filter({ hasText: 'The current password is wrong.' }).waitFor();
      const current = here.getByLabel('Current password');
      assert.equal(await current.getAttribute('aria-invalid'), 'true');
      await here.waitForFunction(() => document.activeElement?.id === 'current-password');
      const count = await server.store.storage.throttle.peek(
        lockoutKey(user.username, '127.0.0.1'),
        server.clock.now(),
      );
      assert.equal(count.count, 1, 'the wrong password counts toward the sign-in lockout');

      await current.fill(password);
      await here.getByLabel('New password').fill(NEW_PASSWORD);
      await here.getByRole('button', { name: 'Change password' }).click();
      await here
        .getByRole('status')
        .filter({ hasText: 'Password changed. You were signed out everywhere else' })
        .waitFor();
      assert.equal(await stillSignedIn(here), true, 'this browser stays signed in');
      assert.equal(await stillSignedIn(other), false, 'the other browser is signed out');
      await other.goto(`${server.url}/sign-in`);
      await signIn(other, user.username, password);
      await other.getByRole('alert').filter({ hasText: 'Wrong user name or password.' }).waitFor();
      await signIn(other, user.username, NEW_PASSWORD);
      await other.waitForURL((url) => url.pathname === '/account/apps');
    });

    it('a disabled user is refused at sign-in, and their browsers are signed out', async () => {
      const { user, password } = await server.user();
      const page = await device();
      await signedIn(page, user.username, password);
      await server.gatehouse.engine.users.update(user, { disabled: true });
      assert.equal(await stillSignedIn(page), false);
      await signIn(page, user.username, password);
      await page.getByRole('heading', { name: 'Account disabled' }).waitFor();
      assert.equal(await stillSignedIn(page), false);
    });

    it('fits 375 px and 1280 px, with labelled controls', async () => {
      const { user, password } = await server.user('grace.hopper');
      await signedIn(await device(SAFARI_ON_IPHONE), user.username, password);
      if (SCREENSHOTS) mkdirSync(SCREENSHOTS, { recursive: true });
      for (const width of [375, 1280]) {
        const page = await device(undefined, width);
        await signedIn(page, user.username, password);
        assert.deepEqual(await layoutProblems(page), [], `security page at ${width}px`);
        if (SCREENSHOTS) {
          await page.screenshot({ path: join(SCREENSHOTS, `account-security-${width}.png`), fullPage: true });
        }
        await page.goto(`${server.url}/sign-in?reauth=1&next=/account/security`);
        await page.getByRole('heading', { name: "Confirm it's you" }).waitFor();
        assert.deepEqual(await layoutProblems(page), [], `confirmation page at ${width}px`);
        if (SCREENSHOTS) {
          await page.screenshot({ path: join(SCREENSHOTS, `confirm-its-you-${width}.png`), fullPage: true });
        }
      }
    });
  });
}
