import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { backends } from '../helpers/backends.js';
import { browserSkip, launchChromiumPerBackend, signIn } from '../helpers/browser-pages.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { pageProblems } from '../helpers/admin-console.js';

// Decision 42: the admin console, as an operator uses it. Screenshots of each page go to SHOTS.
const SHOTS = mkdtempSync(join(tmpdir(), 'gatehouse-admin-console-'));

describe('the admin console in Chromium (decision 42)', { skip: browserSkip }, () => {
  let chrome: Awaited<ReturnType<typeof launchChromiumPerBackend>>;

  before(async () => {
    chrome = await launchChromiumPerBackend('admin', backends());
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
        const port = chrome.port(backend);
        issuer = chrome.issuer(backend);
        server = await startTestServer(backend, { port, issuer }, { transport: 'https' });
      });
      after(async () => {
        for (const context of contexts) await context.close();
        await server?.close();
      });

      async function browserPage(width = 1280): Promise<Page> {
        const context = await chrome.browser.newContext({
          ignoreHTTPSErrors: true,
          viewport: { width, height: 900 },
        });
        contexts.push(context);
        return context.newPage();
      }

      async function shot(page: Page, name: string): Promise<void> {
        await page.screenshot({ path: join(SHOTS, `${backend}-${name}.png`), fullPage: true });
      }

      async function administrator(): Promise<{ id: string; username: string; password: string }> {
        const { user, password } = await server.user();
        await server.gatehouse.engine.users.update(user, { admin: true });
        return { id: user.id, username: user.username, password };
      }

      it('an administrator signs in, creates a client whose secret works at /token, and rotates a key seen at /jwks', async () => {
        const admin = await administrator();
        const page = await browserPage();
        await page.goto(`${issuer}/admin`);
        await signIn(page, admin.username, admin.password);
        await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
        assert.equal(new URL(page.url()).pathname, '/admin');
        // No consent page for the console, and no second factor yet: the standing prompt.
        assert.match(await page.getByRole('note').innerText(), /no second factor/);
        assert.match(await page.locator('main').innerText(), /Active signing key/);
        assert.deepEqual(await pageProblems(page), []);
        await shot(page, 'dashboard');

        // Clients: "New client", the form, "Create", the secret shown once.
        await page
          .getByRole('navigation', { name: 'Admin console' })
          .getByRole('link', { name: 'Clients' })
          .click();
        await page.getByRole('heading', { name: 'Clients', level: 1 }).waitFor();
        await shot(page, 'clients');
        await page.getByRole('link', { name: 'New client' }).click();
        await page.getByLabel('Name').fill('Billing service');
        await page.getByLabel('Redirect URIs').fill('not a uri');
        await page.getByLabel('Scopes').fill('billing:read');
        await page.getByLabel(/Client credentials/).check();
        assert.deepEqual(await pageProblems(page), []);
        await page.getByRole('button', { name: 'Create' }).click();
        // The API's problem, in plain words, next to the field it names; the form keeps what was typed.
        const uris = page.getByLabel('Redirect URIs');
        await page.locator('#field-redirect_uris-error').waitFor();
        assert.equal(await uris.getAttribute('aria-invalid'), 'true');
        assert.match(await page.locator('#field-redirect_uris-error').innerText(), /^[A-Z].*\.$/);
        assert.equal(await page.getByLabel('Name').inputValue(), 'Billing service');
        await shot(page, 'client-error');
        await uris.fill('https://billing.example/cb');
        await page.getByRole('button', { name: 'Create' }).click();
        await page.getByRole('heading', { name: 'Billing service', level: 1 }).waitFor();
        const clientId = await page.locator('#client-id').innerText();
        const secret = await page.locator('#client-secret').innerText();
        assert.ok(secret.length > 20);
        await shot(page, 'client-created');
        const token = await page.request.post(`${server.url}/token`, {
          form: { grant_type: 'client_credentials', scope: 'billing:read' },
          headers: { authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}` },
        });
        assert.equal(token.status(), 200, await token.text());
        assert.equal(typeof ((await token.json()) as { access_token?: unknown }).access_token, 'string');
        // Search by name finds it, server-side.
        await page.goto(`${issuer}/admin/clients?name=${encodeURIComponent('Billing service')}`);
        assert.equal(await page.getByRole('row').filter({ hasText: clientId }).count(), 1);

        // A form without the CSRF token changes nothing.
        const forged = await page.request.post(`${server.url}/admin/clients/${clientId}/delete`, {
          form: {},
          maxRedirects: 0,
        });
        assert.equal(forged.status(), 403);
        assert.ok((await server.gatehouse.engine.clients.get(clientId)) !== undefined);

        // Signing keys: rotate, and the new kid is at /jwks.
        await page
          .getByRole('navigation', { name: 'Admin console' })
          .getByRole('link', { name: 'Signing keys' })
          .click();
        await page.getByRole('heading', { name: 'Signing keys', level: 1 }).waitFor();
        // The key ring keeps an active key per algorithm; a rotation makes new ones.
        const kidsOf = async (status: string) =>
          (await page.getByRole('row').filter({ hasText: status }).locator('code').allInnerTexts()).map(
            (kid) => kid.trim(),
          );
        const before = await kidsOf('active');
        await page.getByRole('button', { name: 'Rotate signing key' }).click();
        await page.getByRole('status').filter({ hasText: 'A new signing key is active.' }).waitFor();
        const rotated = (await kidsOf('active')).filter((kid) => !before.includes(kid));
        assert.ok(rotated.length >= 1, 'a new active key');
        const jwks = (await (await page.request.get(`${server.url}/jwks`)).json()) as {
          keys: { kid: string }[];
        };
        assert.ok(
          rotated.every((kid) => jwks.keys.some((key) => key.kid === kid)),
          'the new kid is published',
        );
        await shot(page, 'signing-keys');
        // Revoke the old one, after a warning of what it breaks.
        const [retired] = await kidsOf('retired');
        assert.ok(retired !== undefined && before.includes(retired), 'the replaced key is retired');
        await page
          .getByRole('row')
          .filter({ hasText: retired })
          .getByRole('link', { name: /Revoke/ })
          .click();
        assert.match(await page.locator('main').innerText(), /every token it signed\s+is refused/);
        await shot(page, 'revoke-key');
        await page.getByRole('button', { name: 'Revoke key' }).click();
        await page.getByRole('status').filter({ hasText: 'The key was revoked.' }).waitFor();
        const after = (await (await page.request.get(`${server.url}/jwks`)).json()) as {
          keys: { kid: string }[];
        };
        assert.ok(!after.keys.some((key) => key.kid === retired), 'the revoked kid left /jwks');

        // Users: search, and the audit log's seam.
        await page.goto(`${issuer}/admin/users?username=${encodeURIComponent(admin.username)}`);
        assert.equal(await page.getByRole('row').filter({ hasText: admin.username }).count(), 1);
        assert.deepEqual(await pageProblems(page), []);
        await shot(page, 'users');
        await page.getByRole('link', { name: admin.username }).click();
        await page.getByRole('heading', { name: admin.username, level: 1 }).waitFor();
        await shot(page, 'user');
        await page
          .getByRole('navigation', { name: 'Admin console' })
          .getByRole('link', { name: 'Audit log' })
          .click();
        await page.getByRole('heading', { name: 'Audit log', level: 1 }).waitFor();
        // Decision 41: each change made in the console is in the log, by this administrator, from the
        // browser's address (the console's in-process /v1 calls carry it).
        const eventRow = (type: string, what: string) =>
          page.getByRole('row').filter({ hasText: type }).filter({ hasText: what });
        const by = `user ${admin.id}`;
        assert.equal(await eventRow('client.created', clientId).filter({ hasText: by }).count(), 1);
        assert.equal(await eventRow('signing-key.rotated', by).count(), 1);
        assert.equal(await eventRow('signing-key.revoked', by).count(), 1);
        assert.ok((await eventRow('client.created', '127.0.0.1').count()) === 1, 'the browser’s address');
        await page.getByLabel('Event type').fill('client.created');
        await page.getByRole('button', { name: 'Filter' }).click();
        await page.getByRole('heading', { name: 'Audit log', level: 1 }).waitFor();
        assert.equal(await page.getByRole('row').filter({ hasText: 'signing-key.' }).count(), 0);
        await shot(page, 'audit');
      });

      it('delete asks first; at 375 px every page fits, and every field has a label', async () => {
        const admin = await administrator();
        const page = await browserPage(375);
        await page.goto(`${issuer}/admin/clients/new`);
        await signIn(page, admin.username, admin.password);
        await page.getByRole('heading', { name: 'New client', level: 1 }).waitFor();
        assert.deepEqual(await pageProblems(page), []);
        await page.getByLabel('Name').fill('Short-lived');
        await page.getByRole('button', { name: 'Create' }).click();
        await page.getByRole('heading', { name: 'Short-lived', level: 1 }).waitFor();
        const clientId = await page.locator('#client-id').innerText();
        assert.deepEqual(await pageProblems(page), []);
        await page.getByRole('link', { name: 'Delete…' }).click();
        await page.getByRole('heading', { name: 'Delete Short-lived?', level: 1 }).waitFor();
        assert.ok(
          (await server.gatehouse.engine.clients.get(clientId)) !== undefined,
          'not deleted before the confirmation',
        );
        await shot(page, 'delete-client-375');
        await page.getByRole('button', { name: 'Delete client' }).click();
        await page.getByRole('status').filter({ hasText: 'The client was deleted.' }).waitFor();
        assert.equal(await server.gatehouse.engine.clients.get(clientId), undefined);
        for (const path of [
          '/admin',
          '/admin/clients',
          '/admin/users',
          '/admin/signing-keys',
          '/admin/audit',
        ]) {
          await page.goto(`${issuer}${path}`);
          await page.getByRole('heading', { level: 1 }).waitFor();
          assert.deepEqual(await pageProblems(page), [], path);
        }
      });

      it('a user who is no administrator gets the 403 page and no management access', async () => {
        const { user, password } = await server.user();
        const page = await browserPage();
        await page.goto(`${issuer}/admin/clients`);
        await signIn(page, user.username, password);
        await page.getByRole('heading', { name: 'Not an administrator', level: 1 }).waitFor();
        assert.match(await page.locator('main').innerText(), /Your account is not an administrator\./);
        await shot(page, 'not-admin');
        const again = await page.goto(`${issuer}/admin/users`);
        assert.equal(again?.status(), 403);
        assert.doesNotMatch(
          await page.locator('main').innerText(),
          new RegExp(user.username + '.*Administrator'),
        );
      });
    });
  }
});
