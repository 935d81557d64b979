import assert from 'node:assert/strict';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchTestChromium, startStubSite, type StubSite } from '../helpers/chromium.js';
import { RP_ORIGIN } from './addresses.js';
import {
  outcome,
  type AuthorizationOutcome,
  type BrowserOptions,
  type LogoutOutcome,
  type UserAgent,
  type UserPage,
} from './user-agent.js';

// Chromium as the user's browser: the pages rendered, their scripts run under their
// Content-Security-Policy, the response taken to the relying party as a browser takes it (the fragment
// kept across the redirect, the form_post page's form posted by its script).

/** The relying party's web server (https://rp.test): it records what the browser brings it. */
export type RpServer = StubSite;

export interface Chrome {
  browser: Browser;
  rp: RpServer;
  close(): Promise<void>;
}

/** Chromium, with rp.test resolving to the relying party's server. */
export async function launchChrome(): Promise<Chrome> {
  const rp = await startStubSite('relying party');
  const browser = await launchTestChromium({ [new URL(RP_ORIGIN).host]: rp.port });
  return {
    browser,
    rp,
    async close() {
      await browser.close();
      await rp.close();
    },
  };
}

/** A Chromium profile of its own (so its own Gatehouse cookies) with one tab. */
export class BrowserAgent implements UserAgent {
  private constructor(
    private readonly chrome: Chrome,
    readonly context: BrowserContext,
    readonly page: Page,
  ) {}

  static async open(chrome: Chrome): Promise<BrowserAgent> {
    const context = await chrome.browser.newContext({ ignoreHTTPSErrors: true });
    // Slow machines: every wait in the suite is for an event, bounded generously.
    context.setDefaultTimeout(60_000);
    return new BrowserAgent(chrome, context, await context.newPage());
  }

  /** Every step waits for the page itself, never for time. */
  async browse(url: string, options: BrowserOptions = {}): Promise<AuthorizationOutcome> {
    const { page } = this;
    const seen = this.chrome.rp.requests.length;
    const pages: UserPage[] = [];
    if (options.method === 'POST') await this.postFromRelyingParty(url);
    else await page.goto(url);
    const signInButton = page.getByRole('button', { name: 'Sign in', exact: true });
    const allowButton = page.getByRole('button', { name: 'Allow', exact: true });
    const continueButton = page.getByRole('button', { name: /^Continue as / });
    const atRp = page.getByText('relying party', { exact: true });
    const errorHeading = page.getByRole('heading', { name: 'This request cannot be completed' });
    for (let step = 0; step < 6; step++) {
      await signInButton.or(allowButton).or(continueButton).or(atRp).or(errorHeading).first().waitFor();
      if (await atRp.isVisible()) break;
      if (await errorHeading.isVisible()) {
        assert.fail(`Gatehouse showed an error page: ${await page.locator('main').innerText()}`);
      }
      // Each answer is a form post; the next page is whatever the navigation it starts brings.
      const navigated = page.waitForEvent('framenavigated', (frame) => frame === page.mainFrame());
      if (await continueButton.isVisible()) {
        pages.push('choose-account');
        await continueButton.click();
      } else if (await allowButton.isVisible()) {
        pages.push('consent');
        await (
          options.consent === 'deny' ? page.getByRole('button', { name: 'Deny', exact: true }) : allowButton
        ).click();
      } else {
        pages.push('sign-in');
        assert.ok(options.user, 'a sign-in page came, and the test has no user to sign in as');
        options.onSignInPage?.({ username: await page.getByLabel('Username').inputValue() });
        await page.getByLabel('Username').fill(options.user.user.username);
        await page.getByLabel('Password').fill(options.user.password);
        await signInButton.click();
      }
      await navigated;
      await page.waitForLoadState();
    }
    await atRp.waitFor();
    const callback = this.chrome.rp.requests.slice(seen).at(-1);
    assert.ok(callback, 'the relying party received the response');
    return outcome(pages, callback, new URL(page.url()));
  }

  async endSession(url: string): Promise<LogoutOutcome> {
    const { page } = this;
    const seen = this.chrome.rp.requests.length;
    await page.goto(url);
    const signOut = page.locator('main').getByRole('button', { name: 'Sign out', exact: true });
    const signedOut = page.getByRole('heading', { name: 'You are signed out' });
    const refused = page.getByRole('heading', { name: 'This sign-out request cannot be completed' });
    const atRp = page.getByText('relying party', { exact: true });
    await signOut.or(signedOut).or(refused).or(atRp).first().waitFor();
    let confirmed = false;
    if (await signOut.isVisible()) {
      assert.match(await page.getByRole('heading', { level: 1 }).innerText(), /^Sign out of /);
      confirmed = true;
      await signOut.click();
      await signedOut.or(atRp).first().waitFor();
    }
    const returned = this.chrome.rp.requests.slice(seen).at(-1);
    const heading = (await atRp.isVisible())
      ? undefined
      : await page.getByRole('heading', { level: 1 }).innerText();
    return { confirmed, returned, heading };
  }

  /** The relying party's page posts the request, as a browser form would; the sign-in page comes. */
  private async postFromRelyingParty(url: string): Promise<void> {
    const { page } = this;
    await page.goto(`${RP_ORIGIN}/start`);
    const target = new URL(url);
    await page.evaluate(
      ({ action, fields }) => {
        const form = document.createElement('form');
        form.method = 'post';
        form.action = action;
        for (const [name, value] of fields) {
          const input = document.createElement('input');
          input.type = 'hidden';
          input.name = name;
          input.value = value;
          form.append(input);
        }
        document.body.append(form);
        form.submit();
      },
      { action: target.origin + target.pathname, fields: [...target.searchParams] },
    );
    await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
  }

  close(): Promise<void> {
    return this.context.close();
  }
}
