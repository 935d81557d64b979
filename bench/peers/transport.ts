import type { RequestListener } from 'node:http';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { parseArgs } from 'node:util';

/**
 * The timing Fastify 5 gives a server by default (its `keepAliveTimeout`, `requestTimeout`,
 * `connectionTimeout` and `maxRequestsPerSocket` options), which bench/peer-server.ts and Gatehouse
 * run with. A peer on plain node:https gets the same, so no row differs by its keep-alive settings
 * (node's own default keep-alive is 5 s).
 */
export const FASTIFY_KEEP_ALIVE: Pick<
  Server,
  'keepAliveTimeout' | 'requestTimeout' | 'timeout' | 'maxRequestsPerSocket'
> = {
  keepAliveTimeout: 72_000,
  requestTimeout: 0,
  timeout: 0,
  maxRequestsPerSocket: 0,
};

/** What every peer is started with: where to listen, the bench's certificate, its one client. */
export interface PeerArguments {
  port: string;
  cert: string;
  key: string;
  clientId: string;
  clientSecret: string;
}

/** `--port N --cert FILE --key FILE --client-id ID --client-secret SECRET`, or exit 2 with the usage. */
export function peerArguments(name: string): PeerArguments {
  const { values } = parseArgs({
    options: {
      port: { type: 'string' },
      cert: { type: 'string' },
      key: { type: 'string' },
      'client-id': { type: 'string' },
      'client-secret': { type: 'string' },
    },
  });
  const { port, cert, key } = values;
  const clientId = values['client-id'];
  const clientSecret = values['client-secret'];
  if (!port || !cert || !key || !clientId || !clientSecret) {
    process.stderr.write(
      `usage: ${name} --port N --cert FILE --key FILE --client-id ID --client-secret SECRET\n`,
    );
    process.exit(2);
  }
  return { port, cert, key, clientId, clientSecret };
}

/**
 * Serves `handler` over node:https with the bench's certificate and Fastify's keep-alive timing on
 * 127.0.0.1, and closes gracefully on SIGTERM or SIGINT (the bench stops every peer with SIGTERM).
 */
export function servePeer(name: string, args: PeerArguments, handler: RequestListener): void {
  const server = createServer(
    { cert: readFileSync(args.cert, 'utf8'), key: readFileSync(args.key, 'utf8') },
    handler,
  );
  Object.assign(server, FASTIFY_KEEP_ALIVE);
  server.listen(Number(args.port), '127.0.0.1', () => {
    process.stdout.write(`${name} peer listening on https://127.0.0.1:${args.port}\n`);
  });
  const stop = () => {
    server.close(() => process.exit(0));
    server.closeIdleConnections();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
