import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTls } from '../../src/compose/dev-certificate.js';

/**
 * What a path of the key server answers: a JSON document, raw bytes, a bare status (a redirect, an
 * error), or nothing ever. `headers` are added to the answer's (Cache-Control, Location, …).
 */
export type KeyServerAnswer =
  | { json: unknown; headers?: Record<string, string> }
  | { bytes: Buffer; headers?: Record<string, string> }
  | { status: number; headers?: Record<string, string> }
  | 'never';

/**
 * An HTTPS server on 127.0.0.1 standing in for a client's jwks_uri host (RFC 7591 §2): each path
 * answers what the test put there, and every request is recorded and announced ('request' events on
 * `events`), so a test waits for a fetch instead of for time. Its certificate (localhost, 127.0.0.1)
 * is `ca`: give it to the Gatehouse under test as GatehouseOptions.outboundCa.
 */
export interface KeyServer {
  origin: string;
  /** https://127.0.0.1:PORT + path */
  url(path: string): string;
  ca: string;
  answers: Map<string, KeyServerAnswer>;
  /** Paths requested so far, in order. */
  requests: string[];
  /** Resolves at the next request for `path` (or at once if one came since `after` requests). */
  requested(path: string, after?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startKeyServer(): Promise<KeyServer> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-keys-'));
  const tls = await loadTls({ dataDir: dir });
  const answers = new Map<string, KeyServerAnswer>();
  const requests: string[] = [];
  const waiting: Array<{ path: string; resolve: () => void }> = [];
  const server: Server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const path = req.url ?? '/';
    requests.push(path);
    for (const waiter of waiting.splice(0)) {
      if (waiter.path === path) waiter.resolve();
      else waiting.push(waiter);
    }
    const answer = answers.get(path);
    if (answer === 'never') return; // holds the connection open until the client gives up
    if (answer === undefined) {
      res.writeHead(404).end();
      return;
    }
    if ('status' in answer) {
      res.writeHead(answer.status, answer.headers ?? {}).end();
      return;
    }
    const body = 'json' in answer ? Buffer.from(JSON.stringify(answer.json)) : answer.bytes;
    res.writeHead(200, { 'content-type': 'application/jwk-set+json', ...answer.headers }).end(body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const origin = `https://127.0.0.1:${port}`;
  return {
    origin,
    url: (path) => `${origin}${path}`,
    ca: tls.cert,
    answers,
    requests,
    requested(path, after = requests.length) {
      if (requests.slice(after).includes(path)) return Promise.resolve();
      return new Promise((resolve) => waiting.push({ path, resolve }));
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
