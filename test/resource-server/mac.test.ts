import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import formBody from '@fastify/formbody';
import Fastify, { type FastifyInstance } from 'fastify';
import { decodeJwt } from 'jose';
import { gatehouseResourceServer, type ResourceServerOptions } from '../../src/resource-server/index.js';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { userToken } from '../api/support.js';
import {
  macHeaderDraft01,
  macHeaderDraft02,
  oauthlibMacHeader,
  oauthlibMissing,
} from '../api/mac-support.js';
import { optionsFor, plainRequest } from './support.js';

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
    let host: string;
    let port: string;
    const apps: FastifyInstance[] = [];
    before(async () => {
      gatehouse = await startTestServer(backend);
      const { client, secret } = await gatehouse.client({ name: 'notes service', scopes: ['mac-keys'] });
      const rs = await service(
        optionsFor(gatehouse, { introspection: { clientId: client.id, clientSecret: secret } }),
      );
      apps.push(rs.app);
      url = rs.url;
      ({ hostname: host, port } = new URL(url));
    });
    after(async () => {
      for (const app of apps) await app.close();
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
        optionsFor(gatehouse, { introspection: { clientId: client.id, clientSecret: secret } }),
      );
      apps.push(rs.app);
      const t = await macToken();
      const { port: otherPort } = new URL(rs.url);
      const res = await get(
        macHeaderDraft02(
          { token: t.token, key: t.key, method: 'GET', path: '/notes', host, port: otherPort },
          gatehouse.clock.now(),
        ),
        rs.url,
      );
      assert.equal(res.status, 401);
      assert.match(String(res.headers['www-authenticate']), /gave no MAC key/);
    });

    it('accepts oauthlib’s draft=0 header', { skip: oauthlibMissing }, async () => {
      const t = await macToken();
      const header = await oauthlibMacHeader({
        token: t.token,
        key: t.key,
        uri: `${url}/notes`,
        method: 'GET',
        algorithm: 'hmac-sha-1',
        iat: t.iat,
        draft: 0,
      });
      const res = await get(header);
      assert.equal(res.status, 200, res.text);
    });
  });
}
