import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeProtectedHeader, type JSONWebKeySet } from 'jose';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  apiClient,
  assertProblem,
  clientCredentialsToken,
  expectStatus,
  introspection,
  locationPath,
  tokenFor,
  type Credentials,
} from '../helpers/api-requests.js';

interface KeyBody {
  kid: string;
  alg: string;
  status: string;
  retired_at: string | null;
  revoked_at: string | null;
}

const kidOf = (token: string) => decodeProtectedHeader(token).kid;

for (const backend of backends()) {
  describe(`POST /v1/signing-keys/{kid}/revoke (${backend})`, () => {
    let server: TestServer;
    /** A confidential client that asks for tokens and introspects them. */
    let reader: Credentials;
    before(async () => {
      server = await startTestServer(backend);
      reader = (await clientCredentialsToken(server, ['read'])).credentials;
    });
    after(async () => {
      await server.close();
    });

    const admin = async () => apiClient(server, (await clientCredentialsToken(server, ['admin'])).token);
    const newToken = async () =>
      (await tokenFor(server, { grant_type: 'client_credentials' }, reader)).access_token;
    const jwksKids = async () =>
      ((await server.http.request('/jwks')).json as JSONWebKeySet).keys.map((key) => key.kid);

    it('revokes the active key: a new key signs, the old one leaves /jwks and its tokens die', async () => {
      const api = await admin();
      const before = await newToken();
      const compromised = kidOf(before) as string;
      assert.equal((await introspection(server, reader, before)).active, true);
      const oldAdmin = await admin();

      const res = await api.post(`/signing-keys/${compromised}/revoke`);
      expectStatus(res, 201);
      assert.equal(locationPath(res), `/v1/signing-keys/${compromised}`);
      const revoked = res.json as KeyBody;
      assert.equal(revoked.status, 'revoked');
      assert.equal(typeof revoked.revoked_at, 'string');
      assert.equal(typeof revoked.retired_at, 'string');

      // At once, in this process: gone from /jwks, its tokens inactive and refused by /v1 itself.
      const published = await jwksKids();
      assert.ok(!published.includes(compromised), 'the revoked key is still in /jwks');
      assert.deepEqual(await introspection(server, reader, before), { active: false });
      assertProblem(await oldAdmin.get('/signing-keys'), 401);

      // The server keeps signing, with the key that replaced it.
      const afterwards = await newToken();
      const replacement = kidOf(afterwards);
      assert.notEqual(replacement, compromised);
      assert.ok(published.includes(replacement));
      assert.equal((await introspection(server, reader, afterwards)).active, true);

      const listed = ((await (await admin()).get('/signing-keys')).json as { items: KeyBody[] }).items;
      assert.equal(listed.find((key) => key.kid === compromised)?.status, 'revoked');
      // The ID tokens' RS256 key is another algorithm's: it stays active, untouched.
      assert.deepEqual(
        listed.filter((key) => key.status === 'active' && key.alg === 'ES256').map((key) => key.kid),
        [replacement],
      );
      assert.equal(listed.filter((key) => key.status === 'active').length, 2);

      // Revoking it again changes nothing, not even the time it was revoked.
      const again = await (await admin()).post(`/signing-keys/${compromised}/revoke`);
      expectStatus(again, 201);
      assert.equal((again.json as KeyBody).revoked_at, revoked.revoked_at);
      assert.equal(kidOf(await newToken()), replacement, 'a second revocation rotated again');
    });

    it('revokes a retired key and leaves the active one signing', async () => {
      const api = await admin();
      const signedByRetired = await newToken();
      const retired = kidOf(signedByRetired) as string;
      const rotated = await api.post('/signing-keys');
      expectStatus(rotated, 201);
      const active = (rotated.json as KeyBody).kid;
      const signedByActive = await newToken();
      assert.equal(kidOf(signedByActive), active);

      expectStatus(await (await admin()).post(`/signing-keys/${retired}/revoke`), 201);
      assert.deepEqual(await introspection(server, reader, signedByRetired), { active: false });
      assert.equal((await introspection(server, reader, signedByActive)).active, true);
      assert.equal(kidOf(await newToken()), active);
      const published = await jwksKids();
      assert.ok(!published.includes(retired));
      assert.ok(published.includes(active));
    });

    it('answers 404 for an unknown kid and changes nothing', async () => {
      const api = await admin();
      const before = ((await api.get('/signing-keys')).json as { items: KeyBody[] }).items;
      assertProblem(await api.post('/signing-keys/no-such-kid/revoke'), 404, 'kid');
      assert.deepEqual(((await api.get('/signing-keys')).json as { items: KeyBody[] }).items, before);
    });

    it('needs the admin scope', async () => {
      const { token } = await clientCredentialsToken(server, ['read']);
      const kid = kidOf(token.access_token) as string;
      assertProblem(await apiClient(server, token).post(`/signing-keys/${kid}/revoke`), 403);
      assertProblem(await apiClient(server, undefined).post(`/signing-keys/${kid}/revoke`), 401);
      assert.ok((await jwksKids()).includes(kid));
    });
  });
}
