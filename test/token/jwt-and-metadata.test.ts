import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { deriveServerKeys } from '../../src/compose/engine-policy.js';
import { KeyRing } from '../../src/core/keys/key-ring.js';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  assertTokenSuccess,
  fetchJwks,
  ISSUER,
  jwtHeader,
  verifyAccessToken,
} from '../helpers/token-responses.js';

const REDIRECT = 'https://app.example/callback';

for (const backend of backends()) {
  describe(`access tokens, keys and metadata (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(backend);
    });
    after(async () => {
      await server.close();
    });

    async function clientCredentialsToken(credentials: { id: string; secret: string }): Promise<string> {
      const res = await server.http.token({ grant_type: 'client_credentials' }, credentials);
      return assertTokenSuccess(res).access_token;
    }

    it('issues RFC 9068 JWTs with every required claim', async () => {
      const { client, secret } = await server.client({
        redirect_uris: [REDIRECT],
        grant_types: ['authorization_code', 'refresh_token'],
        scopes: ['read', 'write'],
      });
      const { user } = await server.user();
      const { code, grant } = await server.seedCode({ client, user, scope: ['write'] });
      const body = assertTokenSuccess(
        await server.http.token(
          { grant_type: 'authorization_code', code, redirect_uri: REDIRECT },
          { id: client.id, secret },
        ),
      );
      const now = server.clock.now();
      const { payload, protectedHeader } = await verifyAccessToken(server, body.access_token);
      assert.equal(protectedHeader.typ, 'at+jwt');
      assert.equal(typeof protectedHeader.kid, 'string');
      assert.equal(protectedHeader.kid, server.gatehouse.keyRing.activeKid);
      assert.equal(payload.iss, ISSUER);
      assert.equal(payload.sub, user.id);
      assert.equal(payload.aud, ISSUER);
      assert.equal(payload.client_id, client.id);
      assert.equal(payload.scope, 'write');
      assert.equal(payload.iat, now);
      assert.equal(payload.exp, now + 3600);
      assert.equal(payload.exp, now + body.expires_in);
      assert.equal(payload.gid, grant.id);
      assert.match(String(payload.jti), /^[0-9a-f-]{36}$/);
    });

    it('gives every token a distinct jti, and the token expires when exp says', async () => {
      const { client, secret } = await server.client({ scopes: ['read'] });
      const credentials = { id: client.id, secret };
      const a = await verifyAccessToken(server, await clientCredentialsToken(credentials));
      const b = await verifyAccessToken(server, await clientCredentialsToken(credentials));
      assert.notEqual(a.payload.jti, b.payload.jti);
      const token = await clientCredentialsToken(credentials);
      const jwks = createLocalJWKSet(await fetchJwks(server));
      await assert.rejects(
        jwtVerify(token, jwks, { currentDate: new Date((server.clock.now() + 3601) * 1000) }),
        /exp/,
      );
    });

    it('publishes only public keys in /jwks', async () => {
      const res = await server.http.request('/jwks');
      assert.equal(res.status, 200);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      const { keys } = res.json as { keys: Record<string, unknown>[] };
      assert.ok(keys.length >= 1);
      for (const key of keys) {
        assert.equal(key.d, undefined, 'a private key component is published');
        assert.equal(typeof key.kid, 'string');
        assert.equal(key.use, 'sig');
      }
    });

    it('keeps old tokens verifiable after KeyRing.rotate(), and signs new ones with the new key', async () => {
      const { client, secret } = await server.client({ scopes: ['read'] });
      const credentials = { id: client.id, secret };
      const before = await clientCredentialsToken(credentials);
      const oldKid = jwtHeader(before).kid;
      assert.equal(oldKid, server.gatehouse.keyRing.activeKid);

      const newKid = await server.gatehouse.keyRing.rotate();
      assert.notEqual(newKid, oldKid);

      const afterRotation = await clientCredentialsToken(credentials);
      assert.equal(jwtHeader(afterRotation).kid, newKid);

      const { keys } = await fetchJwks(server);
      const kids = keys.map((key) => key.kid);
      assert.ok(kids.includes(oldKid as string), 'the retired key left /jwks too early');
      assert.ok(kids.includes(newKid));

      // Both verify against the one JWK Set a resource server fetches after the rotation.
      assert.equal((await verifyAccessToken(server, before)).protectedHeader.kid, oldKid);
      assert.equal((await verifyAccessToken(server, afterRotation)).protectedHeader.kid, newKid);

      // A week later the retired key is gone from /jwks (its tokens expired long ago).
      server.clock.advance(7 * 86400 + 1);
      const later = (await fetchJwks(server)).keys.map((key) => key.kid);
      assert.ok(!later.includes(oldKid as string));
      assert.ok(later.includes(newKid));
    });

    it('picks up a key another process rotated into the shared store', async () => {
      const { client, secret } = await server.client({ scopes: ['read'] });
      const credentials = { id: client.id, secret };
      const oldKid = jwtHeader(await clientCredentialsToken(credentials)).kid;
      // A second process (the CLI's `keys rotate`) rotates through its own store handle.
      const otherHandle = server.store.reopen();
      const other = new KeyRing({
        store: otherHandle.signingKeys,
        keyEncryptionKey: deriveServerKeys(server.gatehouse.config.secret).keyEncryptionKey,
        clock: server.clock,
        algorithm: 'ES256',
        retiredKeyRetentionSeconds: 7 * 86400,
        refreshIntervalSeconds: 10,
      });
      const newKid = await other.rotate();
      assert.notEqual(newKid, oldKid);
      // Past the refresh interval the server re-reads the store; the first signature may still use
      // the old key while the reload runs in the background.
      server.clock.advance(11);
      await clientCredentialsToken(credentials);
      let seen: unknown;
      for (let i = 0; i < 50 && seen !== newKid; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        seen = jwtHeader(await clientCredentialsToken(credentials)).kid;
      }
      assert.equal(seen, newKid);
    });

    it('describes itself at /.well-known/oauth-authorization-server (RFC 8414)', async () => {
      await server.client({ scopes: ['reports:read'] });
      const res = await server.http.request('/.well-known/oauth-authorization-server');
      assert.equal(res.status, 200);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      const metadata = res.json as Record<string, unknown>;
      assert.equal(metadata.issuer, ISSUER);
      assert.equal(metadata.token_endpoint, `${ISSUER}/token`);
      assert.equal(metadata.jwks_uri, `${ISSUER}/jwks`);
      const grantTypes = metadata.grant_types_supported as string[];
      for (const grantType of ['authorization_code', 'password', 'client_credentials', 'refresh_token']) {
        assert.ok(grantTypes.includes(grantType), `grant_types_supported lacks ${grantType}`);
      }
      // What a client may ask for: the operator's scopes and the built-in ones, never admin (docs/api.md).
      const discovery = (await server.http.request('/.well-known/openid-configuration')).json as {
        scopes_supported: string[];
      };
      for (const scopes of [metadata.scopes_supported as string[], discovery.scopes_supported]) {
        for (const scope of ['profile', 'openid', 'email', 'offline_access', 'reports:read']) {
          assert.ok(scopes.includes(scope), `scopes_supported lacks ${scope}`);
        }
        assert.ok(!scopes.includes('admin'), 'admin is not advertised');
      }
      assert.deepEqual(metadata.code_challenge_methods_supported, ['S256']);
      assert.equal(metadata.authorization_response_iss_parameter_supported, true, 'RFC 9207 §3');
      const authMethods = metadata.token_endpoint_auth_methods_supported as string[];
      for (const method of ['client_secret_basic', 'client_secret_post', 'none']) {
        assert.ok(authMethods.includes(method));
      }
    });
  });
}
