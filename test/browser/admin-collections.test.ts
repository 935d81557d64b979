import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { sha256 } from '../../src/shared/crypto.js';
import { pageProblems } from '../helpers/admin-console.js';
import { backends } from '../helpers/backends.js';
import { browserSkip, launchChromium, signIn, type TestBrowser } from '../helpers/browser-pages.js';
import { testCertificate } from '../helpers/dev-certificate.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { freePort } from '../helpers/spawned-server.js';

// Issue 30 point 2 (decision 42): the console's scopes, resources, identity providers and registrations,
// as an operator uses them. Screenshots of each page go to SHOTS.
const SHOTS = mkdtempSync(join(tmpdir(), 'gatehouse-admin-collections-'));
const UPSTREAM_SECRET = 'upstream-client-secret-never-shown-5e1f';

/** What Tab reaches, in order, with whether each shows a focus indicator (WCAG 2.2 2.4.7, 2.4.11). */
interface Stop {
  text: string;
  tag: string;
  /** Its place among the page's focusable elements in document order; -1: not among them. */
  index: number;
  inMain: boolean;
  top: number;
  left: number;
  outline: string;
}

/** Tabs from the top of the page through its first `limit` controls (all of them when fewer). */
async function tabThrough(page: Page, limit: number): Promise<{ stops: Stop[]; focusable: number }> {
  const focusable = await page.evaluate(
    () =>
      document.querySelectorAll(
        'a[href], button, input:not([type=hidden]), select, textarea, [tabindex]:not([tabindex="-1"])',
      ).length,
  );
  const count = Math.min(limit, focusable);
  // From the top of the document, as a person arriving at the page.
  await page.evaluate(() => {
    (document.activeElement as HTMLElement | null)?.blur();
    window.scrollTo(0, 0);
  });
  const stops: Stop[] = [];
  for (let i = 0; i < count; i++) {
    await page.keyboard.press('Tab');
    stops.push(
      await page.evaluate(() => {
        const focusable = [
          ...document.querySelectorAll<HTMLElement>(
            'a[href], button, input:not([type=hidden]), select, textarea, [tabindex]:not([tabindex="-1"])',
          ),
        ].filter((element) => !element.hasAttribute('disabled'));
        const element = document.activeElement as HTMLElement;
        const box = element.getBoundingClientRect();
        const style = getComputedStyle(element);
        return {
          text: (element.innerText || element.getAttribute('name') || element.id || '').trim().slice(0, 40),
          tag: element.tagName.toLowerCase(),
          index: focusable.indexOf(element),
          inMain: element.closest('main') !== null,
          top: box.top + window.scrollY,
          left: box.left + window.scrollX,
          outline:
            style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2
              ? `${style.outlineWidth} ${style.outlineStyle} ${style.outlineColor}`
              : '',
        };
      }),
    );
  }
  return { stops, focusable };
}

describe('the admin console’s collections in Chromium (issue 30 point 2)', { skip: browserSkip }, () => {
  let chrome: TestBrowser;
  before(async () => {
    chrome = await launchChromium();
  });
  after(async () => {
    await chrome?.close();
  });

  for (const backend of backends()) {
    describe(backend, () => {
      let server: TestServer;
      let issuer: string;
      const contexts: BrowserContext[] = [];

      before(async () => {
        // The server is its own upstream OpenID Provider: discovery reads its own metadata, over HTTPS
        // with this process's development certificate (which covers localhost).
        const port = await freePort();
        issuer = `https://localhost:${port}`;
        server = await startTestServer(
          backend,
          { port, issuer, dynamicRegistration: 'token' },
          { transport: 'https', outboundCa: (await testCertificate()).cert },
        );
      });
      after(async () => {
        for (const context of contexts) await context.close();
        await server?.close();
      });

      async function browserPage(width: number): Promise<Page> {
        const context = await chrome.browser.newContext({
          ignoreHTTPSErrors: true,
          viewport: { width, height: 900 },
        });
        contexts.push(context);
        return context.newPage();
      }
      const shot = (page: Page, name: string) =>
        page.screenshot({ path: join(SHOTS, `${backend}-${name}.png`), fullPage: true });
      const nav = (page: Page, name: string) =>
        page
          .getByRole('navigation', { name: 'Admin console' })
          .getByRole('link', { name, exact: true })
          .click();
      async function checked(page: Page, heading: string, name: string): Promise<void> {
        await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
        assert.deepEqual(await pageProblems(page), [], name);
        await shot(page, name);
      }

      it('an operator manages scopes, resources, an identity provider and registrations, from a keyboard too', async () => {
        const { user, password } = await server.user();
        await server.gatehouse.engine.users.update(user, { admin: true });
        const page = await browserPage(1280);
        await page.goto(`${issuer}/admin/scopes`);
        await signIn(page, user.username, password);
        await checked(page, 'Scopes', 'scopes');

        // The keyboard: "Skip to content" first, then the navigation, then the page's controls in the
        // order they are seen, each with a visible focus indicator.
        const { stops, focusable } = await tabThrough(page, 100);
        assert.equal(stops.length, focusable, 'every control is reached');
        assert.equal(stops[0]?.text, 'Skip to content');
        const navigation = stops.slice(1).findIndex((stop) => stop.text === 'Dashboard');
        assert.ok(
          navigation >= 0 && navigation <= 1,
          `the navigation next: ${JSON.stringify(stops.slice(0, 4))}`,
        );
        assert.ok(focusable > 20);
        for (const [i, stop] of stops.entries()) {
          assert.ok(stop.index >= 0, `stop ${i} is a control: ${JSON.stringify(stop)}`);
          assert.notEqual(stop.outline, '', `stop ${i} (${stop.tag} “${stop.text}”) shows its focus`);
          if (i > 0) assert.equal(stop.index, stops[i - 1]!.index + 1, `stop ${i} follows the page's order`);
        }
        const inMain = stops.filter((stop) => stop.inMain);
        // The standing prompt (no second factor yet) comes first in main, then the page's own controls.
        assert.deepEqual(
          inMain.slice(0, 4).map((stop) => stop.text),
          ['Add a second factor', 'search', 'Search', 'New scope'],
        );
        for (const [i, stop] of inMain.entries()) {
          const previous = inMain[i - 1];
          if (previous === undefined) continue;
          // Down the page, or along the same line: never back up.
          assert.ok(
            stop.top > previous.top + 4 ||
              (Math.abs(stop.top - previous.top) <= 24 && stop.left > previous.left),
            `visual order: ${JSON.stringify(previous)} then ${JSON.stringify(stop)}`,
          );
        }

        // Scopes: created from the list page's form, then described on its own page.
        await page.getByRole('link', { name: 'New scope' }).click();
        await page.getByLabel('Name', { exact: true }).fill('ledger:read');
        await page.getByLabel('Description').fill('Read your ledger');
        await page.getByRole('button', { name: 'Create' }).click();
        await checked(page, 'ledger:read', 'scope');
        await page.getByRole('status').filter({ hasText: 'The scope was created.' }).waitFor();
        await page.getByLabel('Description').fill('See your ledger');
        await page.getByRole('button', { name: 'Save' }).click();
        await page.getByRole('status').filter({ hasText: 'The scope was saved.' }).waitFor();
        assert.equal(
          (await server.gatehouse.engine.scopes.get('ledger:read'))?.description,
          'See your ledger',
        );
        // Searched on the server.
        await page.goto(`${issuer}/admin/scopes?search=LEDGER`);
        assert.equal(await page.getByRole('row').filter({ hasText: 'ledger:read' }).count(), 1);
        assert.equal(await page.getByRole('row').filter({ hasText: 'offline_access' }).count(), 0);

        // Resources: the URI is one percent-encoded path segment.
        await nav(page, 'Resources');
        await checked(page, 'Resources', 'resources');
        await page.getByLabel('URI', { exact: true }).fill('https://ledger.example/api');
        await page.getByLabel('Name', { exact: true }).fill('Ledger API');
        await page.getByLabel('Scopes').fill('ledger:read');
        await page.getByRole('button', { name: 'Create' }).click();
        await checked(page, 'Ledger API', 'resource');
        assert.equal(
          new URL(page.url()).pathname,
          `/admin/resources/${encodeURIComponent('https://ledger.example/api')}`,
        );
        assert.equal(await page.locator('#resource-uri').innerText(), 'https://ledger.example/api');

        // Identity providers: a failed discovery in plain words next to the issuer, then the server's own
        // issuer, discovered; the redirect URI to register shown first, the secret never.
        await nav(page, 'Identity providers');
        await checked(page, 'Identity providers', 'identity-providers');
        await page.getByLabel('Name', { exact: true }).fill('Self');
        await page.getByLabel('Issuer').fill('https://localhost:1');
        await page.getByLabel('Client ID').fill('gatehouse-at-self');
        await page.getByLabel('Client secret').fill(UPSTREAM_SECRET);
        await page.getByRole('button', { name: 'Create' }).click();
        const issuerError = page.locator('#field-issuer-error');
        await issuerError.waitFor();
        assert.match(
          await issuerError.innerText(),
          /^Gatehouse could not use the provider’s settings at https:\/\/localhost:1\/\.well-known\/openid-configuration: .+\. Check the issuer’s address, and that this server can reach it\.$/,
        );
        assert.equal(await page.getByLabel('Issuer').getAttribute('aria-invalid'), 'true');
        assert.equal(await page.getByLabel('Client secret').inputValue(), '', 'a secret is never sent back');
        assert.equal(await page.getByLabel('Name', { exact: true }).inputValue(), 'Self');
        await shot(page, 'identity-provider-error');
        await page.getByLabel('Issuer').fill(issuer);
        await page.getByLabel('Client secret').fill(UPSTREAM_SECRET);
        await page.getByRole('button', { name: 'Create' }).click();
        await checked(page, 'Self', 'identity-provider');
        assert.equal(await page.locator('#redirect-uri').innerText(), `${issuer}/sign-in/callback/self`);
        assert.match(await page.locator('#client-secret-state').innerText(), /Kept/);
        assert.ok(!(await page.content()).includes(UPSTREAM_SECRET));

        // An initial access token, shown once, registers a client (RFC 7591), seen under Registrations.
        await page.goto(`${issuer}/admin/registrations/tokens`);
        await checked(page, 'Initial access tokens', 'initial-access-tokens');
        await page.getByLabel('Expires in').selectOption({ label: '7 days' });
        await page.getByLabel('Scopes').fill('openid ledger:read');
        await page.getByRole('button', { name: 'Create token' }).click();
        const token = (await page.locator('#initial-access-token').innerText()).trim();
        assert.match(token, /^iat_/);
        await shot(page, 'initial-access-token-made');
        const registered = await page.request.post(`${issuer}/register`, {
          data: { redirect_uris: ['https://partner.example/cb'], client_name: 'Partner app' },
          headers: { authorization: `Bearer ${token}` },
        });
        assert.equal(registered.status(), 201, await registered.text());
        const clientId = ((await registered.json()) as { client_id: string }).client_id;
        await page.goto(`${issuer}/admin/registrations/tokens`);
        await page.getByRole('heading', { name: 'Initial access tokens', level: 1 }).waitFor();
        assert.ok(!(await page.content()).includes(token), 'shown once');
        assert.equal(await page.getByRole('row').filter({ hasText: '7 days' }).count(), 0);
        assert.match(await page.getByRole('row').nth(1).innerText(), /openid ledger:read\s+\S.*UTC\s+1\s*$/);
        await page.goto(`${issuer}/admin/registrations`);
        const row = page.getByRole('row').filter({ hasText: clientId });
        assert.match(await row.innerText(), /Partner app.*Initial access token/s);
        await shot(page, 'registrations');
        assert.equal(
          await row.getByRole('link', { name: 'Partner app', exact: true }).getAttribute('href'),
          `/admin/clients/${clientId}`,
        );

        // A delete asks first.
        await row.getByRole('link', { name: /Delete/ }).click();
        await checked(page, 'Delete Partner app?', 'delete-registration');
        assert.ok(
          (await server.gatehouse.engine.clients.get(clientId)) !== undefined,
          'not before the confirmation',
        );
        await page.getByRole('button', { name: 'Delete client' }).click();
        await page.getByRole('status').filter({ hasText: 'The client was deleted.' }).waitFor();
        assert.equal(await server.gatehouse.engine.clients.get(clientId), undefined);

        // Decision 41: what was made here is in the audit log, by this administrator; no secret, token or
        // its hash in any event.
        const events = await server.store.storage.auditEvents.list({ limit: 1000 });
        for (const type of [
          'scope.created',
          'resource.created',
          'identity-provider.created',
          'initial-access-token.created',
        ]) {
          assert.ok(
            events.some((event) => event.type === type && event.actor?.id === user.id),
            `${type} by the administrator`,
          );
        }
        const stored = JSON.stringify(events);
        for (const secret of [UPSTREAM_SECRET, token, sha256(token)]) assert.ok(!stored.includes(secret));

        // At 375 px every page fits, with labels, landmarks and one h1.
        const phone = await browserPage(375);
        await phone.goto(`${issuer}/admin/registrations/tokens`);
        await signIn(phone, user.username, password);
        await checked(phone, 'Initial access tokens', 'initial-access-tokens-375');
        for (const [path, heading, name] of [
          ['/admin/scopes', 'Scopes', 'scopes-375'],
          ['/admin/resources', 'Resources', 'resources-375'],
          [
            `/admin/resources/${encodeURIComponent('https://ledger.example/api')}`,
            'Ledger API',
            'resource-375',
          ],
          ['/admin/identity-providers', 'Identity providers', 'identity-providers-375'],
          ['/admin/identity-providers/self', 'Self', 'identity-provider-375'],
          ['/admin/registrations', 'Registrations', 'registrations-375'],
        ] as const) {
          await phone.goto(`${issuer}${path}`);
          await checked(phone, heading, name);
        }
        // The keyboard at 375 px too: skip link, then the navigation, each focus shown.
        const narrow = await tabThrough(phone, 4);
        assert.equal(narrow.stops[0]?.text, 'Skip to content');
        assert.ok(
          narrow.stops.every((stop) => stop.outline !== ''),
          JSON.stringify(narrow.stops),
        );
      });
    });
  }
});
