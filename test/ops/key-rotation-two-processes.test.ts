import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { createGatehouse, type Gatehouse } from '../../src/compose/gatehouse.js';
import { ManualClock } from '../../src/shared/clock.js';
import {
  apiClient,
  clientCredentialsToken,
  expectStatus,
  type Credentials,
} from '../helpers/api-requests.js';
import { backends } from '../helpers/backends.js';
import { basicAuth, HttpsClient } from '../helpers/https-client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

/**
 * Two Gatehouse processes on one store (here two instances, each with its own store handle, clock and
 * key ring). B stays idle: nothing it is asked may cause the re-read, so only its key ring's timer can
 * bring it the rotation; its manual clock never moves, so its stale-view check never fires either.
 * The bound is the default keyRefreshIntervalSeconds (5 s); 15 s is only the failure bound.
 */
const BOUND_MS = 15_000;

const kidOf = (token: string) => decodeProtectedHeader(token).kid;

for (const backend of backends()) {
  describe(`key rotation and revocation reach an idle second process (${backend})`, () => {
    let a: TestServer;
    let b: Gatehouse;
    let bHttp: HttpsClient;
    let reader: Credentials;
    before(async () => {
      a = await startTestServer(backend);
      b = await createGatehouse(a.gatehouse.config, { clock: new ManualClock(), storage: a.store.reopen() });
      const url = await b.listen();
      bHttp = new HttpsClient(url.replace('localhost', '127.0.0.1'), b.tls?.cert ?? '');
      reader = (await clientCredentialsToken(a, ['read'])).credentials;
    });
    after(async () => {
      bHttp?.close();
      await b?.app.close();
      await a?.close();
    });

    const tokenFromB = async () => {
      const res = await bHttp.request('/token', {
        form: { grant_type: 'client_credentials' },
        headers: { authorization: basicAuth(reader.id, reader.secret) },
      });
      expectStatus(res, 200);
      return (res.json as { access_token: string }).access_token;
    };
    const introspectAtB = async (token: string) => {
      const res = await bHttp.request('/introspect', {
        form: { token },
        headers: { authorization: basicAuth(reader.id, reader.secret) },
      });
      expectStatus(res, 200);
      return (res.json as { active: boolean }).active;
    };
    const admin = async () => apiClient(a, (await clientCredentialsToken(a, ['admin'])).token);

    it('B signs its next token with a key rotated in A, without a request to B in between', async () => {
      const before = b.keyRing.activeKid;
      const rotated = await (await admin()).post('/signing-keys');
      expectStatus(rotated, 201);
      const kid = (rotated.json as { kid: string }).kid;
      assert.notEqual(kid, before);
      await waitFor(async () => b.keyRing.activeKid === kid, BOUND_MS, 'B never saw the rotated key');

      const token = await tokenFromB();
      assert.equal(kidOf(token), kid);
      const jwks = (await bHttp.request('/jwks')).json as JSONWebKeySet;
      await jwtVerify(token, createLocalJWKSet(jwks), { issuer: a.gatehouse.config.issuer, typ: 'at+jwt' });
    });

    it('a key revoked in A leaves B’s /jwks at once; B refuses its tokens and stops signing with it', async () => {
      const signedByB = await tokenFromB();
      const compromised = kidOf(signedByB) as string;
      assert.equal(await introspectAtB(signedByB), true);

      const res = await (await admin()).post(`/signing-keys/${compromised}/revoke`);
      expectStatus(res, 201);
      // /jwks reads the store on each request: no process publishes a revoked key after this.
      const jwks = (await bHttp.request('/jwks')).json as JSONWebKeySet;
      assert.ok(!jwks.keys.some((key) => key.kid === compromised), 'B still publishes the revoked key');

      await waitFor(
        async () => b.keyRing.activeKid !== compromised,
        BOUND_MS,
        'B never stopped signing with the revoked key',
      );
      assert.equal(await introspectAtB(signedByB), false);
      const next = await tokenFromB();
      assert.notEqual(kidOf(next), compromised);
      assert.equal(kidOf(next), a.gatehouse.keyRing.activeKid);
      assert.equal(await introspectAtB(next), true);
    });
  });
}
