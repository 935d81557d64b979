import assert from 'node:assert/strict';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { calculateJwkThumbprint, decodeJwt, decodeProtectedHeader, type JWK } from 'jose';
import { deriveServerKeys } from '../../src/compose/engine-policy.js';
import { KeyRing } from '../../src/core/keys/key-ring.js';
import {
  nodeFetch,
  ResourceServer,
  TokenError,
  type FetchLike,
  type ResourceServerOptions,
} from 'gatehouse-oauth-resource-server';
import { JwksCache } from '#resource-server-internals/jwks-cache.js';
import { apiClient, clientCredentialsToken, expectStatus } from '../helpers/api-requests.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { listen } from '../helpers/resource-server-requests.js';
import { waitFor } from '../helpers/wait.js';

const ISSUER = 'https://issuer.test';
const NOW = 1_800_000_000;

interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  jwk: JWK;
}

async function es256Key(): Promise<SigningKey> {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' }) as JWK;
  const kid = await calculateJwkThumbprint(jwk);
  return { kid, privateKey, jwk: { ...jwk, kid, alg: 'ES256', use: 'sig' } };
}

/** An RFC 9068 access token as Gatehouse signs it. */
function tokenFor(key: SigningKey, header: Record<string, unknown> = {}): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const claims = {
    iss: ISSUER,
    aud: ISSUER,
    sub: 'client-1',
    client_id: 'client-1',
    scope: 'read',
    iat: NOW,
    exp: NOW + 600,
    jti: 'j',
  };
  const input = `${encode({ alg: 'ES256', typ: 'at+jwt', kid: key.kid, ...header })}.${encode(claims)}`;
  const signature = sign('sha256', Buffer.from(input), { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}

/** A JWKS endpoint the test steers: which keys it serves, how it fails, how slowly it answers. */
class JwksEndpoint {
  keys: JWK[] = [];
  status = 200;
  body: string | undefined;
  delayMs = 0;
  requests = 0;
  url = '';
  private server: Server | undefined;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      this.requests += 1;
      setTimeout(() => {
        res.writeHead(this.status, { 'content-type': 'application/json' });
        res.end(this.body ?? JSON.stringify({ keys: this.keys }));
      }, this.delayMs);
    });
    this.url = `${await listen(this.server)}/jwks`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

describe('resource-server library: JWKS cache', () => {
  const endpoint = new JwksEndpoint();
  let keyA: SigningKey;
  let keyB: SigningKey;
  const libraries: ResourceServer[] = [];

  before(async () => {
    await endpoint.start();
    keyA = await es256Key();
    keyB = await es256Key();
  });
  after(async () => {
    for (const library of libraries) library.close();
    await endpoint.stop();
  });

  function library(extra: Partial<ResourceServerOptions> = {}): ResourceServer {
    endpoint.keys = [keyA.jwk];
    endpoint.status = 200;
    endpoint.body = undefined;
    endpoint.delayMs = 0;
    endpoint.requests = 0;
    const server = new ResourceServer({
      issuer: ISSUER,
      jwksUri: endpoint.url,
      now: () => NOW,
      verifiedTokenCacheSize: 0,
      jwksCooldownSeconds: 0.3,
      ...extra,
    });
    libraries.push(server);
    return server;
  }

  const authorize = (server: ResourceServer, token: string) =>
    server.authorize({
      method: 'GET',
      url: '/notes',
      host: 'api.test',
      protocol: 'https',
      authorization: `Bearer ${token}`,
    });

  async function refused(server: ResourceServer, token: string): Promise<void> {
    await assert.rejects(authorize(server, token), (error: unknown) => {
      assert.ok(error instanceof TokenError);
      assert.equal(error.code, 'invalid_token');
      return true;
    });
  }

  it('fetches the set on first use, once, and verifies from memory afterwards', async () => {
    const server = library();
    for (let i = 0; i < 5; i++) assert.equal((await authorize(server, tokenFor(keyA))).clientId, 'client-1');
    assert.equal(endpoint.requests, 1);
  });

  it('fetches again for a kid it has not seen (a rotation), then knows it', async () => {
    const server = library({ jwksCooldownSeconds: 0 });
    await authorize(server, tokenFor(keyA));
    endpoint.keys = [keyA.jwk, keyB.jwk];
    await authorize(server, tokenFor(keyB));
    assert.equal(endpoint.requests, 2);
    await authorize(server, tokenFor(keyB));
    await authorize(server, tokenFor(keyA));
    assert.equal(endpoint.requests, 2);
  });

  it('refetches for unknown kids at most once per cooldown', async () => {
    // A cooldown no test run outlasts: whatever the machine's speed, every request below is inside it.
    const server = library({ jwksCooldownSeconds: 3600 });
    await authorize(server, tokenFor(keyA));
    endpoint.keys = [keyA.jwk, keyB.jwk];
    // Within the cooldown of the first fetch: refused without asking, however many arrive.
    await refused(server, tokenFor(keyB));
    for (let i = 0; i < 10; i++) await refused(server, tokenFor(keyA, { kid: `forged-${i}` }));
    assert.equal(endpoint.requests, 1);
  });

  it('fetches again for an unknown kid once the cooldown has passed, then not until the next one', async () => {
    endpoint.keys = [keyA.jwk];
    endpoint.status = 200;
    endpoint.body = undefined;
    endpoint.requests = 0;
    let nowMs = 0;
    const { fetch, close } = nodeFetch();
    try {
      const cache = new JwksCache({ uri: endpoint.url, fetch, cooldownSeconds: 0.3, nowMs: () => nowMs });
      assert.equal((await cache.refreshForUnknownKey())?.size, 1);
      endpoint.keys = [keyA.jwk, keyB.jwk];
      nowMs += 299;
      assert.equal((await cache.refreshForUnknownKey())?.size, 1, 'inside the cooldown: not fetched');
      assert.equal(endpoint.requests, 1);
      nowMs += 1;
      assert.equal((await cache.refreshForUnknownKey())?.size, 2, 'the cooldown over: fetched');
      assert.equal(endpoint.requests, 2);
      nowMs += 299;
      await cache.refreshForUnknownKey();
      assert.equal(endpoint.requests, 2, 'inside the new cooldown');
    } finally {
      close();
    }
  });

  it('lets concurrent misses share one fetch', async () => {
    const server = library({ jwksCooldownSeconds: 0 });
    await authorize(server, tokenFor(keyA));
    endpoint.keys = [keyA.jwk, keyB.jwk];
    endpoint.delayMs = 100;
    const results = await Promise.all(Array.from({ length: 20 }, () => authorize(server, tokenFor(keyB))));
    assert.equal(results.length, 20);
    assert.equal(endpoint.requests, 2);
  });

  it('answers invalid_token when the set cannot be fetched, and tries again after the cooldown', async () => {
    for (const failure of [
      { status: 500, body: undefined },
      { status: 200, body: '{"keys":' },
      { status: 200, body: '{"keys":"none"}' },
      { status: 200, body: '[]' },
      { status: 302, body: '' },
    ]) {
      const server = library({ jwksCooldownSeconds: 3600 });
      Object.assign(endpoint, failure);
      await refused(server, tokenFor(keyA));
      await refused(server, tokenFor(keyA));
      assert.equal(endpoint.requests, 1, `one attempt per cooldown (${JSON.stringify(failure)})`);

      // The same failure met by a cache on a manual clock: tried again once the cooldown is over.
      endpoint.requests = 0;
      let nowMs = 0;
      const { fetch, close } = nodeFetch();
      try {
        const cache = new JwksCache({ uri: endpoint.url, fetch, cooldownSeconds: 0.2, nowMs: () => nowMs });
        assert.equal(await cache.refreshForUnknownKey(), undefined);
        Object.assign(endpoint, { status: 200, body: undefined });
        nowMs += 199;
        assert.equal(await cache.refreshForUnknownKey(), undefined, 'not asked again inside the cooldown');
        nowMs += 1;
        assert.equal(
          (await cache.refreshForUnknownKey())?.size,
          1,
          `recovered after ${JSON.stringify(failure)}`,
        );
        assert.equal(endpoint.requests, 2);
      } finally {
        close();
      }
    }
  });

  it('answers invalid_token when the endpoint cannot be reached', async () => {
    const closed = new JwksEndpoint();
    await closed.start();
    await closed.stop();
    const server = library({ jwksUri: closed.url });
    await refused(server, tokenFor(keyA));
  });

  it('keeps the keys it has when a refetch fails', async () => {
    const server = library({ jwksCooldownSeconds: 0 });
    await authorize(server, tokenFor(keyA));
    endpoint.status = 503;
    await refused(server, tokenFor(keyB));
    assert.equal(endpoint.requests, 2);
    assert.equal((await authorize(server, tokenFor(keyA))).clientId, 'client-1');
  });

  it('never fetches for a token refused before its key is looked up', async () => {
    const server = library({ jwksCooldownSeconds: 0 });
    await authorize(server, tokenFor(keyA));
    const [, payload, signature] = tokenFor(keyA).split('.');
    const header = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    for (const token of [
      'garbage',
      `${header({ alg: 'none', typ: 'at+jwt', kid: 'new' })}.${payload}.`,
      `${header({ alg: 'HS256', typ: 'at+jwt', kid: 'new' })}.${payload}.${signature}`,
      `${header({ alg: 'ES256', typ: 'JWT', kid: 'new' })}.${payload}.${signature}`,
      `${header({ alg: 'ES256', typ: 'at+jwt', kid: 'new', crit: ['exp'] })}.${payload}.${signature}`,
      `${header({ alg: 'ES256', typ: 'at+jwt', kid: 7 })}.${payload}.${signature}`,
    ]) {
      await assert.rejects(authorize(server, token));
    }
    assert.equal(endpoint.requests, 1);
  });

  it('refreshes a set older than its maximum age in the background, serving the old one meanwhile', async () => {
    endpoint.keys = [keyA.jwk];
    endpoint.status = 200;
    endpoint.body = undefined;
    endpoint.requests = 0;
    let nowMs = 0;
    const { fetch, close } = nodeFetch();
    try {
      const cache = new JwksCache({
        uri: endpoint.url,
        fetch,
        cooldownSeconds: 0.1,
        maxAgeSeconds: 0.2,
        nowMs: () => nowMs,
      });
      assert.equal(cache.current(), undefined);
      const first = await cache.refreshForUnknownKey();
      assert.equal(first?.size, 1);
      endpoint.keys = [keyA.jwk, keyB.jwk];
      nowMs += 200;
      assert.equal(cache.current(), first, 'fresh: no fetch');
      nowMs += 1;
      assert.equal(cache.current(), first, 'stale: the old set is served while the new one loads');
      await waitFor(async () => cache.current() !== first, 10_000, 'the stale set was never replaced');
      assert.equal(cache.current()?.size, 2);
      assert.equal(endpoint.requests, 2);
    } finally {
      close();
    }
  });

  it('asks an issuer that fails at most once per cooldown for a stale set, whatever the request rate', async () => {
    endpoint.keys = [keyA.jwk];
    endpoint.status = 200;
    endpoint.body = undefined;
    endpoint.requests = 0;
    let nowMs = 0;
    const { fetch, close } = nodeFetch();
    try {
      const cache = new JwksCache({
        uri: endpoint.url,
        fetch,
        cooldownSeconds: 0.1,
        maxAgeSeconds: 0.05,
        nowMs: () => nowMs,
      });
      const held = await cache.refreshForUnknownKey();
      endpoint.status = 500;
      // 450 ms of requests every millisecond; each step also waits for any fetch it started to end.
      for (let step = 0; step < 450; step++) {
        nowMs += 1;
        assert.equal(cache.current(), held, 'the keys in hand keep serving');
        await cache.refreshForUnknownKey();
      }
      // One fetch at the start, then one each time a 100 ms cooldown has passed (at 100, 200, 300, 400).
      assert.equal(endpoint.requests, 5);
    } finally {
      close();
    }
  });
});

describe('resource-server library: keys rotated at a running Gatehouse', () => {
  let gatehouse: TestServer;
  let fetches = 0;
  let library: ResourceServer;
  let closeFetch: () => void;

  before(async () => {
    gatehouse = await startTestServer('sqlite', {}, { transport: 'https' });
    const node = nodeFetch(gatehouse.ca);
    closeFetch = node.close;
    const counting: FetchLike = (url, init) => {
      fetches += 1;
      return node.fetch(url, init);
    };
    library = new ResourceServer({
      issuer: 'https://gatehouse.test',
      jwksUri: `${gatehouse.http.baseUrl}/jwks`,
      fetch: counting,
      now: () => gatehouse.clock.now(),
      verifiedTokenCacheSize: 0,
      jwksCooldownSeconds: 0,
    });
  });
  after(async () => {
    library.close();
    closeFetch();
    await gatehouse.close();
  });

  const authorize = (token: string) =>
    library.authorize(
      { method: 'GET', url: '/notes', host: 'api.test', protocol: 'https', authorization: `Bearer ${token}` },
      ['notes:read'],
    );

  it('follows a rotation through the API and one by a process configured for RS256, old tokens still valid', async () => {
    const first = await clientCredentialsToken(gatehouse, ['notes:read']);
    await authorize(first.token.access_token);
    assert.equal(fetches, 1);

    const admin = await clientCredentialsToken(gatehouse, ['admin']);
    expectStatus(await apiClient(gatehouse, admin.token).post('/signing-keys'), 201);
    const second = await clientCredentialsToken(gatehouse, ['notes:read']);
    assert.notEqual(
      decodeProtectedHeader(second.token.access_token).kid,
      decodeProtectedHeader(first.token.access_token).kid,
    );
    await authorize(second.token.access_token);
    assert.equal(fetches, 2, 'one refetch for the new kid');

    // The operator sets GATEHOUSE_SIGNING_ALG=RS256 and runs `gatehouse keys rotate` elsewhere: a key
    // of each algorithm the ring keeps. This server, still configured for ES256, signs with the new
    // ES256 key; a process restarted with RS256 signs access tokens with the new RS256 key.
    const other = new KeyRing({
      store: gatehouse.store.reopen().signingKeys,
      keyEncryptionKey: deriveServerKeys(gatehouse.gatehouse.config.secret).keyEncryptionKey,
      clock: gatehouse.clock,
      algorithm: 'RS256',
      retiredKeyRetentionSeconds: 7 * 86400,
      refreshIntervalSeconds: 10,
    });
    const rotated = await other.rotateAll();
    const rsaKid = rotated.kid;
    const ecKid = rotated.kids.find((key) => key.alg === 'ES256')?.kid;
    gatehouse.clock.advance(11);
    // The background refresh is awaited as an event would be; the deadline only guards against a hang.
    let third = await clientCredentialsToken(gatehouse, ['notes:read']);
    for (
      const deadline = Date.now() + 120_000;
      decodeProtectedHeader(third.token.access_token).kid !== ecKid && Date.now() < deadline;
    ) {
      await sleep(50);
      third = await clientCredentialsToken(gatehouse, ['notes:read']);
    }
    assert.deepEqual(decodeProtectedHeader(third.token.access_token), {
      alg: 'ES256',
      typ: 'at+jwt',
      kid: ecKid,
    });
    await authorize(third.token.access_token);
    assert.equal(fetches, 3);
    const fromRsaProcess = await other.sign({ ...decodeJwt(third.token.access_token), jti: 'rsa-process' });
    assert.deepEqual(decodeProtectedHeader(fromRsaProcess), { alg: 'RS256', typ: 'at+jwt', kid: rsaKid });
    await authorize(fromRsaProcess);
    await other.close();
    for (const token of [first, second, third]) await authorize(token.token.access_token);
    assert.equal(fetches, 3, 'every key known now');
  });
});
