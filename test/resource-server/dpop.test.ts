import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, describe, it } from 'node:test';
import express from 'express';
import Fastify from 'fastify';
import { calculateThumbprint, generateKeyPair, generateProof, type KeyPair } from 'dpop';
import {
  DpopReplayStoreFullError,
  MemoryDpopReplayStore,
  type DpopReplayStore,
  type ResourceServerOptions,
  type VerifiedToken,
} from 'gatehouse-oauth-resource-server';
import { expressResourceServer } from 'gatehouse-oauth-resource-server/express';
import { gatehouseResourceServer } from 'gatehouse-oauth-resource-server/fastify';
import { refusalFor } from '#resource-server-internals/respond.js';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { basicAuth } from '../helpers/https-client.js';
import { listen, optionsFor, plainRequest, type PlainResponse } from '../helpers/resource-server-requests.js';

// RFC 9449 in the resource-server library, with both adapters, against a running Gatehouse on each
// store: tokens bound at Gatehouse's token endpoint, proofs made by the `dpop` package. The service
// says it is https://notes.example (as behind a proxy); the proofs name that, never the address the
// test connects to.

const ORIGIN = 'https://notes.example';
const NOTES = `${ORIGIN}/notes`;
const TOKEN_URL = 'https://gatehouse.test/token';

/** The `dpop` package signs with the wall clock; the Gatehouse (and the library's `now`) with its manual one. */
function syncClock(server: TestServer): void {
  const wall = Math.floor(Date.now() / 1000);
  if (wall > server.clock.now()) server.clock.advance(wall - server.clock.now());
}

type Adapter = 'fastify' | 'express';

/** A service on either adapter: GET /notes needs notes:read, and answers with the token it saw. */
async function service(
  adapter: Adapter,
  options: ResourceServerOptions,
): Promise<{ url: string; close(): Promise<void> }> {
  const describeToken = (token: { tokenType: string; jkt?: string; subject: string } | null | undefined) => ({
    tokenType: token?.tokenType,
    jkt: token?.jkt ?? null,
    subject: token?.subject,
  });
  if (adapter === 'fastify') {
    const app = Fastify();
    await app.register(gatehouseResourceServer, options);
    app.get('/notes', { preHandler: app.requireToken(['notes:read']) }, async (request) =>
      describeToken(request.accessToken),
    );
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    return { url, close: () => app.close() };
  }
  const tokens = expressResourceServer(options);
  const app = express();
  app.get('/notes', tokens.requireToken(['notes:read']), (_req, res) => {
    res.json(describeToken(res.locals.accessToken as VerifiedToken));
  });
  const server = createServer(app);
  const url = await listen(server);
  return {
    url,
    async close() {
      tokens.close();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const challengeOf = (res: PlainResponse) => String(res.headers['www-authenticate']);

for (const backend of backends()) {
  describe(`resource-server library: DPoP-bound tokens (${backend})`, () => {
    let gatehouse: TestServer;
    let key: KeyPair;
    let otherKey: KeyPair;
    let jkt: string;
    let party: { id: string; secret: string };
    const closers: Array<() => Promise<unknown>> = [];
    before(async () => {
      gatehouse = await startTestServer(backend, {}, { transport: 'https' });
      key = await generateKeyPair('ES256', { extractable: true });
      otherKey = await generateKeyPair('RS256', { extractable: true });
      jkt = await calculateThumbprint(key.publicKey);
      const { client, secret } = await gatehouse.client({
        grant_types: ['client_credentials'],
        scopes: ['notes:read'],
      });
      party = { id: client.id, secret };
    });
    after(async () => {
      for (const close of closers) await close();
      await gatehouse.close();
    });

    async function accessToken(bound: boolean): Promise<string> {
      syncClock(gatehouse);
      const res = await gatehouse.http.request('/token', {
        form: { grant_type: 'client_credentials', scope: 'notes:read' },
        headers: {
          authorization: basicAuth(party.id, party.secret),
          ...(bound ? { dpop: await generateProof(key, TOKEN_URL, 'POST') } : {}),
        },
      });
      assert.equal(res.status, 200, res.text);
      const body = res.json as { access_token: string; token_type: string };
      assert.equal(body.token_type, bound ? 'DPoP' : 'bearer');
      return body.access_token;
    }
    const proof = async (token: string, keyPair = key, htu = NOTES, htm = 'GET', nonce?: string) => {
      syncClock(gatehouse);
      return generateProof(keyPair, htu, htm, nonce, token);
    };
    async function start(adapter: Adapter, extra: Partial<ResourceServerOptions> = {}) {
      const running = await service(adapter, optionsFor(gatehouse, { dpop: { origin: ORIGIN }, ...extra }));
      closers.push(() => running.close());
      return (headers: Record<string, string | string[]>) =>
        plainRequest(running.url, '/notes', { headers: headers as Record<string, string> });
    }

    for (const adapter of ['fastify', 'express'] as const) {
      it(`${adapter}: a bound token with its proof is admitted, as tokenType dpop with its jkt`, async () => {
        const get = await start(adapter);
        const token = await accessToken(true);
        const res = await get({ authorization: `DPoP ${token}`, dpop: await proof(token) });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.json, { tokenType: 'dpop', jkt, subject: party.id });
        assert.equal(res.headers['dpop-nonce'], undefined);
      });

      it(`${adapter}: a bound token as Bearer is 401 invalid_token; challenges offer DPoP (§7.1)`, async () => {
        const get = await start(adapter);
        const token = await accessToken(true);
        const res = await get({ authorization: `Bearer ${token}` });
        assert.equal(res.status, 401);
        assert.match(
          challengeOf(res),
          /^Bearer realm="notes", error="invalid_token", error_description="[^"]*DPoP scheme[^"]*", DPoP realm="notes", algs="ES256 PS256 RS256 EdDSA Ed25519"$/,
        );
        const none = await get({});
        assert.equal(
          challengeOf(none),
          'Bearer realm="notes", DPoP realm="notes", algs="ES256 PS256 RS256 EdDSA Ed25519"',
        );
        // An unbound token is still a bearer token, and not a DPoP one.
        const plain = await accessToken(false);
        assert.equal((await get({ authorization: `Bearer ${plain}` })).status, 200);
        const plainAsDpop = await get({ authorization: `DPoP ${plain}`, dpop: await proof(plain) });
        assert.equal(plainAsDpop.status, 401);
        assert.match(challengeOf(plainAsDpop), /^DPoP realm="notes", error="invalid_token"/);
      });

      it(`${adapter}: replay, another key, another token, the Host's URL, two headers: 401 invalid_dpop_proof`, async () => {
        const get = await start(adapter);
        const token = await accessToken(true);
        const other = await accessToken(true);
        const once = await proof(token);
        assert.equal((await get({ authorization: `DPoP ${token}`, dpop: once })).status, 200);
        const cases: Array<[string, string | string[]]> = [
          ['replayed', once],
          ['another key', await proof(token, otherKey)],
          ['another token’s ath', await proof(other)],
          ['the address connected to', await proof(token, key, 'http://127.0.0.1/notes')],
          ['POST', await proof(token, key, NOTES, 'POST')],
          ['two headers', [await proof(token), await proof(token)]],
        ];
        for (const [name, dpop] of cases) {
          const res = await get({ authorization: `DPoP ${token}`, dpop });
          assert.equal(res.status, 401, name);
          assert.match(challengeOf(res), /^DPoP realm="notes", error="invalid_dpop_proof"/, name);
          assert.match(challengeOf(res), /algs="ES256 /, name);
        }
        const missing = await get({ authorization: `DPoP ${token}` });
        assert.equal(missing.status, 401);
      });

      it(`${adapter}: nonces through the callback: 401 use_dpop_nonce with DPoP-Nonce, then 200 with one`, async () => {
        let current = 'nonce-1';
        const get = await start(adapter, {
          dpop: {
            origin: ORIGIN,
            nonce: { issue: () => current, check: (nonce) => nonce === current },
          },
        });
        const token = await accessToken(true);
        const first = await get({ authorization: `DPoP ${token}`, dpop: await proof(token) });
        assert.equal(first.status, 401);
        assert.match(challengeOf(first), /^DPoP realm="notes", error="use_dpop_nonce"/);
        assert.equal(first.headers['dpop-nonce'], 'nonce-1');
        const second = await get({
          authorization: `DPoP ${token}`,
          dpop: await proof(token, key, NOTES, 'GET', 'nonce-1'),
        });
        assert.equal(second.status, 200, second.text);
        assert.equal(second.headers['dpop-nonce'], 'nonce-1');
        current = 'nonce-2';
        const stale = await get({
          authorization: `DPoP ${token}`,
          dpop: await proof(token, key, NOTES, 'GET', 'nonce-1'),
        });
        assert.equal(stale.status, 401);
        assert.equal(stale.headers['dpop-nonce'], 'nonce-2');
      });

      it(`${adapter}: dpop.required refuses bearer tokens; without the dpop option, DPoP is refused`, async () => {
        const strict = await start(adapter, { dpop: { origin: ORIGIN, required: true } });
        const plain = await accessToken(false);
        const refused = await strict({ authorization: `Bearer ${plain}` });
        assert.equal(refused.status, 401);
        assert.match(challengeOf(refused), /only DPoP-bound/);

        const running = await service(adapter, optionsFor(gatehouse));
        closers.push(() => running.close());
        const token = await accessToken(true);
        const noDpop = await plainRequest(running.url, '/notes', {
          headers: { authorization: `DPoP ${token}`, dpop: await proof(token) },
        });
        assert.equal(noDpop.status, 401);
        assert.match(challengeOf(noDpop), /dpop\.origin/);
        // Still never a bearer token.
        const asBearer = await plainRequest(running.url, '/notes', {
          headers: { authorization: `Bearer ${token}` },
        });
        assert.equal(asBearer.status, 401);
        assert.equal(challengeOf(asBearer).includes('DPoP realm'), false, 'DPoP is not offered');
      });
    }

    it('with an RFC 9728 resource, `dpop: {}` takes the resource’s origin; challenges name the metadata', async () => {
      await gatehouse.gatehouse.engine.resources.create({ uri: NOTES });
      syncClock(gatehouse);
      const res = await gatehouse.http.request('/token', {
        form: { grant_type: 'client_credentials', scope: 'notes:read', resource: NOTES },
        headers: {
          authorization: basicAuth(party.id, party.secret),
          dpop: await generateProof(key, TOKEN_URL, 'POST'),
        },
      });
      assert.equal(res.status, 200, res.text);
      const token = (res.json as { access_token: string }).access_token;
      const get = await start('fastify', { resource: NOTES, dpop: {} });
      const ok = await get({ authorization: `DPoP ${token}`, dpop: await proof(token) });
      assert.equal(ok.status, 200, ok.text);
      const metadata = `${ORIGIN}/.well-known/oauth-protected-resource/notes`;
      const asBearer = await get({ authorization: `Bearer ${token}` });
      assert.equal(
        challengeOf(asBearer).includes(`DPoP realm="notes", resource_metadata="${metadata}", algs="ES256 `),
        true,
        challengeOf(asBearer),
      );
      const unproven = await get({ authorization: `DPoP ${token}` });
      assert.match(
        challengeOf(unproven),
        new RegExp(`^DPoP realm="notes", resource_metadata="${metadata}", error=`),
      );
    });

    it('several processes: a shared replay store refuses a proof another process accepted', async () => {
      const shared = new MemoryDpopReplayStore({ now: () => gatehouse.clock.now() });
      const sharedStore: DpopReplayStore = { remember: (k, at) => shared.remember(k, at) };
      const one = await start('fastify', { dpop: { origin: ORIGIN, replayStore: sharedStore } });
      const two = await start('express', { dpop: { origin: ORIGIN, replayStore: sharedStore } });
      const token = await accessToken(true);
      const once = await proof(token);
      assert.equal((await one({ authorization: `DPoP ${token}`, dpop: once })).status, 200);
      const replayed = await two({ authorization: `DPoP ${token}`, dpop: once });
      assert.equal(replayed.status, 401);
      assert.match(challengeOf(replayed), /used before/);
      // Each with a memory store of its own, the second process would have taken it.
      const alone = await start('express');
      const again = await proof(token);
      assert.equal((await one({ authorization: `DPoP ${token}`, dpop: again })).status, 200);
      assert.equal((await alone({ authorization: `DPoP ${token}`, dpop: again })).status, 200);
    });
  });
}

describe('MemoryDpopReplayStore', () => {
  it('remembers a key until it expires, and refuses new keys when full (503, never forgetting early)', async () => {
    let now = 1000;
    const store = new MemoryDpopReplayStore({ maxEntries: 2, now: () => now });
    assert.equal(await store.remember('a', 1010), true);
    assert.equal(await store.remember('a', 1010), false);
    assert.equal(await store.remember('b', 1020), true);
    await assert.rejects(store.remember('c', 1020), DpopReplayStoreFullError);
    const refusal = refusalFor(new DpopReplayStoreFullError(2), 'notes');
    assert.equal(refusal?.status, 503);
    assert.equal(refusal?.headers['retry-after'], '5');
    now = 1011;
    assert.equal(await store.remember('c', 1020), true, 'a expired and made room');
    assert.equal(store.size, 2);
    await assert.rejects(store.remember('a', 1030), DpopReplayStoreFullError, 'full again');
  });
});
