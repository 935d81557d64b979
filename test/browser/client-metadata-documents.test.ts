import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { pageProblems } from '../helpers/admin-console.js';
import { backends } from '../helpers/backends.js';
import {
  browserSkip,
  CLIENT_REDIRECT,
  landedAtClient,
  launchChromiumPerBackend,
  pkcePair,
  signIn,
} from '../helpers/browser-pages.js';
import { startKeyServer, type KeyServer } from '../helpers/key-server.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// Issue 31 point 2 (decision 46): what a person sees of a client described by a Client ID Metadata
// Document (draft-ietf-oauth-client-id-metadata-document): its host beside its claimed name, consent
// asked each time, refusals said on a page and never redirected, and the connected-apps page and the
// admin console showing it for what it is. The documents are served by a real HTTPS host.

const DEVICE_CODE = 'urn:ietf:params:oauth:grant-type:device_code';
/** Chromium's own report of a page answered with 400, which the error pages are meant to be. */
const BAD_REQUEST_REPORT = 'Failed to load resource: the server responded with a status of 400';

/** Console errors, script errors and CSP violations a page meets, from the moment it is watched. */
function watch(page: Page): { problems: string[]; violations(): Promise<string[]> } {
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  return {
    problems,
    // The violations of the page shown now (each document keeps its own, from the init script).
    violations: () => page.evaluate(() => (window as unknown as { violations?: string[] }).violations ?? []),
  };
}

describe(
  'Client ID Metadata Documents in Chromium (issue 31 point 2, decision 46)',
  { skip: browserSkip },
  () => {
    let chrome: Awaited<ReturnType<typeof launchChromiumPerBackend>>;
    let keys: KeyServer;

    before(async () => {
      [chrome, keys] = await Promise.all([launchChromiumPerBackend('cimd', backends()), startKeyServer()]);
    });
    after(async () => {
      await chrome?.close();
      await keys?.close();
    });

    for (const backend of backends()) {
      describe(backend, () => {
        let server: TestServer;
        let issuer: string;
        let context: BrowserContext;
        let page: Page;
        let watched: ReturnType<typeof watch>;
        /** The key server's host, as the pages show it. */
        const host = () => new URL(keys.origin).host;
        const documentPath = (name: string) => `/${backend}/${name}.json`;
        /** Puts a document at `name` on the key server; returns its URL, the client's id. */
        const publish = (name: string, metadata: Record<string, unknown>): string => {
          const id = keys.url(documentPath(name));
          keys.answers.set(documentPath(name), { json: { client_id: id, ...metadata } });
          return id;
        };
        const authorize = (clientId: string, state: string) =>
          `${issuer}/authorize?${new URLSearchParams({
            response_type: 'code',
            client_id: clientId,
            redirect_uri: CLIENT_REDIRECT,
            scope: 'openid profile',
            state,
            code_challenge: pkcePair().challenge,
            code_challenge_method: 'S256',
          }).toString()}`;
        /** No console error, script error or CSP violation since the last check, but those `allowed`. */
        async function clean(label: string, allowed: readonly string[] = []): Promise<void> {
          assert.deepEqual(await watched.violations(), [], `${label}: CSP violations`);
          const problems = watched.problems.filter((problem) => !allowed.some((a) => problem.includes(a)));
          assert.deepEqual(problems, [], `${label}: console`);
          watched.problems.length = 0;
        }

        before(async () => {
          issuer = chrome.issuer(backend);
          server = await startTestServer(
            backend,
            {
              port: chrome.port(backend),
              issuer,
              clientIdMetadataDocuments: 'on',
              // The key server is on 127.0.0.1, which the outbound rules refuse unless told otherwise.
              allowPrivateClientMetadata: true,
            },
            { transport: 'https', outboundCa: keys.ca },
          );
          context = await chrome.browser.newContext({
            ignoreHTTPSErrors: true,
            viewport: { width: 1280, height: 900 },
          });
          await context.addInitScript(() => {
            document.addEventListener('securitypolicyviolation', (event) => {
              const w = window as unknown as { violations?: string[] };
              (w.violations ??= []).push(`${event.violatedDirective} ${event.blockedURI}`);
            });
          });
          page = await context.newPage();
          watched = watch(page);
        });
        after(async () => {
          await context?.close();
          await server?.close();
        });

        it('consent shows the name and the host, asks again each time; connected apps lists and revokes it; the console shows the document', async () => {
          const clientId = publish('notes', {
            client_name: 'Notes for MCP',
            redirect_uris: [CLIENT_REDIRECT],
            token_endpoint_auth_method: 'none',
            scope: 'openid profile',
          });
          const { user, password } = await server.user();
          await server.gatehouse.engine.users.update(user, { admin: true });
          const fetches = keys.requests.length;

          await page.goto(authorize(clientId, 'first'));
          await keys.requested(documentPath('notes'), fetches);
          // The sign-in page already says who asks, and from where.
          await page.getByText(`to continue to Notes for MCP from ${host()}`).waitFor();
          await clean('sign-in');
          await signIn(page, user.username, password);

          const heading = page.getByRole('heading', {
            level: 1,
            name: `Allow Notes for MCP from ${host()} to access your account?`,
          });
          await heading.waitFor();
          // The host stands apart from the claimed name: its own element, in another weight and colour.
          const hostPart = heading.locator('.client-host');
          assert.equal(await hostPart.innerText(), `from ${host()}`);
          const style = (selector: string) =>
            page.locator(selector).evaluate((element) => {
              const computed = getComputedStyle(element);
              return { weight: computed.fontWeight, color: computed.color };
            });
          const [name, from] = [await style('h1 .client'), await style('h1 .client-host')];
          assert.notEqual(name.weight, from.weight);
          assert.notEqual(name.color, from.color);
          await page
            .getByText(`This application describes itself in a document published at ${host()}`)
            .waitFor();
          await page.getByText('Its name is its own claim: nobody has checked it.').waitFor();
          // Nothing offers to remember the decision: the only boxes are the scopes'.
          assert.equal(await page.getByText(/remember/i).count(), 0);
          const boxes = await page
            .getByRole('checkbox')
            .evaluateAll((inputs) => inputs.map((input) => (input as HTMLInputElement).name));
          assert.ok(
            boxes.every((boxName) => boxName === 'scope'),
            JSON.stringify(boxes),
          );
          assert.equal(await page.title(), `Allow Notes for MCP from ${host()}? · Gatehouse`);
          await clean('consent');

          await page.getByRole('button', { name: 'Allow' }).click();
          const landed = await landedAtClient(page);
          assert.equal(landed.searchParams.get('state'), 'first');
          assert.ok(landed.searchParams.get('code'));
          await clean('allowed');

          // Asked again: the consent page, not a redirect, and the document was not fetched again (the
          // copy stands for its lifetime).
          const stubRequests = chrome.client.requests.length;
          const fetched = keys.requests.length;
          await page.goto(authorize(clientId, 'second'));
          await heading.waitFor();
          assert.equal(chrome.client.requests.length, stubRequests, 'nothing reached the client');
          assert.equal(keys.requests.length, fetched);
          await page.getByRole('button', { name: 'Allow' }).click();
          assert.equal((await landedAtClient(page)).searchParams.get('state'), 'second');

          // Connected apps: the name with its host; Revoke ends its access.
          await page.goto(`${issuer}/account/apps`);
          const app = page.getByRole('listitem').filter({
            has: page.getByRole('heading', { level: 2, name: `Notes for MCP from ${host()}` }),
          });
          await app.waitFor();
          await clean('connected apps');
          await app.getByRole('button', { name: 'Revoke' }).click();
          await page
            .getByRole('status')
            .filter({ hasText: `Access for Notes for MCP from ${host()} was revoked.` })
            .waitFor();
          await page.getByText('No application has access to your account.').waitFor();
          const live = (await server.store.storage.grants.listByUser(user.id)).filter(
            (grant) => grant.clientId === clientId && grant.revokedAt === null,
          );
          assert.deepEqual(live, []);
          await clean('revoked');

          // The console: listed among registrations as a Client ID Metadata Document, with its URL.
          await page.goto(`${issuer}/admin/registrations`);
          await page.getByRole('heading', { level: 1, name: 'Registrations' }).waitFor();
          const row = page.getByRole('row').filter({ hasText: 'Notes for MCP' });
          assert.match(await row.innerText(), /Client ID Metadata Document/);
          assert.match(await row.innerText(), new RegExp(`at ${clientId.replaceAll('.', '\\.')}`));
          assert.deepEqual(await pageProblems(page), [], 'registrations');
          await clean('console registrations');
          // Chosen by that way alone.
          await page.getByLabel('Registered').selectOption('document');
          await page.getByRole('button', { name: 'Show' }).click();
          await page.waitForURL((url) => url.searchParams.get('way') === 'document');
          assert.equal(await page.getByRole('row').filter({ hasText: 'Notes for MCP' }).count(), 1);

          // Its page: the document, when it was fetched and until when that stands; no edit form.
          await row.getByRole('link', { name: 'Notes for MCP', exact: true }).click();
          await page.getByRole('heading', { level: 1, name: 'Notes for MCP' }).waitFor();
          assert.equal(await page.locator('#client-document').innerText(), clientId);
          const stored = await server.store.storage.clients.get(clientId);
          assert.equal(stored?.registration, 'document');
          const facts = await page.locator('dl.facts').innerText();
          assert.match(facts, /Last fetched/);
          const until = new Date((stored?.documentExpiresAt ?? 0) * 1000).toISOString();
          assert.equal(
            await page.locator('dl.facts time').last().getAttribute('datetime'),
            until,
            'used until the stored expiry',
          );
          assert.match(
            facts,
            new RegExp(`${until.slice(0, 10)} ${until.slice(11, 16)} UTC, then fetched again`),
          );
          assert.equal(await page.getByRole('heading', { name: 'Edit' }).count(), 0);
          assert.equal(await page.getByRole('button', { name: 'Save' }).count(), 0);
          assert.equal(await page.getByRole('button', { name: 'Rotate secret' }).count(), 0);
          assert.equal(await page.getByRole('link', { name: 'Delete…' }).count(), 1);
          assert.deepEqual(await pageProblems(page), [], 'client page');
          await clean('console client');
        });

        it('a device client from a document: the sign-in, consent and done pages show its host', async () => {
          const clientId = publish('radio', {
            client_name: 'Kitchen Radio',
            grant_types: [DEVICE_CODE],
            token_endpoint_auth_method: 'none',
            scope: 'openid profile',
          });
          const started = await server.http.request('/device_authorization', {
            form: { client_id: clientId, scope: 'openid profile' },
          });
          assert.equal(started.status, 200, started.text);
          const { verification_uri_complete: complete } = started.json as {
            verification_uri_complete: string;
          };
          const { user, password } = await server.user();
          // A person new to this browser: signed out first.
          await context.clearCookies();
          await page.goto(complete);
          await page.getByRole('button', { name: 'Continue' }).click();
          await page.getByText(`to continue to Kitchen Radio from ${host()}`).waitFor();
          await signIn(page, user.username, password);
          await page
            .getByRole('heading', {
              level: 1,
              name: `Allow Kitchen Radio from ${host()} to access your account?`,
            })
            .waitFor();
          await page.getByText('If someone sent you this code or link, choose Deny.').waitFor();
          await clean('device consent');
          await page.getByRole('button', { name: 'Allow' }).click();
          await page.getByText(`You allowed Kitchen Radio from ${host()}.`).waitFor();
          await clean('device done');
        });

        it('a name that imitates the server’s, or a document that cannot be fetched, gets an error page saying why, never a redirect', async () => {
          const cases = [
            {
              id: publish('imitation', { client_name: 'Gatehouse', redirect_uris: [CLIENT_REDIRECT] }),
              why: 'client_name is, or looks like, the name of this server',
            },
            {
              // A Cyrillic е (U+0435) in place of the Latin e: the same to the eye (UTS #39).
              id: publish('confusable', { client_name: 'Gat\u0435house', redirect_uris: [CLIENT_REDIRECT] }),
              why: 'client_name is, or looks like, the name of this server',
            },
            // Nothing published there: the key server answers 404.
            { id: keys.url(documentPath('missing')), why: `could not be fetched: answered 404` },
          ];
          for (const { id, why } of cases) {
            const path = new URL(id).pathname;
            const fetches = keys.requests.length;
            const stubRequests = chrome.client.requests.length;
            const answer = await page.goto(authorize(id, 'refused'));
            await keys.requested(path, fetches);
            assert.equal(answer?.status(), 400, path);
            assert.equal(new URL(page.url()).origin, issuer, `${path}: no redirect`);
            await page.getByRole('heading', { level: 1, name: 'This request cannot be completed' }).waitFor();
            const text = await page.locator('main').innerText();
            assert.match(text, /The application's metadata document cannot be used/, path);
            assert.ok(text.includes(why), `${path}: ${text}`);
            assert.equal(chrome.client.requests.length, stubRequests, `${path}: nothing reached the client`);
            assert.equal(await server.store.storage.clients.get(id), undefined, `${path}: not stored`);
            await clean(path, [BAD_REQUEST_REPORT]);
          }
        });
      });
    }
  },
);
