import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { httpsRequest } from '../../bench/lib/https.js';
import {
  OAUTH2_SERVER_PEER,
  OIDC_PROVIDER_PEER,
  ServerProcess,
  freePort,
} from '../../bench/lib/processes.js';
import { clientCredentialsRequest } from '../../bench/lib/token-requests.js';
import { verifyTokenCheck } from '../../bench/lib/verify-token.js';
import { growthTarget, type Sample } from '../../bench/scenarios/leak.js';
import { loadTls } from '../../src/compose/dev-certificate.js';

const client = { id: 'bench-client', secret: 'a-client-secret-of-forty-three-characters-x' };

/**
 * The peers of `npm run bench` (issue 17) must answer the request the Gatehouse client_credentials rows
 * are measured with, and refuse a wrong secret: a peer that answered errors fast would win the race.
 */
describe('bench peers answer the client_credentials request', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-peers-'));
  let ca = '';
  const servers: ServerProcess[] = [];

  before(async () => {
    ca = (await loadTls({ dataDir: dir })).cert;
  });
  after(async () => {
    for (const server of servers) await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function start(label: string, script: string): Promise<ServerProcess> {
    const port = await freePort();
    const server = await ServerProcess.start({
      label,
      port,
      cpus: undefined,
      ca: () => ca,
      args: [
        script,
        '--port',
        String(port),
        '--cert',
        join(dir, 'tls', 'cert.pem'),
        '--key',
        join(dir, 'tls', 'key.pem'),
        '--client-id',
        client.id,
        '--client-secret',
        client.secret,
      ],
    });
    servers.push(server);
    return server;
  }

  const post = (server: ServerProcess, secret: string) => {
    const spec = clientCredentialsRequest({ id: client.id, secret });
    return httpsRequest(`${server.url}${spec.path}`, {
      ca,
      method: spec.method,
      headers: spec.headers,
      body: spec.body,
    });
  };

  it('@node-oauth/oauth2-server issues an opaque bearer token, and refuses a wrong secret', async () => {
    const server = await start('oauth2-server', OAUTH2_SERVER_PEER);
    const sent = performance.now();
    const ok = await post(server, client.secret);
    const tookSeconds = (performance.now() - sent) / 1000;
    assert.equal(ok.status, 200, ok.body);
    const body = JSON.parse(ok.body) as Record<string, unknown>;
    assert.match(String(body.access_token), /^[0-9a-f]{64}$/);
    assert.equal(body.token_type, 'Bearer');
    // A one-hour lifetime. The library answers the whole seconds left until the expiry it stored
    // (floor((expiresAt - now) / 1000)), so 3599 once a millisecond has passed between the two: at
    // most the request's own duration less than 3600.
    assert.equal(typeof body.expires_in, 'number');
    const expiresIn = body.expires_in as number;
    assert.ok(expiresIn <= 3600 && expiresIn >= 3600 - Math.ceil(tookSeconds), `expires_in ${expiresIn}`);
    const refused = await post(server, `${client.secret}x`);
    assert.equal(refused.status, 401, refused.body);
    assert.equal((JSON.parse(refused.body) as { error?: string }).error, 'invalid_client');
  });

  it('oidc-provider issues an ES256 JWT access token that verifies, and refuses a wrong secret', async () => {
    const server = await start('oidc-provider', OIDC_PROVIDER_PEER);
    const ok = await post(server, client.secret);
    assert.equal(ok.status, 200, ok.body);
    const check = await verifyTokenCheck({
      name: 'oidc-provider token',
      serverUrl: server.url,
      issuer: server.url.replace('127.0.0.1', 'localhost'),
      audience: 'https://api.bench.invalid/',
      ca,
      responseBody: ok.body,
      clientId: client.id,
    });
    assert.equal(check.pass, true, check.detail);
    assert.match(check.detail, /^ES256 /);
    const refused = await post(server, `${client.secret}x`);
    assert.equal(refused.status, 401, refused.body);
    assert.equal((JSON.parse(refused.body) as { error?: string }).error, 'invalid_client');
  });
});

describe('bench leak check judgement', () => {
  const samples = (heapMiB: number[]): Sample[] =>
    heapMiB.map((mib, i) => ({ second: 10 * (i + 1), rssBytes: NaN, heapUsedBytes: mib * 2 ** 20 }));
  const judge = (heapMiB: number[]) =>
    growthTarget('heap', samples(heapMiB), (s) => s.heapUsedBytes).judge({ rps: 1, cpuPerRequest: 1 });

  it('passes a flat series with noise', () => {
    const verdict = judge([40, 44, 41, 43, 40, 45, 42, 41, 44]);
    assert.equal(verdict.pass, true, verdict.measured);
    assert.notEqual(verdict.reported, true);
  });

  it('fails a series whose last third is more than 10% above its first', () => {
    const verdict = judge([40, 41, 40, 43, 44, 45, 46, 47, 48]);
    assert.equal(verdict.pass, false, verdict.measured);
  });

  it('does not judge fewer than three samples', () => {
    const verdict = judge([40, 80]);
    assert.equal(verdict.reported, true, verdict.measured);
  });
});
