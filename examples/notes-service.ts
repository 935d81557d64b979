/**
 * An example resource server: a tiny notes API protected by access tokens from Gatehouse.
 *
 *   GET  /notes        scope notes:read   the caller's notes
 *   POST /notes        scope notes:write  add a note: {"text": "..."}
 *   GET  /health       no token
 *
 * Tokens are validated locally against Gatehouse's JWKS and, when RS_CLIENT_ID/RS_CLIENT_SECRET are
 * set, confirmed by introspection (revocation seen at once; MAC tokens work too when that client has
 * the scope mac-keys). See examples/README.md for a walk-through.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { pathToFileURL } from 'node:url';
import express from 'express';
// The library is its own package, gatehouse-oauth-resource-server (installed from its tarball until it is
// on the npm registry: README, Installing); in this repository, an npm workspace under packages/resource-server.
import type { ResourceServerOptions } from 'gatehouse-oauth-resource-server';
import { expressResourceServer } from 'gatehouse-oauth-resource-server/express';

export interface NotesServiceOptions {
  resourceServer: ResourceServerOptions;
}

export function createNotesService(options: NotesServiceOptions): { server: Server; close(): void } {
  const tokens = expressResourceServer(options.resourceServer);
  const notes = new Map<string, string[]>();
  const app = express();
  app.disable('x-powered-by');
  // RFC 6750 §2.2: a token may come in a form body, so parse forms before the middleware runs.
  app.use(express.urlencoded({ extended: false, limit: '16kb' }));
  app.use(express.json({ limit: '16kb' }));

  app.get('/health', (_req, res) => {
    res.json({ status: 'ok' });
  });

  app.get('/notes', tokens.requireToken(['notes:read']), (req, res) => {
    const token = res.locals.accessToken as { subject: string; scopes: string[] };
    res.json({ owner: token.subject, notes: notes.get(token.subject) ?? [] });
  });

  app.post('/notes', tokens.requireToken(['notes:write']), (req, res) => {
    const token = res.locals.accessToken as { subject: string };
    const text = (req.body as { text?: unknown } | undefined)?.text;
    if (typeof text !== 'string' || text.length === 0 || text.length > 1000) {
      res.status(400).json({ error: 'text must be 1 to 1000 characters' });
      return;
    }
    const list = notes.get(token.subject) ?? [];
    list.push(text);
    notes.set(token.subject, list);
    res.status(201).json({ owner: token.subject, notes: list });
  });

  const server = createServer(app);
  return {
    server,
    close() {
      tokens.close();
      server.close();
    },
  };
}

/** `node dist/examples/notes-service.js`, configured by the environment. */
function main(): void {
  const env = process.env;
  const issuer = env.GATEHOUSE_ISSUER ?? 'https://localhost:8443';
  const caFile = env.GATEHOUSE_CA_FILE;
  const port = Number(env.PORT ?? 3000);
  const { server } = createNotesService({
    resourceServer: {
      issuer,
      realm: 'notes',
      // MAC signatures cover the host and port clients address: this service's public origin.
      mac: { origin: env.RS_ORIGIN ?? `http://127.0.0.1:${port}` },
      ...(caFile ? { ca: readFileSync(caFile, 'utf8') } : {}),
      ...(env.RS_CLIENT_ID && env.RS_CLIENT_SECRET
        ? { introspection: { clientId: env.RS_CLIENT_ID, clientSecret: env.RS_CLIENT_SECRET } }
        : {}),
    },
  });
  server.listen(port, '127.0.0.1', () => {
    console.log(`notes service on http://127.0.0.1:${port}, trusting tokens from ${issuer}`);
  });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) main();
