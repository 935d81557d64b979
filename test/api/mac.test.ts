import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { createGatehouse, type Gatehouse } from '../../src/compose/gatehouse.js';
import { loadConfig } from '../../src/config.js';
import { backends } from '../helpers/backends.js';
import type { HttpResponse } from '../helpers/https-client.js';
import { InjectClient } from '../helpers/inject-client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  macHeaderDraft01,
  macHeaderDraft02,
  oauthlibMacHeader,
  oauthlibMissing,
  type MacSigning,
} from '../helpers/mac-signing.js';
import {
  assertProblem,
  bearer,
  clientCredentialsToken,
  expectStatus,
  userToken,
} from '../helpers/api-requests.js';

function assertMacChallenge(res: HttpResponse, status: number, error: string): void {
  assertProblem(res, status);
  assert.match(String(res.headers['www-authenticate']), new RegExp(`^MAC error="${error}"`));
}

for (const backend of backends()) {
  describe(`MAC tokens on /v1 (${backend})`, () => {
    let server: TestServer;
    // Signatures cover the issuer's host and port (https://gatehouse.test), where clients address
    // the server, whatever Host header the request carries.
    const host = 'gatehouse.test';
    const port = '443';
    before(async () => {
      server = await startTestServer(backend);
    });
    after(async () => {
      await server.close();
    });

    async function macToken(scopes = ['profile']) {
      const { token, user } = await userToken(server, scopes, { token_type: 'mac' });
      assert.equal(token.token_type, 'mac');
      assert.equal(token.mac_algorithm, 'hmac-sha-256');
      return {
        token: token.access_token,
        key: token.mac_key as string,
        iat: decodeJwt(token.access_token).iat as number,
        user,
      };
    }
    const signing = (t: { token: string; key: string }, extra: Partial<MacSigning> = {}): MacSigning => ({
      token: t.token,
      key: t.key,
      method: 'GET',
      path: '/v1/users/me',
      host,
      port,
      ...extra,
    });
    const me = (authorization: string) => server.http.request('/v1/users/me', { headers: { authorization } });

    it('accepts both draft forms under the token’s hmac-sha-256', async () => {
      const t = await macToken();
      const now = server.clock.now();
      const draft02 = await me(macHeaderDraft02(signing(t, { ext: 'x' }), now));
      expectStatus(draft02, 200);
      assert.equal((draft02.json as { id: string }).id, t.user.id);
      expectStatus(await me(macHeaderDraft01(signing(t), now - t.iat + 1)), 200);
    });

    /** GET /v1/users/me with the Host header given. */
    const withHost = (hostHeader: string, authorization: string) =>
      server.http.request('/v1/users/me', { headers: { host: hostHeader, authorization } });

    it('verifies against the issuer’s host and port, never the Host header sent', async () => {
      const t = await macToken();
      const now = server.clock.now();
      // Signed for another server, and sent here under that server's name.
      const evil = macHeaderDraft02(signing(t, { host: 'evil.example', port: '443' }), now);
      assertMacChallenge(await withHost('evil.example', evil), 401, 'invalid_token');
      // Signed for the address the request went to directly, rather than the public one.
      const direct = macHeaderDraft02(signing(t, { host: '127.0.0.1', port: '8443' }), now);
      assertMacChallenge(await withHost('127.0.0.1:8443', direct), 401, 'invalid_token');
      // Signed for the issuer: accepted whatever Host the request carried.
      expectStatus(await withHost('evil.example', macHeaderDraft02(signing(t), now)), 200);
    });

    it('refuses an hmac-sha-1 MAC for a token issued with hmac-sha-256', async () => {
      const t = await macToken();
      const now = server.clock.now();
      // Sent with the issuer's own Host, so that nothing but the algorithm differs.
      const sha1 = signing(t, { algorithm: 'hmac-sha-1' });
      assertMacChallenge(await withHost(host, macHeaderDraft02(sha1, now)), 401, 'invalid_token');
      assertMacChallenge(await withHost(host, macHeaderDraft01(sha1, now - t.iat + 1)), 401, 'invalid_token');
      expectStatus(await withHost(host, macHeaderDraft02(signing(t), now)), 200);
    });

    it('refuses a replayed nonce with 401 MAC error="invalid_token"', async () => {
      const t = await macToken();
      const header = macHeaderDraft02(signing(t), server.clock.now());
      expectStatus(await me(header), 200);
      assertMacChallenge(await me(header), 401, 'invalid_token');
      const draft01 = macHeaderDraft01(signing(t), 3);
      expectStatus(await me(draft01), 200);
      assertMacChallenge(await me(draft01), 401, 'invalid_token');
    });

    it('refuses a stale or future timestamp, and a stale age', async () => {
      const t = await macToken();
      const now = server.clock.now();
      assertMacChallenge(await me(macHeaderDraft02(signing(t), now - 301)), 401, 'invalid_token');
      assertMacChallenge(await me(macHeaderDraft02(signing(t), now + 301)), 401, 'invalid_token');
      expectStatus(await me(macHeaderDraft02(signing(t), now - 299)), 200);
      assertMacChallenge(await me(macHeaderDraft01(signing(t), now - t.iat + 400)), 401, 'invalid_token');
      server.clock.advance(400);
      try {
        // The same age is now 400 s in the past.
        assertMacChallenge(await me(macHeaderDraft01(signing(t), 0)), 401, 'invalid_token');
      } finally {
        server.clock.advance(-400);
      }
    });

    it('refuses a signature over another request, host or key', async () => {
      const t = await macToken();
      const now = server.clock.now();
      const cases = [
        signing(t, { path: '/v1/users/you' }),
        signing(t, { method: 'POST' }),
        signing(t, { host: 'evil.example' }),
        signing(t, { port: '8443' }),
        signing(t, { key: 'not-the-key' }),
      ];
      for (const wrong of cases) {
        const res = await me(macHeaderDraft02(wrong, now));
        assertMacChallenge(res, 401, 'invalid_token');
        assert.match(
          String(res.headers['www-authenticate']),
          /error_description="the MAC does not match the request"/,
        );
      }
      assert.equal((await me('MAC id="x", mac="y"')).status, 400, 'malformed: invalid_request');
    });

    it('refuses a bearer token presented with the MAC scheme, and a MAC token as bearer', async () => {
      const bearerToken = await userToken(server, ['profile']);
      const header = macHeaderDraft02(
        {
          token: bearerToken.token.access_token,
          key: 'none',
          method: 'GET',
          path: '/v1/users/me',
          host,
          port,
        },
        server.clock.now(),
      );
      assertMacChallenge(await me(header), 401, 'invalid_token');
      const t = await macToken();
      assertProblem(await server.http.request('/v1/users/me', { headers: bearer(t.token) }), 401);
    });

    it('answers insufficient scope with 403 MAC error="insufficient_scope"', async () => {
      const t = await macToken(['other']);
      const res = await me(macHeaderDraft02(signing(t), server.clock.now()));
      assertMacChallenge(res, 403, 'insufficient_scope');
      assert.match(String(res.headers['www-authenticate']), /scope="profile"/);
    });

    it('checks a draft -01 bodyhash against the raw body', async () => {
      const { token } = await clientCredentialsToken(server, ['admin'], { token_type: 'mac' });
      const t = { token: token.access_token, key: token.mac_key as string };
      const iat = decodeJwt(t.token).iat as number;
      const body = JSON.stringify({ name: 'mac:scope', description: 'Made with a MAC token' });
      const good = createHash('sha256').update(body).digest('base64');
      const post = (bodyhash: string) =>
        server.http.request('/v1/scopes', {
          method: 'POST',
          body,
          headers: {
            'content-type': 'application/json',
            authorization: macHeaderDraft01(
              signing(t, { method: 'POST', path: '/v1/scopes' }),
              server.clock.now() - iat,
              bodyhash,
            ),
          },
        });
      assertMacChallenge(
        await post(createHash('sha256').update('{}').digest('base64')),
        401,
        'invalid_token',
      );
      expectStatus(await post(good), 201);
    });

    it('checks a draft -01 bodyhash on a GET against the empty body', async () => {
      const t = await macToken();
      const get = (bodyhash: string) =>
        me(macHeaderDraft01(signing(t), server.clock.now() - t.iat, bodyhash));
      const empty = createHash('sha256').update(Buffer.alloc(0)).digest('base64');
      assert.equal(empty, '47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=');
      expectStatus(await get(empty), 200);
      assertMacChallenge(await get(createHash('sha256').update('x').digest('base64')), 401, 'invalid_token');
      // The SHA-1 hash of the empty body: the token's algorithm is hmac-sha-256.
      assertMacChallenge(
        await get(createHash('sha1').update(Buffer.alloc(0)).digest('base64')),
        401,
        'invalid_token',
      );
    });

    it('refuses a nonce replayed to another process on the same store', async () => {
      const config = loadConfig(
        {
          dataDir: server.store.dataDir,
          databaseUrl: server.store.databaseUrl,
          port: 0,
          host: '127.0.0.1',
          issuer: 'https://gatehouse.test',
          secret: Buffer.alloc(32, 7),
          logLevel: 'silent',
        },
        {},
      );
      const second: Gatehouse = await createGatehouse(config, {
        clock: server.clock,
        storage: server.store.reopen(),
      });
      await second.app.ready();
      const other = new InjectClient(second.app, second.config.basePath);
      try {
        const t = await macToken();
        // Both processes share the issuer, which is what the signature covers.
        const header = macHeaderDraft02(signing(t), server.clock.now());
        const viaSecond = await other.request('/v1/users/me', { headers: { authorization: header } });
        expectStatus(viaSecond, 200);
        assertMacChallenge(await me(header), 401, 'invalid_token');
      } finally {
        other.close();
        await second.app.close();
      }
    });

    describe('interop with Python oauthlib prepare_mac_header', { skip: oauthlibMissing }, () => {
      for (const draft of [0, 1] as const) {
        it(`draft=${draft}, hmac-sha-256: accepted, and its replay refused`, async () => {
          const t = await macToken();
          const header = await oauthlibMacHeader({
            token: t.token,
            key: t.key,
            uri: 'https://gatehouse.test/v1/users/me',
            method: 'GET',
            algorithm: 'hmac-sha-256',
            iat: t.iat,
            draft,
          });
          assert.match(header, draft === 1 ? /ts="/ : /^MAC id="[^"]+", nonce="\d+(\.\d+)?:/);
          const res = await me(header);
          expectStatus(res, 200);
          assert.equal((res.json as { id: string }).id, t.user.id);
          assertMacChallenge(await me(header), 401, 'invalid_token');
        });

        it(`draft=${draft}, hmac-sha-1: refused for an hmac-sha-256 token`, async () => {
          const t = await macToken();
          const header = await oauthlibMacHeader({
            token: t.token,
            key: t.key,
            uri: 'https://gatehouse.test/v1/users/me',
            method: 'GET',
            algorithm: 'hmac-sha-1',
            iat: t.iat,
            draft,
          });
          assertMacChallenge(await me(header), 401, 'invalid_token');
        });
      }

      it('draft=0 with a body: its bodyhash is checked', async () => {
        const { token } = await clientCredentialsToken(server, ['admin'], { token_type: 'mac' });
        const body = JSON.stringify({ name: 'py:scope' });
        const header = await oauthlibMacHeader({
          token: token.access_token,
          key: token.mac_key as string,
          uri: 'https://gatehouse.test/v1/scopes',
          method: 'POST',
          algorithm: 'hmac-sha-256',
          iat: decodeJwt(token.access_token).iat as number,
          draft: 0,
          body,
        });
        assert.match(header, /bodyhash="/);
        const send = (payload: string) =>
          server.http.request('/v1/scopes', {
            method: 'POST',
            body: payload,
            headers: { authorization: header, 'content-type': 'application/json' },
          });
        assertMacChallenge(await send(JSON.stringify({ name: 'py:other' })), 401, 'invalid_token');
        expectStatus(await send(body), 201);
      });
    });
  });
}
