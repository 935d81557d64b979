import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import type { Client, User } from '../../src/core/model.js';
import { backends } from '../helpers/backends.js';
import type { HttpResponse } from '../helpers/https-client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { apiClient, clientCredentialsToken, expectStatus } from '../helpers/api-requests.js';
import { assertTokenSuccess, fetchJwks, ISSUER, type TokenBody } from '../helpers/token-responses.js';

type OidcTokenBody = TokenBody & { id_token?: string };

const halfHash = (value: string) =>
  createHash('sha256').update(Buffer.from(value, 'ascii')).digest().subarray(0, 16).toString('base64url');

const SEVEN_RESPONSE_TYPES = [
  'code',
  'token',
  'id_token',
  'id_token token',
  'code id_token',
  'code token',
  'code id_token token',
];

for (const backend of backends()) {
  describe(`OpenID Provider over HTTPS: discovery, ID tokens, UserInfo (${backend})`, () => {
    let server: TestServer;
    let rp: { client: Client; secret: string };
    let alice: User;
    before(async () => {
      server = await startTestServer(backend);
      rp = await server.client({
        name: 'relying party',
        redirect_uris: ['https://rp.example/cb'],
        grant_types: ['authorization_code', 'refresh_token'],
        scopes: ['openid', 'profile', 'email', 'offline_access', 'read'],
      });
      alice = (
        await server.user('alice', 'correct horse battery', {
          email: 'alice@example.com',
          name: 'Alice Example',
        })
      ).user;
    });
    after(async () => {
      await server.close();
    });

    const credentials = () => ({ id: rp.client.id, secret: rp.secret });

    /** The code flow's token response for a code /authorize would have issued for `scope`. */
    async function codeFlow(scope: string[], nonce = 'n-0S6_WzA2Mj'): Promise<OidcTokenBody> {
      const authTime = server.clock.now() - 30;
      const { code } = await server.seedCode({
        client: rp.client,
        user: alice,
        scope,
        nonce,
        authTime,
        sid: 'sid-1',
      });
      const res = await server.http.token(
        { grant_type: 'authorization_code', code, redirect_uri: 'https://rp.example/cb' },
        credentials(),
      );
      return assertTokenSuccess(res) as OidcTokenBody;
    }

    /** Core §3.1.3.7: verified with the keys from jwks_uri, iss and aud checked. */
    async function verifyIdToken(token: string | undefined): Promise<JWTPayload> {
      assert.ok(token, 'an id_token');
      const { payload } = await jwtVerify(token, createLocalJWKSet(await fetchJwks(server)), {
        issuer: ISSUER,
        audience: rp.client.id,
        algorithms: ['RS256'],
        currentDate: new Date(server.clock.now() * 1000),
      });
      return payload;
    }

    const userInfo = (options: Parameters<TestServer['http']['request']>[1]) =>
      server.http.request('/userinfo', options);

    function assertChallenge(res: HttpResponse, status: number, error: string | undefined): void {
      assert.equal(res.status, status, res.text);
      const challenge = String(res.headers['www-authenticate']);
      assert.match(challenge, /^Bearer realm="gatehouse"/);
      if (error === undefined) assert.doesNotMatch(challenge, /error=/);
      else assert.match(challenge, new RegExp(`error="${error}"`));
      assert.equal(res.headers['cache-control'], 'no-store');
    }

    it('publishes /.well-known/openid-configuration with the RFC 8414 document’s issuer and endpoints (Discovery §3)', async () => {
      const res = await server.http.request('/.well-known/openid-configuration');
      expectStatus(res, 200);
      const oidc = res.json as Record<string, unknown>;
      const oauth = (await server.http.request('/.well-known/oauth-authorization-server')).json as Record<
        string,
        unknown
      >;
      for (const [member, value] of Object.entries(oauth)) {
        assert.deepEqual(oidc[member], value, `${member} differs between the two documents`);
      }
      assert.equal(oidc.issuer, ISSUER);
      assert.equal(oidc.authorization_endpoint, `${ISSUER}/authorize`);
      assert.equal(oidc.token_endpoint, `${ISSUER}/token`);
      assert.equal(oidc.jwks_uri, `${ISSUER}/jwks`);
      assert.equal(oidc.userinfo_endpoint, `${ISSUER}/userinfo`);
      assert.equal(oidc.end_session_endpoint, `${ISSUER}/logout`);
      assert.deepEqual(oidc.subject_types_supported, ['public']);
      assert.deepEqual(oidc.id_token_signing_alg_values_supported, ['RS256', 'ES256']);
      assert.deepEqual(oidc.response_types_supported, SEVEN_RESPONSE_TYPES);
      assert.deepEqual(oidc.response_modes_supported, ['query', 'fragment', 'form_post']);
      for (const scope of ['openid', 'profile', 'email', 'offline_access']) {
        assert.ok((oidc.scopes_supported as string[]).includes(scope), scope);
      }
      for (const claim of [
        'sub',
        'iss',
        'auth_time',
        'nonce',
        'sid',
        'name',
        'preferred_username',
        'email',
      ]) {
        assert.ok((oidc.claims_supported as string[]).includes(claim), claim);
      }
      assert.equal(oidc.claims_parameter_supported, false);
      assert.equal(oidc.request_parameter_supported, false);
      assert.equal(oidc.request_uri_parameter_supported, false);
      assert.deepEqual(oidc.code_challenge_methods_supported, ['S256']);
      assert.deepEqual(oidc.token_endpoint_auth_methods_supported, [
        'client_secret_basic',
        'client_secret_post',
        'private_key_jwt',
        'none',
      ]);
      assert.ok((oidc.grant_types_supported as string[]).includes('authorization_code'));
    });

    it('publishes the ID tokens’ RS256 and ES256 keys in /jwks beside the access tokens’ key', async () => {
      const jwks = (await fetchJwks(server)) as { keys: { alg?: string; kid?: string; use?: string }[] };
      assert.deepEqual(jwks.keys.map((key) => key.alg).sort(), ['ES256', 'RS256']);
      assert.ok(jwks.keys.every((key) => key.use === 'sig' && typeof key.kid === 'string'));
    });

    it('code flow with openid: an RS256 ID token with the nonce, auth_time, sid and at_hash; no refresh token', async () => {
      const body = await codeFlow(['openid', 'profile']);
      assert.equal(body.refresh_token, undefined, 'Core §11: no offline_access');
      const claims = await verifyIdToken(body.id_token);
      assert.equal(decodeProtectedHeader(body.id_token ?? '').typ, 'JWT');
      assert.equal(claims.sub, alice.id);
      assert.equal(claims.nonce, 'n-0S6_WzA2Mj');
      assert.equal(claims.auth_time, server.clock.now() - 30);
      assert.equal(claims.sid, 'sid-1');
      assert.equal(claims.azp, rp.client.id);
      assert.equal(claims.at_hash, halfHash(body.access_token));
      // The ID token is no access token: /v1 refuses it.
      expectStatus(
        await apiClient(server, { ...body, access_token: body.id_token ?? '' }).get('/users/me'),
        401,
      );
    });

    it('refresh with offline_access: a new ID token, same sub, auth_time and sid, no nonce (Core §12.2)', async () => {
      const first = await codeFlow(['openid', 'offline_access']);
      const original = await verifyIdToken(first.id_token);
      assert.ok(first.refresh_token);
      server.clock.advance(60);
      const res = await server.http.token(
        { grant_type: 'refresh_token', refresh_token: first.refresh_token },
        credentials(),
      );
      const refreshed = assertTokenSuccess(res) as OidcTokenBody;
      const claims = await verifyIdToken(refreshed.id_token);
      assert.deepEqual(
        [claims.sub, claims.auth_time, claims.sid, claims.nonce],
        [original.sub, original.auth_time, original.sid, undefined],
      );
      assert.equal(claims.iat, server.clock.now());
      assert.equal(claims.at_hash, halfHash(refreshed.access_token));
    });

    it('UserInfo, GET with the header: sub and the claims of the granted scopes', async () => {
      const body = await codeFlow(['openid', 'profile', 'email']);
      const res = await userInfo({ headers: { authorization: `Bearer ${body.access_token}` } });
      expectStatus(res, 200);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.deepEqual(res.json, {
        sub: alice.id,
        name: 'Alice Example',
        preferred_username: 'alice',
        updated_at: alice.updatedAt,
        email: 'alice@example.com',
        email_verified: false,
      });
      const claims = await verifyIdToken(body.id_token);
      assert.equal(
        (res.json as { sub: string }).sub,
        claims.sub,
        'Core §5.3.2: the same sub as the ID token',
      );
    });

    it('UserInfo, POST with the token in the form body (RFC 6750 §2.2) or the header; only the granted scopes', async () => {
      const body = await codeFlow(['openid', 'email']);
      const inBody = await userInfo({ method: 'POST', form: { access_token: body.access_token } });
      expectStatus(inBody, 200);
      assert.deepEqual(inBody.json, { sub: alice.id, email: 'alice@example.com', email_verified: false });
      const inHeader = await userInfo({
        method: 'POST',
        headers: { authorization: `bearer ${body.access_token}` },
      });
      expectStatus(inHeader, 200);
      assert.deepEqual(inHeader.json, inBody.json);
    });

    it('UserInfo refusals: no token 401 without an error code; bad, revoked 401 invalid_token; no openid 403', async () => {
      assertChallenge(await userInfo({}), 401, undefined);
      assertChallenge(
        await userInfo({ headers: { authorization: 'Bearer not-a-token' } }),
        401,
        'invalid_token',
      );

      const plain = await codeFlow(['profile', 'read']);
      assert.equal(plain.id_token, undefined, 'no openid, no ID token');
      const noOpenId = await userInfo({ headers: { authorization: `Bearer ${plain.access_token}` } });
      assertChallenge(noOpenId, 403, 'insufficient_scope');
      assert.match(String(noOpenId.headers['www-authenticate']), /scope="openid"/);
      assert.equal((noOpenId.json as { error: string }).error, 'insufficient_scope');

      const { token: service } = await clientCredentialsToken(server, ['openid']);
      assertChallenge(
        await userInfo({ headers: { authorization: `Bearer ${service.access_token}` } }),
        401,
        'invalid_token',
      );

      const body = await codeFlow(['openid']);
      const revoked = await server.http.request('/revoke', {
        form: { token: body.access_token },
        headers: { authorization: `Basic ${Buffer.from(`${rp.client.id}:${rp.secret}`).toString('base64')}` },
      });
      expectStatus(revoked, 200);
      assertChallenge(
        await userInfo({ headers: { authorization: `Bearer ${body.access_token}` } }),
        401,
        'invalid_token',
      );

      const both = await userInfo({
        method: 'POST',
        form: { access_token: plain.access_token },
        headers: { authorization: `Bearer ${plain.access_token}` },
      });
      assertChallenge(both, 400, 'invalid_request');
    });

    it('/v1/users carries email and name; /v1/clients post_logout_redirect_uris and id_token_signed_response_alg', async () => {
      const { token } = await clientCredentialsToken(server, ['admin']);
      const api = apiClient(server, token);
      const created = await api.post('/users', {
        username: 'bob',
        password: 'correct horse battery',
        email: 'bob@example.com',
        name: 'Bob Builder',
      });
      expectStatus(created, 201);
      const bob = created.json as { id: string; email: string | null; name: string | null };
      assert.deepEqual([bob.email, bob.name], ['bob@example.com', 'Bob Builder']);
      const patched = await api.patch(`/users/${bob.id}`, { email: null });
      expectStatus(patched, 201);
      assert.deepEqual((patched.json as typeof bob).email, null);
      assert.equal((patched.json as typeof bob).name, 'Bob Builder', 'PATCH keeps what it does not name');
      const replaced = await api.put(`/users/${bob.id}`, { username: 'bob', email: 'b@example.com' });
      expectStatus(replaced, 201);
      assert.deepEqual(
        [(replaced.json as typeof bob).email, (replaced.json as typeof bob).name],
        ['b@example.com', null],
        'PUT is the complete user: a name left out is removed',
      );
      expectStatus(await api.patch(`/users/${bob.id}`, { email: 'not an address' }), 400);
      expectStatus(await api.patch(`/users/${bob.id}`, { name: 'Bob\u202e' }), 400);
      expectStatus(await api.patch(`/users/${bob.id}`, { email: `${'a'.repeat(250)}@example.com` }), 400);

      const client = await api.post('/clients', {
        name: 'rp',
        redirect_uris: ['https://rp.example/cb'],
        post_logout_redirect_uris: ['https://rp.example/bye'],
        id_token_signed_response_alg: 'ES256',
      });
      expectStatus(client, 201);
      const view = client.json as {
        client_id: string;
        post_logout_redirect_uris: string[];
        id_token_signed_response_alg: string;
      };
      assert.deepEqual(view.post_logout_redirect_uris, ['https://rp.example/bye']);
      assert.equal(view.id_token_signed_response_alg, 'ES256');
      const defaults = await api.post('/clients', {
        name: 'plain',
        redirect_uris: ['https://rp.example/cb'],
      });
      assert.deepEqual(
        [
          (defaults.json as typeof view).post_logout_redirect_uris,
          (defaults.json as typeof view).id_token_signed_response_alg,
        ],
        [[], 'RS256'],
      );
      expectStatus(
        await api.patch(`/clients/${view.client_id}`, {
          post_logout_redirect_uris: ['http://rp.example/bye'],
        }),
        400,
      );
      expectStatus(
        await api.patch(`/clients/${view.client_id}`, {
          post_logout_redirect_uris: ['https://rp.example/#x'],
        }),
        400,
      );
      expectStatus(
        await api.patch(`/clients/${view.client_id}`, { id_token_signed_response_alg: 'HS256' }),
        400,
      );
      const patched2 = await api.patch(`/clients/${view.client_id}`, {
        id_token_signed_response_alg: 'RS256',
      });
      expectStatus(patched2, 201);
      assert.deepEqual((patched2.json as typeof view).post_logout_redirect_uris, ['https://rp.example/bye']);
    });
  });
}
