import assert from 'node:assert/strict';
import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  calculateJwkThumbprint,
  createLocalJWKSet,
  decodeProtectedHeader,
  jwtVerify,
  type JSONWebKeySet,
  type JWK,
} from 'jose';
import { loadConfig } from '../../src/config.js';
import { ResourceServer } from 'gatehouse-oauth-resource-server';
import { apiClient, clientCredentialsToken, expectStatus, introspection } from '../helpers/api-requests.js';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const ISSUER = 'https://gatehouse.test';

describe('GATEHOUSE_SIGNING_ALG', () => {
  const env = { GATEHOUSE_SECRET: Buffer.alloc(32, 1).toString('base64url') };
  it('selects RS256, keeps ES256 the default, and refuses an unknown name instead of guessing', () => {
    assert.equal(loadConfig({}, env).signingAlgorithm, 'ES256');
    assert.equal(loadConfig({}, { ...env, GATEHOUSE_SIGNING_ALG: 'RS256' }).signingAlgorithm, 'RS256');
    assert.equal(loadConfig({}, { ...env, GATEHOUSE_SIGNING_ALG: 'EdDSA' }).signingAlgorithm, 'EdDSA');
    assert.throws(
      () => loadConfig({}, { ...env, GATEHOUSE_SIGNING_ALG: 'rs256' }),
      /GATEHOUSE_SIGNING_ALG must be one of ES256, EdDSA, RS256/,
    );
  });
});

for (const backend of backends()) {
  describe(`a Gatehouse signing with RS256 (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(backend, { signingAlgorithm: 'RS256' }, { transport: 'https' });
    });
    after(async () => {
      await server.close();
    });

    async function jwks(): Promise<JSONWebKeySet> {
      const res = await server.http.request('/jwks');
      expectStatus(res, 200);
      return res.json as JSONWebKeySet;
    }

    /** Verified as any RFC 9068 resource server would: jose, RS256 only, against /jwks. */
    async function verifyWithJose(token: string) {
      return jwtVerify(token, createLocalJWKSet(await jwks()), {
        algorithms: ['RS256'],
        issuer: ISSUER,
        audience: ISSUER,
        typ: 'at+jwt',
        currentDate: new Date(server.clock.now() * 1000),
      });
    }

    it('publishes a 2048-bit RSA key (e=65537) whose kid is its RFC 7638 thumbprint', async () => {
      const { keys } = await jwks();
      // One RSA key, the access tokens' and the ID tokens' alike, beside the ID tokens' ES256 key.
      assert.deepEqual(keys.map((k) => k.alg).sort(), ['ES256', 'RS256']);
      const key = keys.find((k) => k.alg === 'RS256') as JWK;
      assert.equal(key.kty, 'RSA');
      assert.equal(key.alg, 'RS256');
      assert.equal(key.use, 'sig');
      assert.equal(key.e, 'AQAB');
      assert.equal(typeof key.n, 'string');
      assert.equal(key.d, undefined, 'no private part');
      assert.equal(key.kid, await calculateJwkThumbprint({ kty: 'RSA', n: key.n, e: key.e }));
      const publicKey = createPublicKey({ key: key as JsonWebKey, format: 'jwk' });
      assert.equal(publicKey.asymmetricKeyDetails?.modulusLength, 2048);
    });

    it('issues tokens that jose verifies against /jwks, and that Gatehouse itself accepts', async () => {
      const { client, credentials, token } = await clientCredentialsToken(server, ['notes:read']);
      const { payload, protectedHeader } = await verifyWithJose(token.access_token);
      assert.deepEqual(protectedHeader, {
        alg: 'RS256',
        typ: 'at+jwt',
        kid: server.gatehouse.keyRing.activeKid,
      });
      assert.equal(payload.client_id, client.id);
      assert.equal(payload.scope, 'notes:read');
      // An RS256 token refused under an ES256-only allow-list: the algorithm is really RS256.
      await assert.rejects(
        jwtVerify(token.access_token, createLocalJWKSet(await jwks()), { algorithms: ['ES256'] }),
      );
      const introspected = await introspection(server, credentials, token.access_token);
      assert.equal(introspected.active, true);
    });

    it('rotates to a new RSA key; tokens of the retired key keep verifying', async () => {
      const admin = await clientCredentialsToken(server, ['admin']);
      const old = await clientCredentialsToken(server, ['notes:read']);
      const oldKid = decodeProtectedHeader(old.token.access_token).kid;

      const rotated = await apiClient(server, admin.token).post('/signing-keys');
      expectStatus(rotated, 201);
      const key = rotated.json as { kid: string; alg: string; public_jwk: Record<string, string> };
      assert.equal(key.alg, 'RS256');
      assert.equal(key.public_jwk.kty, 'RSA');
      assert.notEqual(key.kid, oldKid);

      const fresh = await clientCredentialsToken(server, ['notes:read']);
      assert.equal(decodeProtectedHeader(fresh.token.access_token).kid, key.kid);
      const { keys } = await jwks();
      assert.deepEqual(
        keys
          .filter((k) => k.alg === 'RS256')
          .map((k) => k.kid)
          .sort(),
        [oldKid, key.kid].sort(),
      );
      await verifyWithJose(fresh.token.access_token);
      await verifyWithJose(old.token.access_token);
      // Gatehouse's own validation (the /v1 bearer check) accepts both as well.
      expectStatus(await apiClient(server, admin.token).get('/signing-keys'), 200);
      const fresher = await clientCredentialsToken(server, ['admin']);
      expectStatus(await apiClient(server, fresher.token).get('/signing-keys'), 200);
    });

    it('is accepted by the resource-server library with its default algorithms', async () => {
      const library = new ResourceServer({
        issuer: ISSUER,
        jwksUri: `${server.http.baseUrl}/jwks`,
        ca: server.ca,
        now: () => server.clock.now(),
      });
      try {
        const { client, token } = await clientCredentialsToken(server, ['notes:read']);
        const verified = await library.authorize(
          {
            method: 'GET',
            url: '/notes',
            host: 'api.test',
            protocol: 'https',
            authorization: `Bearer ${token.access_token}`,
          },
          ['notes:read'],
        );
        assert.equal(verified.clientId, client.id);
      } finally {
        library.close();
      }
    });
  });
}
