import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { loadTls } from '../../src/compose/dev-certificate.js';
import type { TestServer } from '../helpers/server.js';

export const CHROMIUM = process.env.GATEHOUSE_CHROMIUM ?? '/usr/bin/chromium';

/** False when Chromium is missing: the suite is then skipped with this reason (scripts/run-tests.js says so too). */
export const browserSkip: string | false = existsSync(CHROMIUM)
  ? false
  : `Chromium not found at ${CHROMIUM}: apt-get install chromium to run the browser tests`;

/** The client's redirect target, served by the client stub (see launchChromium). */
export const CLIENT_ORIGIN = 'https://client.test';
export const CLIENT_REDIRECT = `${CLIENT_ORIGIN}/cb`;

/** The client application: a real HTTPS server that records what the browser asks of it. */
export interface ClientStub {
  port: number;
  /** Every path and query the browser requested, in order (fragments never reach a server). */
  requests: string[];
  /** Every form the browser posted (a form_post response), with its path. */
  posts: { path: string; form: URLSearchParams }[];
  close(): Promise<void>;
}

async function startClientStub(): Promise<ClientStub> {
  const tls = await loadTls({ dataDir: mkdtempSync(join(tmpdir(), 'gatehouse-client-')) });
  const requests: string[] = [];
  const posts: { path: string; form: URLSearchParams }[] = [];
  const server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    requests.push(req.url ?? '');
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method === 'POST') {
        posts.push({
          path: req.url ?? '',
          form: new URLSearchParams(Buffer.concat(chunks).toString('utf8')),
        });
      }
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>client</title><p>client app</p>');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : 0,
    requests,
    posts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface TestBrowser {
  browser: Browser;
  client: ClientStub;
  close(): Promise<void>;
}

/** Chromium, with client.test resolving to the client stub. */
export async function launchChromium(): Promise<TestBrowser> {
  const client = await startClientStub();
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    // Playwright gives up after 30 s by default, which a cold start on two busy cores can take; the
    // suite's set-up would fail and take every test with it.
    timeout: 120_000,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      `--host-resolver-rules=MAP client.test 127.0.0.1:${client.port}`,
    ],
  });
  return {
    browser,
    client,
    async close() {
      await browser.close();
      await client.close();
    },
  };
}

export interface ClientSite {
  context: BrowserContext;
  page: Page;
}

/** A fresh browser profile: its own cookies, nothing shared with other tests. */
export async function clientContext(chrome: TestBrowser, width = 1280): Promise<ClientSite> {
  const context = await chrome.browser.newContext({
    ignoreHTTPSErrors: true,
    viewport: { width, height: 900 },
  });
  const page = await context.newPage();
  return { context, page };
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export function authorizeUrl(server: TestServer, params: Record<string, string>): string {
  return `${server.url}/authorize?${new URLSearchParams(params).toString()}`;
}

export async function signIn(page: Page, username: string, password: string): Promise<void> {
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** Waits until the browser is back at the client and returns where it landed (fragment included). */
export async function landedAtClient(page: Page): Promise<URL> {
  await page.waitForURL((url) => url.origin === CLIENT_ORIGIN);
  return new URL(page.url());
}

export async function expectConsentPage(page: Page, clientName: string): Promise<void> {
  await page.getByRole('heading', { name: `Allow ${clientName} to access your account?` }).waitFor();
  assert.equal(await page.getByRole('button', { name: 'Allow' }).count(), 1);
}

export async function describeScopes(server: TestServer, scopes: Record<string, string>): Promise<void> {
  for (const [name, description] of Object.entries(scopes)) {
    await server.store.storage.scopes.upsert({ name, description, createdAt: server.clock.now() });
  }
}
