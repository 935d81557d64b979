import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  authorizeUrl,
  browserSkip,
  CLIENT_REDIRECT,
  clientContext,
  expectConsentPage,
  launchChromium,
  signIn,
  type TestBrowser,
} from '../helpers/browser-pages.js';

/**
 * The focused element: its id, aria-invalid, and the text of what describes it. The browser runs
 * `autofocus` at its next rendering update, after the load event `goto` waits for; on a busy machine
 * that comes later, so this waits until something other than the body holds the focus.
 */
async function focused(page: Page): Promise<{ id: string; invalid: string | null; description: string }> {
  await page.waitForFunction(
    () => document.activeElement !== null && document.activeElement !== document.body,
  );
  return page.evaluate(() => {
    const element = document.activeElement;
    const describedBy = element?.getAttribute('aria-describedby') ?? '';
    return {
      id: element?.id ?? '',
      invalid: element?.getAttribute('aria-invalid') ?? null,
      description: describedBy === '' ? '' : (document.getElementById(describedBy)?.textContent ?? ''),
    };
  });
}

describe('the field in error is marked and focused', { skip: browserSkip }, () => {
  let browser: TestBrowser;
  let server: TestServer;
  before(async () => {
    browser = await launchChromium();
    server = await startTestServer('sqlite', {}, { transport: 'https' });
  });
  after(async () => {
    await server?.close();
    await browser?.close();
  });

  it('sign-in with a wrong password: the password field', async () => {
    const { user } = await server.user();
    const { context, page } = await clientContext(browser);
    await page.goto(`${server.url}/sign-in`);
    assert.equal((await focused(page)).id, 'username', 'the user name has the focus at first');
    await signIn(page, user.username, 'not the password');
    await page.getByRole('alert').filter({ hasText: 'Wrong user name or password.' }).waitFor();
    assert.deepEqual(await focused(page), {
      id: 'password',
      invalid: 'true',
      description: 'Wrong user name or password.',
    });
    assert.equal(await page.getByLabel('Username').inputValue(), user.username);
    await context.close();
  });

  it('consent with nothing ticked: the first permission', async () => {
    const { client } = await server.client({
      name: 'Notes App',
      redirect_uris: [CLIENT_REDIRECT],
      scopes: ['read', 'write'],
    });
    const { user, password } = await server.user();
    const { context, page } = await clientContext(browser);
    await page.goto(
      authorizeUrl(server, { response_type: 'code', client_id: client.id, scope: 'read write' }),
    );
    await signIn(page, user.username, password);
    await expectConsentPage(page, 'Notes App');
    for (const box of await page.getByRole('checkbox').all()) await box.uncheck();
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.getByRole('alert').filter({ hasText: 'Tick at least one permission' }).waitFor();
    const state = await focused(page);
    assert.equal(state.id, 'scope-0');
    assert.equal(state.invalid, 'true');
    assert.match(state.description, /Tick at least one permission/);
    await context.close();
  });
});
