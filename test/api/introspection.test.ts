import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { backends } from '../helpers/backends.js';
import { basicAuth } from '../helpers/https-client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  clientCredentialsToken,
  expectStatus,
  introspect,
  introspection,
  tokenFor,
  userToken,
} from '../helpers/api-requests.js';

const ISSUER = 'https://gatehouse.test';

for (const backend of backends()) {
  describe(`POST /introspect (${backend})`, () => {
    let server: TestServer;
    // The resource server asking: a confidential client of its own.
    let caller: { id: string; secret: string };
    before(async () => {
      server = await startTestServer(backend);
      const { client, secret } = await server.client({ name: 'resource server', scopes: [] });
      caller = { id: client.id, secret };
    });
    after(async () => {
      await server.close();
    });

    it('describes an active client_credentials access token with every RFC 7662 member', async () => {
      const { client, token } = await clientCredentialsToken(server, ['read', 'write']);
      const body = await introspection(server, caller, token.access_token);
      const claims = decodeJwt(token.access_token);
      assert.deepEqual(body, {
        active: true,
        scope: 'read write',
        client_id: client.id,
        token_type: 'bearer',
        exp: claims.exp,
        iat: claims.iat,
        sub: client.id,
        aud: ISSUER,
        iss: ISSUER,
        jti: claims.jti,
      });
    });

    it('names the user of a user access token and of its refresh token', async () => {
      const { client, user, token } = await userToken(server, ['profile']);
      const access = await introspection(server, caller, token.access_token);
      assert.equal(access.active, true);
      assert.equal(access.username, user.username);
      assert.equal(access.sub, user.id);
      assert.equal(access.client_id, client.id);
      assert.equal(access.scope, 'profile');

      const refresh = await introspection(server, caller, token.refresh_token as string, 'refresh_token');
      assert.equal(refresh.active, true);
      assert.equal(refresh.username, user.username);
      assert.equal(refresh.client_id, client.id);
      assert.equal(refresh.scope, 'profile');
      assert.equal(refresh.iss, ISSUER);
      assert.equal(refresh.token_type, undefined);
      assert.equal(typeof refresh.exp, 'number');
      // A wrong hint only changes the order of the look-ups.
      const hinted = await introspection(server, caller, token.refresh_token as string, 'access_token');
      assert.equal(hinted.active, true);
    });

    it('answers exactly {"active":false} for unknown, forged, expired and retired tokens', async () => {
      const { token } = await clientCredentialsToken(server, ['read']);
      const [header, payload] = token.access_token.split('.');
      const forged = `${header}.${payload}.${Buffer.alloc(64, 1).toString('base64url')}`;
      for (const candidate of ['nonsense', 'a.b.c', forged, 'rt_unknown']) {
        assert.deepEqual(await introspection(server, caller, candidate), { active: false });
      }

      const { token: userTokens, credentials } = await userToken(server, ['profile']);
      // Rotating the refresh token retires the old one.
      await tokenFor(
        server,
        { grant_type: 'refresh_token', refresh_token: userTokens.refresh_token as string },
        credentials,
      );
      assert.deepEqual(await introspection(server, caller, userTokens.refresh_token as string), {
        active: false,
      });

      server.clock.advance(3601);
      try {
        assert.deepEqual(await introspection(server, caller, token.access_token), { active: false });
      } finally {
        server.clock.advance(-3601);
      }
    });

    it('ends a user token whose grant was revoked, and a client token whose client was deleted', async () => {
      const { token, user } = await userToken(server, ['profile']);
      const grants = await server.store.storage.grants.listByUser(user.id);
      assert.equal(grants.length, 1);
      await server.store.storage.grants.revoke(grants[0]!.id, server.clock.now());
      assert.deepEqual(await introspection(server, caller, token.access_token), { active: false });
      assert.deepEqual(await introspection(server, caller, token.refresh_token as string), { active: false });

      const machine = await clientCredentialsToken(server, ['read']);
      assert.equal((await introspection(server, caller, machine.token.access_token)).active, true);
      await server.store.storage.clients.delete(machine.client.id);
      assert.deepEqual(await introspection(server, caller, machine.token.access_token), { active: false });
    });

    it('gives a MAC token its key only to its own client or to a client entitled with mac-keys', async () => {
      const { credentials, token } = await userToken(server, ['profile'], { token_type: 'mac' });
      assert.equal(token.token_type, 'mac');
      const own = await introspection(server, credentials, token.access_token);
      assert.equal(own.token_type, 'mac');
      assert.equal(own.mac_key, token.mac_key);
      assert.equal(own.mac_algorithm, 'hmac-sha-256');

      const stranger = await introspection(server, caller, token.access_token);
      assert.equal(stranger.active, true);
      assert.equal(stranger.mac_key, undefined);

      const entitled = await server.client({ name: 'mac resource server', scopes: ['mac-keys'] });
      const withScope = await introspection(
        server,
        { id: entitled.client.id, secret: entitled.secret },
        token.access_token,
      );
      assert.equal(withScope.mac_key, token.mac_key);

      const bearerToken = await clientCredentialsToken(server, ['read']);
      const plain = await introspection(
        server,
        { id: entitled.client.id, secret: entitled.secret },
        bearerToken.token.access_token,
      );
      assert.equal(plain.mac_key, undefined);
    });

    it('requires a confidential, authenticated client and a form with a token', async () => {
      const { token } = await clientCredentialsToken(server, ['read']);
      const wrong = await introspect(
        server,
        { id: caller.id, secret: 'wrong' },
        { token: token.access_token },
      );
      expectStatus(wrong, 401);
      assert.match(String(wrong.headers['www-authenticate']), /^Basic realm=/);
      assert.equal((wrong.json as { error: string }).error, 'invalid_client');

      const anonymous = await server.http.request('/introspect', { form: { token: token.access_token } });
      expectStatus(anonymous, 401);

      const publicClient = await server.client({
        name: 'spa',
        public: true,
        redirect_uris: ['https://spa.example/cb'],
        grant_types: ['authorization_code'],
      });
      const fromPublic = await server.http.request('/introspect', {
        form: { token: token.access_token, client_id: publicClient.client.id },
      });
      expectStatus(fromPublic, 401);
      assert.equal((fromPublic.json as { error: string }).error, 'invalid_client');

      const missing = await introspect(server, caller, {});
      expectStatus(missing, 400);
      assert.equal((missing.json as { error: string }).error, 'invalid_request');

      const json = await server.http.request('/introspect', {
        body: JSON.stringify({ token: token.access_token }),
        headers: { 'content-type': 'application/json', authorization: basicAuth(caller.id, caller.secret) },
      });
      expectStatus(json, 415);
    });

    it('is listed, with revocation, in the authorization server metadata', async () => {
      const res = await server.http.request('/.well-known/oauth-authorization-server');
      expectStatus(res, 200);
      const metadata = res.json as Record<string, unknown>;
      assert.equal(metadata.introspection_endpoint, `${ISSUER}/introspect`);
      assert.equal(metadata.revocation_endpoint, `${ISSUER}/revoke`);
    });
  });
}
