import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connect, type TLSSocket } from 'node:tls';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** The bounds under test, small so the test is short; the checks are relative to them. */
const REQUEST_TIMEOUT_S = 2;
/** Node checks the timeouts every second (CONNECTION_CHECK_MS); the rest is margin for a busy machine. */
const MARGIN_MS = 1000 + 3000;

function open(server: TestServer): Promise<TLSSocket> {
  const { hostname, port } = new URL(server.url.replace('localhost', '127.0.0.1'));
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), ca: server.ca, servername: 'localhost' });
    socket.once('secureConnect', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Milliseconds until the server closes `socket` (it is closed from this side after `boundMs`). */
function closedWithin(socket: TLSSocket, boundMs: number): Promise<number> {
  const started = performance.now();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(Infinity);
    }, boundMs);
    socket.on('error', () => undefined);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(performance.now() - started);
    });
    socket.resume();
  });
}

describe('slow clients and connection counts', () => {
  it('closes a connection whose headers trickle in within a second of the header timeout', async () => {
    const server = await startTestServer(
      'sqlite',
      { requestTimeoutSeconds: REQUEST_TIMEOUT_S },
      { transport: 'https' },
    );
    try {
      const socket = await open(server);
      socket.write('GET /healthz HTTP/1.1\r\nhost: localhost\r\n');
      // A header line now and then, never the blank line that ends them (slowloris).
      const drip = setInterval(() => socket.write(`x-drip: ${Date.now()}\r\n`), 300);
      const elapsed = await closedWithin(socket, REQUEST_TIMEOUT_S * 1000 + 30_000);
      clearInterval(drip);
      // Before the fix the check ran every 30 s: closed up to 30 s late.
      assert.ok(elapsed < REQUEST_TIMEOUT_S * 1000 + MARGIN_MS, `closed after ${Math.round(elapsed)} ms`);
    } finally {
      await server.close();
    }
  });

  it('closes a connection whose body never ends within a second of the request timeout', async () => {
    const server = await startTestServer(
      'sqlite',
      { requestTimeoutSeconds: REQUEST_TIMEOUT_S },
      { transport: 'https' },
    );
    try {
      const socket = await open(server);
      socket.write(
        'POST /token HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/x-www-form-urlencoded\r\n' +
          'content-length: 1000\r\n\r\ngrant_type=',
      );
      const drip = setInterval(() => socket.write('x'), 300);
      const elapsed = await closedWithin(socket, REQUEST_TIMEOUT_S * 1000 + 30_000);
      clearInterval(drip);
      assert.ok(elapsed < REQUEST_TIMEOUT_S * 1000 + MARGIN_MS, `closed after ${Math.round(elapsed)} ms`);
    } finally {
      await server.close();
    }
  });

  it('closes connections beyond maxConnections as they arrive, and serves again once one ends', async () => {
    const server = await startTestServer('sqlite', { maxConnections: 2 }, { transport: 'https' });
    const sockets: TLSSocket[] = [];
    try {
      // The test's own client keeps no connection open meanwhile.
      server.http.close();
      sockets.push(await open(server), await open(server));
      // The third is accepted by the kernel and closed by Node at once: no TLS handshake completes.
      const third = await open(server).then(
        (socket) => {
          sockets.push(socket);
          return 'served';
        },
        (error: NodeJS.ErrnoException) => String(error.code ?? error.message),
      );
      assert.match(third, /ECONNRESET|socket disconnected/);
      sockets.shift()?.destroy();
      // Once Node has counted the closed one out, a new connection is served.
      const { hostname, port } = new URL(server.url.replace('localhost', '127.0.0.1'));
      let served = false;
      for (let attempt = 0; attempt < 100 && !served; attempt++) {
        const socket = await open(server).catch(() => undefined);
        if (socket === undefined) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          continue;
        }
        socket.write(`GET /healthz HTTP/1.1\r\nhost: ${hostname}:${port}\r\nconnection: close\r\n\r\n`);
        const reply = await new Promise<string>((resolve) => {
          let text = '';
          socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
          socket.on('error', () => undefined);
          socket.once('close', () => resolve(text));
        });
        served = reply.startsWith('HTTP/1.1 200');
      }
      assert.ok(served, 'a connection within the cap is served');
    } finally {
      for (const socket of sockets) socket.destroy();
      await server.close();
    }
  });
});
