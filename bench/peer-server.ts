/**
 * The peer every figure is compared with (a target in docs/benchmarks.md): a bare Fastify HTTPS route answering POST /token
 * with a fixed token-shaped JSON, on the same certificate and keep-alive defaults as Gatehouse.
 * Usage: node peer-server.js --port N --cert FILE --key FILE
 */
import Fastify from 'fastify';
import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { registerPeerRoute } from './lib/peer-route.js';

const { values } = parseArgs({
  options: { port: { type: 'string' }, cert: { type: 'string' }, key: { type: 'string' } },
});
if (!values.port || !values.cert || !values.key) {
  process.stderr.write('usage: peer-server --port N --cert FILE --key FILE\n');
  process.exit(2);
}

/** A real ES256 JWT of the same shape and size as Gatehouse's, signed once at start-up. */
function tokenShapedBody(): string {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const now = Math.floor(Date.now() / 1000);
  const header = { alg: 'ES256', typ: 'at+jwt', kid: 'x'.repeat(43) };
  const claims = {
    iss: `https://localhost:${values.port}`,
    sub: randomUUID(),
    aud: `https://localhost:${values.port}`,
    client_id: randomUUID(),
    scope: '',
    iat: now,
    exp: now + 3600,
    jti: randomUUID(),
  };
  const input = [header, claims].map((part) => Buffer.from(JSON.stringify(part)).toString('base64url'));
  const signingInput = input.join('.');
  const signature = sign('sha256', Buffer.from(signingInput), { key: privateKey, dsaEncoding: 'ieee-p1363' });
  return JSON.stringify({
    access_token: `${signingInput}.${signature.toString('base64url')}`,
    token_type: 'bearer',
    expires_in: 3600,
  });
}

const body = tokenShapedBody();
const app = Fastify({
  https: { cert: readFileSync(values.cert, 'utf8'), key: readFileSync(values.key, 'utf8') },
  logger: false,
});
await registerPeerRoute(app, body);
app.get('/healthz', async () => ({ status: 'ok' }));
await app.listen({ port: Number(values.port), host: '127.0.0.1' });
process.stdout.write(`peer listening on https://127.0.0.1:${values.port}\n`);
const stop = () => {
  app.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
