import { existsSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { loadTls } from '../../src/compose/dev-certificate.js';

export const CHROMIUM = process.env.GATEHOUSE_CHROMIUM ?? '/usr/bin/chromium';

/** False when Chromium is missing: the suite is then skipped with this reason (scripts/run-tests.js says so too). */
export const browserSkip: string | false = existsSync(CHROMIUM)
  ? false
  : `Chromium not found at ${CHROMIUM}: apt-get install chromium to run the browser tests`;

/** A request the browser made of a stub site. */
export interface SiteRequest {
  method: string;
  /** Path and query, as the browser sent them (a fragment never reaches a server). */
  url: string;
  contentType: string | undefined;
  /** The urlencoded body of a POST (a form_post response). */
  form: URLSearchParams | undefined;
}

/** A client's or relying party's web site: a real HTTPS server that records what the browser asks. */
export interface StubSite {
  port: number;
  /** Every request but the browser's own favicon fetches, in order. */
  requests: SiteRequest[];
  close(): Promise<void>;
}

/** Starts a stub site on a free loopback port, answering every request with a small page titled `title`. */
export async function startStubSite(title: string): Promise<StubSite> {
  const tls = await loadTls({ dataDir: mkdtempSync(join(tmpdir(), 'gatehouse-site-')) });
  const requests: SiteRequest[] = [];
  const server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url !== '/favicon.ico') {
        requests.push({
          method: req.method ?? 'GET',
          url: req.url ?? '',
          contentType: req.headers['content-type'],
          form:
            req.method === 'POST' ? new URLSearchParams(Buffer.concat(chunks).toString('utf8')) : undefined,
        });
      }
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><title>${title}</title><p>${title}</p>`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : 0,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Chromium as the tests run it, with each host name of `hosts` resolving to 127.0.0.1 at its port, and
 * `extraArgs` after the usual ones (a test that needs a certificate trusted, say).
 */
export function launchTestChromium(
  hosts: Record<string, number>,
  extraArgs: readonly string[] = [],
): Promise<Browser> {
  const rules = Object.entries(hosts)
    .map(([host, port]) => `MAP ${host} 127.0.0.1:${port}`)
    .join(', ');
  return chromium.launch({
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
      `--host-resolver-rules=${rules}`,
      ...extraArgs,
    ],
  });
}
