import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { createGatehouse, type Gatehouse } from '../../src/compose/gatehouse.js';
import { CLIENT_ASSERTION_TYPE } from '../../src/core/clients/client-assertion.js';
import type { Client } from '../../src/core/model.js';
import { ManualClock } from '../../src/shared/clock.js';
import { apiClient, assertProblem, clientCredentialsToken, expectStatus } from '../helpers/api-requests.js';
import { backends } from '../helpers/backends.js';
import { basicAuth, type HttpResponse, type TestHttpClient } from '../helpers/https-client.js';
import { InjectClient } from '../helpers/inject-client.js';
import { startKeyServer, type KeyServer } from '../helpers/key-server.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { tableRows } from '../helpers/store-sql.js';
import { assertOAuthError, assertTokenSuccess, ISSUER } from '../helpers/token-responses.js';

/**
 * RFC 7523 private_key_jwt client authentication end to end, over HTTPS on each store: /token,
 * /introspect and /revoke; keys registered inline and at a jwks_uri served by a real HTTPS server on
 * loopback (which the server may reach only with GATEHOUSE_ALLOW_PRIVATE_JWKS_URI); the fetch's limits;
 * and a jti refused across two Gatehouse instances sharing one store.
 */

interface Signer {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

async function signer(kid: string): Promise<Signer> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid } };
}

/** A fresh assertion for `client` (RFC 7523 §3), valid for a minute from `now`. */
function assertion(client: Client, key: Signer, now: number, aud: string = ISSUER): Promise<string> {
  return new SignJWT({ jti: randomUUID() })
    .setProtectedHeader({ alg: 'ES256', kid: key.kid })
    .setIssuer(client.id)
    .setSubject(client.id)
    .setAudience(aud)
    .setIssuedAt(now)
    .setExpirationTime(now + 60)
    .sign(key.privateKey);
}

const assertionForm = (token: string, extra: Record<string, string> = {}) => ({
  client_assertion_type: CLIENT_ASSERTION_TYPE,
  client_assertion: token,
  ...extra,
});

const TIMEOUT_MS = 1000;

for (const backend of backends()) {
  describe(`private_key_jwt client authentication (${backend})`, () => {
    let server: TestServer;
    let keys: KeyServer;
    let inlineKey: Signer;
    let inline: Client;
    before(async () => {
      keys = await startKeyServer();
      server = await startTestServer(
        backend,
        // The key server listens on loopback: allowed here, refused by default (below).
        { allowPrivateJwksUri: true, jwksUriTimeoutMs: TIMEOUT_MS },
        { outboundCa: keys.ca },
      );
      inlineKey = await signer('inline-1');
      ({ client: inline } = await server.client({
        name: 'inline keys',
        grant_types: ['client_credentials'],
        scopes: ['read'],
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: { keys: [inlineKey.publicJwk] },
      }));
    });
    after(async () => {
      await server?.close();
      await keys?.close();
    });

    const now = () => server.clock.now();
    const token = (form: Record<string, string>, headers: Record<string, string> = {}) =>
      server.http.request('/token', { form: { grant_type: 'client_credentials', ...form }, headers });
    const keyedClient = async (jwksUri: string) =>
      (
        await server.client({
          name: `keys at ${jwksUri}`,
          grant_types: ['client_credentials'],
          token_endpoint_auth_method: 'private_key_jwt',
          jwks_uri: jwksUri,
        })
      ).client;

    it('issues a token for a valid assertion, once: the same jti again is refused, and it was stored', async () => {
      const signed = await assertion(inline, inlineKey, now());
      const body = assertTokenSuccess(await token(assertionForm(signed)));
      assert.equal(body.scope, 'read');
      const again = await token(assertionForm(signed));
      assertOAuthError(again, 401, 'invalid_client');
      assert.equal(
        (again.json as { error_description: string }).error_description,
        'client assertion rejected',
      );
      const rows = await tableRows(server.store.storage, 'used_jtis');
      assert.equal(rows.filter((row) => row.namespace === `client-assertion:${inline.id}`).length, 1);
    });

    it('refuses the client’s other ways in: a secret, Basic, its client_id alone, an assertion signed by another key', async () => {
      const attacker = await signer('inline-1');
      const attempts: HttpResponse[] = [
        await token({ client_id: inline.id, client_secret: 'guess' }),
        await token({}, { authorization: basicAuth(inline.id, '') }),
        await token({ client_id: inline.id }),
        await token(assertionForm(await assertion(inline, attacker, now()))),
      ];
      for (const res of attempts) assertOAuthError(res, 401, 'invalid_client');
    });

    it('authenticates at /introspect and /revoke too, aud the issuer or the endpoint’s own URL', async () => {
      const issued = assertTokenSuccess(
        await token(assertionForm(await assertion(inline, inlineKey, now()))),
      );
      const introspect = async () => {
        const signed = await assertion(inline, inlineKey, now(), `${ISSUER}/introspect`);
        const res = await server.http.request('/introspect', {
          form: assertionForm(signed, { token: issued.access_token }),
        });
        expectStatus(res, 200);
        return (res.json as { active: boolean }).active;
      };
      assert.equal(await introspect(), true);
      const revoked = await server.http.request('/revoke', {
        form: assertionForm(await assertion(inline, inlineKey, now(), `${ISSUER}/revoke`), {
          token: issued.access_token,
        }),
      });
      expectStatus(revoked, 200);
      assert.equal(await introspect(), false);
      // An assertion addressed to /revoke is not one for /introspect.
      const misaddressed = await server.http.request('/introspect', {
        form: assertionForm(await assertion(inline, inlineKey, now(), `${ISSUER}/revoke`), {
          token: issued.access_token,
        }),
      });
      assertOAuthError(misaddressed, 401, 'invalid_client');
    });

    it('fetches a jwks_uri once and caches it; a new kid fetches it again, once the cooldown has passed', async () => {
      const first = await signer('rotating-1');
      const second = await signer('rotating-2');
      keys.answers.set('/rotating', { json: { keys: [first.publicJwk] } });
      const client = await keyedClient(keys.url('/rotating'));
      const fetches = () => keys.requests.filter((path) => path === '/rotating').length;

      assertTokenSuccess(await token(assertionForm(await assertion(client, first, now()))));
      assertTokenSuccess(await token(assertionForm(await assertion(client, first, now()))));
      assert.equal(fetches(), 1, 'the second request used the cached set');

      // The client rotates: its new key is published, and used at once.
      keys.answers.set('/rotating', { json: { keys: [first.publicJwk, second.publicJwk] } });
      assertOAuthError(
        await token(assertionForm(await assertion(client, second, now()))),
        401,
        'invalid_client',
      );
      assert.equal(fetches(), 1, 'no fetch within the cooldown of the last');
      server.clock.advance(30);
      assertTokenSuccess(await token(assertionForm(await assertion(client, second, now()))));
      assert.equal(fetches(), 2, 'the unknown kid fetched the set again');
      assertTokenSuccess(await token(assertionForm(await assertion(client, first, now()))));
      assert.equal(fetches(), 2);
    });

    it('refuses a jwks_uri answer larger than 64 KiB', async () => {
      const key = await signer('big-1');
      const padding = 'x'.repeat(65 * 1024);
      keys.answers.set('/big', { json: { keys: [key.publicJwk], padding } });
      const client = await keyedClient(keys.url('/big'));
      const before = keys.requests.length;
      assertOAuthError(
        await token(assertionForm(await assertion(client, key, now()))),
        401,
        'invalid_client',
      );
      assert.ok(keys.requests.slice(before).includes('/big'), 'it was fetched, and refused for its size');
    });

    it('refuses when the jwks_uri never answers, once the fetch times out', async () => {
      const key = await signer('hang-1');
      keys.answers.set('/hang', 'never');
      const client = await keyedClient(keys.url('/hang'));
      const fetched = keys.requested('/hang');
      const pending = token(assertionForm(await assertion(client, key, now())));
      await fetched;
      // The key server holds the connection open; the answer comes from the fetch's own timeout.
      assertOAuthError(await pending, 401, 'invalid_client');
    });

    it('refuses a jwks_uri document that is not a JWK Set of public keys', async () => {
      const key = await signer('leaky-1');
      const { privateKey } = await generateKeyPair('ES256', { extractable: true });
      keys.answers.set('/leaky', { json: { keys: [{ ...(await exportJWK(privateKey)), kid: 'leaky-1' }] } });
      const client = await keyedClient(keys.url('/leaky'));
      assertOAuthError(
        await token(assertionForm(await assertion(client, key, now()))),
        401,
        'invalid_client',
      );
      assert.ok(keys.requests.includes('/leaky'));
    });

    it('takes private_key_jwt clients through /v1/clients, and refuses private or symmetric keys there', async () => {
      const api = apiClient(server, (await clientCredentialsToken(server, ['admin'])).token);
      const created = await api.post('/clients', {
        name: 'registered by API',
        grant_types: ['client_credentials'],
        token_endpoint_auth_method: 'private_key_jwt',
        jwks_uri: keys.url('/api-client'),
      });
      expectStatus(created, 201);
      const body = created.json as Record<string, unknown>;
      assert.equal(body.client_secret, undefined);
      assert.deepEqual(
        [body.token_endpoint_auth_method, body.jwks_uri, body.jwks, body.public],
        ['private_key_jwt', keys.url('/api-client'), null, false],
      );
      const { privateKey } = await generateKeyPair('ES256', { extractable: true });
      const withPrivate = await api.post('/clients', {
        name: 'leaks its key',
        grant_types: ['client_credentials'],
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: { keys: [await exportJWK(privateKey)] },
      });
      assertProblem(withPrivate, 400, 'jwks');
      const symmetric = await api.post('/clients', {
        name: 'shared secret',
        grant_types: ['client_credentials'],
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: { keys: [{ kty: 'oct', k: 'c2VjcmV0' }] },
      });
      assertProblem(symmetric, 400, 'jwks');
      const rotate = await api.post(`/clients/${body.client_id as string}/rotate-secret`, {});
      expectStatus(rotate, 409);
    });

    it('advertises private_key_jwt and its algorithms for every endpoint that takes it (RFC 8414 §2)', async () => {
      const metadata = (await server.http.request('/.well-known/oauth-authorization-server')).json as Record<
        string,
        unknown
      >;
      const algorithms = ['RS256', 'PS256', 'ES256', 'EdDSA'];
      assert.deepEqual(metadata.token_endpoint_auth_methods_supported, [
        'client_secret_basic',
        'client_secret_post',
        'private_key_jwt',
        'none',
      ]);
      assert.deepEqual(metadata.token_endpoint_auth_signing_alg_values_supported, algorithms);
      assert.deepEqual(metadata.introspection_endpoint_auth_methods_supported, [
        'client_secret_basic',
        'client_secret_post',
        'private_key_jwt',
      ]);
      assert.deepEqual(metadata.introspection_endpoint_auth_signing_alg_values_supported, algorithms);
      assert.deepEqual(metadata.revocation_endpoint_auth_methods_supported, [
        'client_secret_basic',
        'client_secret_post',
        'private_key_jwt',
        'none',
      ]);
      assert.deepEqual(metadata.revocation_endpoint_auth_signing_alg_values_supported, algorithms);
    });

    describe('a second Gatehouse on the same store', () => {
      let b: Gatehouse;
      let bHttp: TestHttpClient;
      before(async () => {
        b = await createGatehouse(server.gatehouse.config, {
          clock: new ManualClock(server.clock.now()),
          storage: server.store.reopen(),
        });
        await b.app.ready();
        bHttp = new InjectClient(b.app, b.config.basePath);
      });
      after(async () => {
        bHttp?.close();
        await b?.app.close();
      });

      it('accepts a jti once across both: of concurrent requests with one assertion, exactly one succeeds', async () => {
        const signed = await assertion(inline, inlineKey, now());
        const form = { grant_type: 'client_credentials', ...assertionForm(signed) };
        const answers = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            (i % 2 === 0 ? server.http : bHttp).request('/token', { form }),
          ),
        );
        assert.deepEqual(answers.map((res) => res.status).sort(), [200, ...Array<number>(9).fill(401)]);
        // And a new assertion works at B alone.
        const fresh = await bHttp.request('/token', {
          form: {
            grant_type: 'client_credentials',
            ...assertionForm(await assertion(inline, inlineKey, now())),
          },
        });
        assertTokenSuccess(fresh);
      });
    });
  });

  describe(`jwks_uri on a non-public address, without GATEHOUSE_ALLOW_PRIVATE_JWKS_URI (${backend})`, () => {
    let server: TestServer;
    let keys: KeyServer;
    before(async () => {
      keys = await startKeyServer();
      server = await startTestServer(backend, {}, { outboundCa: keys.ca });
    });
    after(async () => {
      await server?.close();
      await keys?.close();
    });

    it('never fetches it, whether the URL names the address or a name that resolves to it', async () => {
      const key = await signer('private-1');
      keys.answers.set('/private', { json: { keys: [key.publicJwk] } });
      const port = new URL(keys.origin).port;
      for (const uri of [keys.url('/private'), `https://localhost:${port}/private`]) {
        const { client } = await server.client({
          name: `keys at ${uri}`,
          grant_types: ['client_credentials'],
          token_endpoint_auth_method: 'private_key_jwt',
          jwks_uri: uri,
        });
        const res = await server.http.request('/token', {
          form: {
            grant_type: 'client_credentials',
            ...assertionForm(await assertion(client, key, server.clock.now())),
          },
        });
        assertOAuthError(res, 401, 'invalid_client');
      }
      assert.deepEqual(keys.requests, [], 'the key server was never asked');
    });
  });
}
