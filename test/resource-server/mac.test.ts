import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import formBody from '@fastify/formbody';
import express from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import { decodeJwt } from 'jose';
import { MemoryNonceStore, type ResourceServerOptions } from 'gatehouse-oauth-resource-server';
import { expressResourceServer } from 'gatehouse-oauth-resource-server/express';
import { gatehouseResourceServer } from 'gatehouse-oauth-resource-server/fastify';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { userToken } from '../helpers/api-requests.js';
import {
  macHeaderDraft01,
  macHeaderDraft02,
  oauthlibMacHeader,
  oauthlibMissing,
} from '../helpers/mac-signing.js';
import { listen, optionsFor, plainRequest } from '../helpers/resource-server-requests.js';

// The service's public origin: what clients sign for, whatever address or Host a request arrives with.
const ORIGIN = 'https://notes.example';

/** The same service on Express. */
async function expressService(options: ResourceServerOptions): Promise<{ url: string; close(): void }> {
  const tokens = expressResourceServer(options);
  const app = express();
  app.get('/notes', tokens.requireToken(['notes:read']), (_req, res) => {
    res.json({ subject: (res.locals.accessToken as { subject: string }).subject });
  });
  const server = createServer(app);
  const url = await listen(server);
  return {
    url,
    close() {
      tokens.close();
      server.close();
    },
  };
}

async function service(options: ResourceServerOptions): Promise<{ app: FastifyInstance; url: string }> {
  const app = Fastify();
  await app.register(formBody);
  await app.register(gatehouseResourceServer, options);
  app.get('/notes', { preHandler: app.requireToken(['notes:read']) }, async (request) => ({
    subject: request.accessToken?.subject,
    tokenType: request.accessToken?.tokenType,
  }));
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url };
}

for (const backend of backends()) {
  describe(`resource-server library with MAC tokens (${backend})`, () => {
    let gatehouse: TestServer;
    let url: string;
    let entitled: { clientId: string; clientSecret: string };
    const host = 'notes.example';
    const port = '443';
    const apps: FastifyInstance[] = [];
    const closers: (() => void)[] = [];
    before(async () => {
      gatehouse = await startTestServer(backend, {}, { transport: 'https' });
      const { client, secret } = await gatehouse.client({ name: 'notes service', scopes: ['mac-keys'] });
      entitled = { clientId: client.id, clientSecret: secret };
      const rs = await service(optionsFor(gatehouse, { introspection: entitled, mac: { origin: ORIGIN } }));
      apps.push(rs.app);
      url = rs.url;
    });
    after(async () => {
      for (const app of apps) await app.close();
      for (const close of closers) close();
      await gatehouse.close();
    });

    async function macToken() {
      const { token, user } = await userToken(gatehouse, ['notes:read'], { token_type: 'mac' });
      return {
        token: token.access_token,
        key: token.mac_key as string,
        user,
        iat: decodeJwt(token.access_token).iat as number,
      };
    }
    const get = (authorization: string, base = url) =>
      plainRequest(base, '/notes', { headers: { authorization } });

    it('verifies a MAC-signed request with the key from introspection, and refuses its replay', async () => {
      const t = await macToken();
      const header = macHeaderDraft02(
        { token: t.token, key: t.key, method: 'GET', path: '/notes', host, port },
        gatehouse.clock.now(),
      );
      const ok = await get(header);
      assert.equal(ok.status, 200, ok.text);
      assert.deepEqual(ok.json, { subject: t.user.id, tokenType: 'mac' });
      const replay = await get(header);
      assert.equal(replay.status, 401);
      assert.match(String(replay.headers['www-authenticate']), /^MAC error="invalid_token"/);
    });

    it('refuses a stale timestamp and a wrong signature', async () => {
      const t = await macToken();
      const signing = { token: t.token, key: t.key, method: 'GET', path: '/notes', host, port };
      const stale = await get(macHeaderDraft02(signing, gatehouse.clock.now() - 600));
      assert.equal(stale.status, 401);
      assert.match(String(stale.headers['www-authenticate']), /outside the accepted window/);
      const forged = await get(macHeaderDraft01({ ...signing, path: '/other' }, 1));
      assert.equal(forged.status, 401);
      assert.match(String(forged.headers['www-authenticate']), /does not match/);
    });

    it('cannot check MAC tokens without a client entitled to their keys', async () => {
      const { client, secret } = await gatehouse.client({ name: 'unentitled service', scopes: [] });
      const rs = await service(
        optionsFor(gatehouse, {
          introspection: { clientId: client.id, clientSecret: secret },
          mac: { origin: ORIGIN },
        }),
      );
      apps.push(rs.app);
      const t = await macToken();
      const res = await get(
        macHeaderDraft02(
          { token: t.token, key: t.key, method: 'GET', path: '/notes', host, port },
          gatehouse.clock.now(),
        ),
        rs.url,
      );
      assert.equal(res.status, 401);
      assert.match(String(res.headers['www-authenticate']), /gave no MAC key/);
    });

    it(
      'accepts oauthlib’s draft=0 header; refuses its hmac-sha-1 one',
      { skip: oauthlibMissing },
      async () => {
        const t = await macToken();
        const made = (algorithm: 'hmac-sha-256' | 'hmac-sha-1') =>
          oauthlibMacHeader({
            token: t.token,
            key: t.key,
            uri: `${ORIGIN}/notes`,
            method: 'GET',
            algorithm,
            iat: t.iat,
            draft: 0,
          });
        const res = await get(await made('hmac-sha-256'));
        assert.equal(res.status, 200, res.text);
        const sha1 = await get(await made('hmac-sha-1'));
        assert.equal(sha1.status, 401, sha1.text);
      },
    );

    it('refuses a MAC made with another algorithm than the token’s (hmac-sha-256)', async () => {
      const t = await macToken();
      const signing = { token: t.token, key: t.key, method: 'GET', path: '/notes', host, port };
      const res = await get(macHeaderDraft02({ ...signing, algorithm: 'hmac-sha-1' }, gatehouse.clock.now()));
      assert.equal(res.status, 401);
      assert.match(String(res.headers['www-authenticate']), /does not match/);
    });

    it('checks a draft -01 bodyhash on a GET against the empty body', async () => {
      const t = await macToken();
      const signing = { token: t.token, key: t.key, method: 'GET', path: '/notes', host, port };
      const empty = createHash('sha256').update(Buffer.alloc(0)).digest('base64');
      const age = gatehouse.clock.now() - t.iat;
      const ok = await get(macHeaderDraft01(signing, age, empty));
      assert.equal(ok.status, 200, ok.text);
      const wrong = await get(
        macHeaderDraft01(signing, age, createHash('sha256').update('x').digest('base64')),
      );
      assert.equal(wrong.status, 401);
      assert.match(String(wrong.headers['www-authenticate']), /body hash does not match/);
    });

    for (const adapter of ['fastify', 'express'] as const) {
      it(`${adapter}: verifies against mac.origin, never the Host header sent`, async () => {
        const options = optionsFor(gatehouse, { introspection: entitled, mac: { origin: ORIGIN } });
        let base: string;
        if (adapter === 'fastify') {
          const rs = await service(options);
          apps.push(rs.app);
          base = rs.url;
        } else {
          const rs = await expressService(options);
          closers.push(rs.close);
          base = rs.url;
        }
        const t = await macToken();
        const now = gatehouse.clock.now();
        const sign = (h: string, p: string) =>
          macHeaderDraft02(
            { token: t.token, key: t.key, method: 'GET', path: '/notes', host: h, port: p },
            now,
          );
        const send = (authorization: string, hostHeader: string) =>
          plainRequest(base, '/notes', { headers: { authorization, host: hostHeader } });
        // Signed for another server, sent here under that server's name.
        const evil = await send(sign('evil.example', '443'), 'evil.example');
        assert.equal(evil.status, 401, evil.text);
        assert.match(String(evil.headers['www-authenticate']), /^MAC error="invalid_token"/);
        // Signed for the address the connection went to.
        const { hostname, port: listening } = new URL(base);
        const direct = await send(sign(hostname, listening), `${hostname}:${listening}`);
        assert.equal(direct.status, 401, direct.text);
        // Signed for the public origin: accepted, whatever the Host header.
        const good = await send(sign(host, port), 'evil.example');
        assert.equal(good.status, 200, good.text);
      });
    }

    it('answers 503 when the memory nonce store is full', async () => {
      const nonceStore = new MemoryNonceStore({ maxEntries: 1 });
      const rs = await service(
        optionsFor(gatehouse, { introspection: entitled, mac: { origin: ORIGIN, nonceStore } }),
      );
      apps.push(rs.app);
      const t = await macToken();
      const signing = { token: t.token, key: t.key, method: 'GET', path: '/notes', host, port };
      const first = await get(macHeaderDraft02(signing, gatehouse.clock.now()), rs.url);
      assert.equal(first.status, 200, first.text);
      const full = await get(macHeaderDraft02(signing, gatehouse.clock.now()), rs.url);
      assert.equal(full.status, 503, full.text);
      assert.equal(full.headers['retry-after'], '5');
      assert.equal((full.json as { error: string }).error, 'temporarily_unavailable');
    });

    it('refuses MAC requests when mac.origin is not set', async () => {
      const rs = await service(optionsFor(gatehouse, { introspection: entitled }));
      apps.push(rs.app);
      const t = await macToken();
      const { hostname, port: listening } = new URL(rs.url);
      const res = await get(
        macHeaderDraft02(
          { token: t.token, key: t.key, method: 'GET', path: '/notes', host: hostname, port: listening },
          gatehouse.clock.now(),
        ),
        rs.url,
      );
      assert.equal(res.status, 401);
      assert.match(String(res.headers['www-authenticate']), /mac\.origin/);
    });
  });
}
