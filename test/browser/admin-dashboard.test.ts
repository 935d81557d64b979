import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext } from 'playwright-core';
import { backends } from '../helpers/backends.js';
import { browserSkip, launchChromiumPerBackend, signIn } from '../helpers/browser-pages.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { pageProblems } from '../helpers/admin-console.js';
import { clientCredentialsToken } from '../helpers/api-requests.js';

// Decision 43: the dashboard, as an operator looks at it. Screenshots go to SHOTS.
const SHOTS = mkdtempSync(join(tmpdir(), 'gatehouse-admin-dashboard-'));

describe('the admin dashboard in Chromium (decision 43)', { skip: browserSkip }, () => {
  let chrome: Awaited<ReturnType<typeof launchChromiumPerBackend>>;

  before(async () => {
    chrome = await launchChromiumPerBackend('dashboard', backends());
  });
  after(async () => {
    await chrome?.close();
  });

  for (const backend of backends()) {
    describe(backend, () => {
      let server: TestServer;
      let issuer: string;
      let context: BrowserContext | undefined;

      before(async () => {
        const port = chrome.port(backend);
        issuer = chrome.issuer(backend);
        server = await startTestServer(backend, { port, issuer }, { transport: 'https' });
      });
      after(async () => {
        await context?.close();
        await server?.close();
      });

      it('draws the last hour from same-origin files, keeps it current, and shows the state of things', async () => {
        const { user, password } = await server.user();
        await server.gatehouse.engine.users.update(user, { admin: true });
        // Figures to draw: token responses (the helper's own, and two more) and an invalid_client.
        const { credentials } = await clientCredentialsToken(server, ['admin']);
        const basic = (secret: string) =>
          `Basic ${Buffer.from(`${credentials.id}:${secret}`).toString('base64')}`;

        context = await chrome.browser.newContext({
          ignoreHTTPSErrors: true,
          viewport: { width: 1280, height: 900 },
        });
        const page = await context.newPage();
        // Every policy violation and script error the page meets (CSP reports are events in the page).
        const problems: string[] = [];
        const requests: string[] = [];
        page.on('console', (message) => {
          if (message.type() === 'error') problems.push(`console: ${message.text()}`);
        });
        page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
        page.on('request', (request) => requests.push(request.url()));
        await page.addInitScript(() => {
          document.addEventListener('securitypolicyviolation', (event) => {
            (window as unknown as { violations: string[] }).violations ??= [];
            (window as unknown as { violations: string[] }).violations.push(
              `${event.violatedDirective} ${event.blockedURI}`,
            );
          });
        });
        // The page's timers run on a clock the test moves: the refresh comes when asked, not 20 s later.
        await page.clock.install();

        for (const secret of [credentials.secret, credentials.secret, 'wrong']) {
          const res = await page.request.post(`${server.url}/token`, {
            form: { grant_type: 'client_credentials' },
            headers: { authorization: basic(secret) },
          });
          assert.equal(res.status(), secret === 'wrong' ? 401 : 200);
        }

        await page.goto(`${issuer}/admin`);
        // One failed sign-in, then the right password.
        const failed = page.waitForResponse((r) => r.request().method() === 'POST');
        await signIn(page, user.username, 'not the password');
        await (await failed).finished();
        await page.getByLabel('Password').waitFor();
        // The refused sign-in's answer is a 4xx, which Chromium reports on its console: watched from here.
        problems.length = 0;
        await signIn(page, user.username, password);
        await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();

        // The script ran: it set the figures' time, and uPlot drew a canvas in each chart.
        const root = page.locator('[data-dashboard]');
        await page.locator('[data-dashboard][data-updated]').waitFor({ state: 'attached' });
        const first = await root.getAttribute('data-updated');
        assert.equal(await page.locator('.chart canvas').count(), 5);
        for (const chart of ['tokens', 'sign-ins', 'errors', 'latency', 'sessions']) {
          assert.equal(await page.locator(`[data-chart="${chart}"] canvas`).count(), 1, chart);
        }
        // Each chart has its text alternative: a named image and a table of the same figures.
        assert.equal(await page.getByRole('img', { name: /^Token responses per minute/ }).count(), 1);
        const tokens = page.getByRole('table', { name: 'Token responses' });
        const lastHour = async (table: typeof tokens, row: string) =>
          Number(
            await table
              .getByRole('row', { name: new RegExp(`^${row}`) })
              .locator('td')
              .nth(2)
              .innerText(),
          );
        assert.equal(await lastHour(tokens, 'client_credentials'), 3);
        const signIns = page.getByRole('table', { name: 'Sign-ins' });
        assert.equal(await lastHour(signIns, 'Signed in'), 1);
        assert.equal(await lastHour(signIns, 'Failed'), 1);
        assert.equal(await lastHour(page.getByRole('table', { name: 'Errors' }), 'invalid_client'), 1);
        assert.notEqual(
          await page
            .getByRole('table', { name: 'Latency' })
            .getByRole('row', { name: /^p99/ })
            .locator('td')
            .first()
            .innerText(),
          '—',
        );

        // The state of things.
        assert.match(
          await page.locator('[data-state="signing-key"]').innerText(),
          /\((ES256|RS256|EdDSA)\), created .* old/,
        );
        assert.equal(
          await page.locator('[data-state="migrations"]').innerText(),
          'None: the store is current',
        );
        assert.match(
          await page.locator('[data-state="certificate"]').innerText(),
          /^Expires .* in \d+ (day|month)/,
        );
        assert.match(await page.locator('[data-state="purge-backlog"]').innerText(), /^None|\d/);

        // Only this origin was asked for anything, uPlot's files included, with long caching.
        assert.deepEqual(
          requests.filter((url) => new URL(url).origin !== new URL(issuer).origin),
          [],
        );
        const uplot = requests.find((url) => /\/admin\/assets\/uplot-1\.6\.32-[\w-]{12}$/.test(url));
        assert.ok(uplot !== undefined, requests.join('\n'));
        const asset = await page.request.get(`${server.url}${new URL(uplot).pathname}`);
        assert.match(asset.headers()['cache-control'] ?? '', /max-age=31536000, immutable/);
        assert.match(asset.headers()['content-type'] ?? '', /^text\/javascript/);
        // The admin pages' policy is the strict one: scripts from this origin only.
        const policy = (await page.request.get(`${server.url}/admin`, { maxRedirects: 0 })).headers()[
          'content-security-policy'
        ];
        assert.match(policy ?? '', /script-src 'self';/);
        assert.doesNotMatch(policy ?? '', /unsafe/);
        await page.screenshot({ path: join(SHOTS, `${backend}-dashboard-1280.png`), fullPage: true });

        // A token more and a minute later, the next refresh shows it without a reload.
        const more = await page.request.post(`${server.url}/token`, {
          form: { grant_type: 'client_credentials' },
          headers: { authorization: basic(credentials.secret) },
        });
        assert.equal(more.status(), 200);
        server.clock.advance(60);
        await page.clock.fastForward(20_000);
        await page.waitForFunction(
          (before) => document.querySelector('[data-dashboard]')?.getAttribute('data-updated') !== before,
          first,
        );
        assert.equal(await lastHour(tokens, 'client_credentials'), 4);

        // At 375 px: nothing scrolls sideways, and the charts are redrawn to the narrower column.
        await page.setViewportSize({ width: 375, height: 800 });
        await page.waitForFunction(() =>
          [...document.querySelectorAll('.chart canvas')].every(
            (canvas) => canvas.getBoundingClientRect().width <= 375,
          ),
        );
        assert.deepEqual(await pageProblems(page), []);
        await page.screenshot({ path: join(SHOTS, `${backend}-dashboard-375.png`), fullPage: true });

        const violations = await page.evaluate(
          () => (window as unknown as { violations?: string[] }).violations ?? [],
        );
        assert.deepEqual(violations, []);
        assert.deepEqual(problems, []);
        console.log(`screenshots: ${SHOTS}`);
      });
    });
  }
});
