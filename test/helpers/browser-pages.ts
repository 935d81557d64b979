import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { browserSkip, CHROMIUM, launchTestChromium, startStubSite } from './chromium.js';
import type { Backend } from './backends.js';
import type { TestServer } from './server.js';
import { freePort } from './spawned-server.js';

export { browserSkip, CHROMIUM };

/** The client's redirect target, served by the client stub (see launchChromium). */
export const CLIENT_ORIGIN = 'https://client.test';
export const CLIENT_REDIRECT = `${CLIENT_ORIGIN}/cb`;

/** The client application: a real HTTPS server that records what the browser asks of it. */
export interface ClientStub {
  port: number;
  /** Every path and query the browser requested, in order (fragments never reach a server). */
  readonly requests: string[];
  /** Every form the browser posted (a form_post response), with its path. */
  readonly posts: { path: string; form: URLSearchParams }[];
  close(): Promise<void>;
}

async function startClientStub(): Promise<ClientStub> {
  const site = await startStubSite('client');
  return {
    port: site.port,
    get requests() {
      return site.requests.map((request) => request.url);
    },
    get posts() {
      return site.requests.flatMap((request) =>
        request.form === undefined ? [] : [{ path: request.url, form: request.form }],
      );
    },
    close: () => site.close(),
  };
}

export interface TestBrowser {
  browser: Browser;
  client: ClientStub;
  close(): Promise<void>;
}

/**
 * Chromium, with client.test resolving to the client stub, and each of `hosts` to its local port
 * (say the issuer's host to the test server, for pages that must be opened at the issuer).
 */
export async function launchChromium(
  hosts: Record<string, number> = {},
  extraArgs: readonly string[] = [],
): Promise<TestBrowser> {
  const client = await startClientStub();
  const browser = await launchTestChromium({ 'client.test': client.port, ...hosts }, extraArgs);
  return {
    browser,
    client,
    async close() {
      await browser.close();
      await client.close();
    },
  };
}

/**
 * Chromium for a file that starts a server per store: each backend gets a free port and a host name
 * (`PREFIX-BACKEND.test`) that Chromium resolves to that port, so each server has an origin of its own
 * (its issuer, `https://HOST:PORT`) and cookies never cross between them.
 */
export async function launchChromiumPerBackend(
  prefix: string,
  backends: readonly Backend[],
): Promise<TestBrowser & { issuer(backend: Backend): string; port(backend: Backend): number }> {
  const ports = new Map<Backend, number>();
  for (const backend of backends) ports.set(backend, await freePort());
  const host = (backend: Backend) => `${prefix}-${backend}.test`;
  const chrome = await launchChromium(Object.fromEntries(backends.map((b) => [host(b), ports.get(b)!])));
  const port = (backend: Backend) => {
    const found = ports.get(backend);
    if (found === undefined) throw new Error(`no port for ${backend}`);
    return found;
  };
  return { ...chrome, port, issuer: (backend) => `https://${host(backend)}:${port(backend)}` };
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
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
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
