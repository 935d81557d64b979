import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../helpers/backends.js';
import { basicAuth, type TestHttpClient } from '../helpers/https-client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const ATTACKER_ADDRESS = '127.0.0.2';
const REDIRECT = 'https://app.example/cb';

for (const backend of backends()) {
  describe(`rate-limit keys: unauthenticated traffic cannot spend a client's allowance (${backend})`, () => {
    let server: TestServer;
    let attacker: TestHttpClient;
    before(async () => {
      server = await startTestServer(backend, {
        purgeIntervalSeconds: 0,
        rateLimitWindowSeconds: 60,
        rateLimits: {
          token: { perAddress: 100, perClient: 3 },
          authorize: { perAddress: 100, perClient: 3 },
          introspect: { perAddress: 100, perClient: 3 },
          signIn: { perAddress: 100, perClient: 0 },
          revoke: { perAddress: 4, perClient: 3 },
        },
      });
      attacker = server.httpFrom(ATTACKER_ADDRESS);
    });
    after(async () => {
      await server.close();
    });

    it("at /authorize, a few addresses naming a client's id use up only their own allowance", async () => {
      server.clock.advance(60);
      const { client } = await server.client({ redirect_uris: [REDIRECT], public: true, name: 'app' });
      const path = `/authorize?response_type=code&client_id=${client.id}&redirect_uri=${encodeURIComponent(REDIRECT)}`;
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await attacker.request(path)).status);
      assert.notEqual(statuses[2], 429);
      assert.equal(statuses[3], 429, 'the attacking address is limited per client');
      // The client's users elsewhere are not.
      assert.notEqual((await server.http.request(path)).status, 429);
    });

    it("at /token, requests naming a public client's id without a secret use up only their address's allowance", async () => {
      server.clock.advance(60);
      const { client } = await server.client({
        redirect_uris: [REDIRECT],
        public: true,
        grant_types: ['authorization_code', 'refresh_token'],
        name: 'app',
      });
      const form = { grant_type: 'refresh_token', refresh_token: 'rt_nothing', client_id: client.id };
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await attacker.request('/token', { form })).status);
      assert.deepEqual(statuses, [400, 400, 400, 429]);
      const honest = await server.http.request('/token', { form });
      assert.equal(honest.status, 400, 'the honest user is answered, not limited');
      assert.equal((honest.json as { error: string }).error, 'invalid_grant');
    });

    it("at /token, client assertions naming a client (RFC 7523) use up only their address's allowance", async () => {
      server.clock.advance(60);
      const { client } = await server.client({
        grant_types: ['client_credentials'],
        name: 'signer',
        token_endpoint_auth_method: 'private_key_jwt',
        jwks_uri: 'https://keys.example/jwks',
      });
      // Each a different (unsigned) assertion naming the client, as an attacker can make at will.
      const forged = () => ({
        grant_type: 'client_credentials',
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(
          JSON.stringify({ iss: client.id, sub: client.id, jti: String(Math.random()) }),
        ).toString('base64url')}.`,
      });
      const statuses = [];
      for (let i = 0; i < 4; i++)
        statuses.push((await attacker.request('/token', { form: forged() })).status);
      assert.deepEqual(statuses, [401, 401, 401, 429], 'counted per client and address, whatever the jti');
      assert.equal(
        (await server.http.request('/token', { form: forged() })).status,
        401,
        'not limited elsewhere',
      );
    });

    it('at /token, a 429 says rate_limited (not the device grant’s slow_down) with Retry-After', async () => {
      server.clock.advance(60);
      const { client, secret } = await server.client({ grant_types: ['client_credentials'] });
      const cc = { grant_type: 'client_credentials' };
      for (let i = 0; i < 3; i++)
        assert.equal((await server.http.token(cc, { id: client.id, secret })).status, 200);
      // The client authenticated with its secret is counted as one client from every address.
      const limited = await attacker.token(cc, { id: client.id, secret });
      assert.equal(limited.status, 429);
      assert.equal((limited.json as { error: string }).error, 'rate_limited');
      assert.equal(limited.headers['cache-control'], 'no-store');
      const retryAfter = Number(limited.headers['retry-after']);
      assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
    });

    it('limits /revoke per address and per authenticated client', async () => {
      server.clock.advance(60);
      const { client, secret } = await server.client({ grant_types: ['client_credentials'] });
      const revokeFrom = (http: TestHttpClient, id: string, key: string) =>
        http.request('/revoke', {
          form: { token: 'unknown' },
          headers: { authorization: basicAuth(id, key) },
        });
      // Per client: three for the client, wherever they come from; the fourth is refused.
      assert.equal((await revokeFrom(server.http, client.id, secret)).status, 200);
      assert.equal((await revokeFrom(attacker, client.id, secret)).status, 200);
      assert.equal((await revokeFrom(server.http, client.id, secret)).status, 200);
      const perClient = await revokeFrom(attacker, client.id, secret);
      assert.equal(perClient.status, 429);
      assert.equal((perClient.json as { error: string }).error, 'rate_limited');
      assert.ok(Number(perClient.headers['retry-after']) >= 1);

      // Per address: the attacker's fifth request in the window is refused, whatever it names.
      server.clock.advance(60);
      const other = await server.client({ grant_types: ['client_credentials'] });
      const statuses = [];
      for (let i = 0; i < 5; i++)
        statuses.push((await revokeFrom(attacker, other.client.id, `guess ${i}`)).status);
      assert.deepEqual(statuses, [401, 401, 401, 401, 429]);
      // Someone guessing the secret spent nothing of the client's own allowance.
      assert.equal((await revokeFrom(server.http, other.client.id, other.secret)).status, 200);
    });
  });
}
