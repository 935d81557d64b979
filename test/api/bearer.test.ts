import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generateKeyPair, SignJWT } from 'jose';
import { backends } from '../helpers/backends.js';
import type { HttpResponse } from '../helpers/https-client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  assertProblem,
  bearer,
  clientCredentialsToken,
  expectStatus,
  revoke,
  userToken,
} from '../helpers/api-requests.js';

function challenge(res: HttpResponse): string {
  return String(res.headers['www-authenticate']);
}

for (const backend of backends()) {
  describe(`RFC 6750 on GET /v1/users/me (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(backend);
    });
    after(async () => {
      await server.close();
    });
    const me = (headers: Record<string, string> = {}, path = '/v1/users/me') =>
      server.http.request(path, { headers });

    it('returns the token’s user with scope profile, the scheme matched case-insensitively', async () => {
      const { user, token } = await userToken(server, ['profile']);
      for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
        const res = await me({ authorization: `${scheme} ${token.access_token}` });
        expectStatus(res, 200);
        assert.match(String(res.headers['content-type']), /^application\/json/);
        assert.equal(res.headers['cache-control'], 'no-store');
        const body = res.json as Record<string, unknown>;
        // The email address comes only with scope email (OpenID Connect Core §5.4); name with profile.
        // `admin` says whether the user is an administrator (decision 29); this one is not. `disabled`
        // (decision 37) is false for every user a live token belongs to.
        assert.deepEqual(Object.keys(body).sort(), [
          'admin',
          'created_at',
          'disabled',
          'id',
          'name',
          'updated_at',
          'username',
        ]);
        assert.equal(body.admin, false);
        assert.equal(body.disabled, false);
        assert.equal(body.id, user.id);
        assert.equal(body.username, user.username);
      }
    });

    it('answers a request without a token with 401, a bare Bearer challenge and the DPoP one (RFC 9449 §7.1)', async () => {
      for (const headers of [{}, { authorization: 'Basic dXNlcjpwYXNz' }] as Record<string, string>[]) {
        const res = await me(headers);
        const body = assertProblem(res, 401);
        assert.equal(
          challenge(res),
          // RFC 9728 §5.1 (decision 47): each challenge names /v1's protected resource metadata.
          'Bearer realm="gatehouse", resource_metadata="https://gatehouse.test/.well-known/oauth-protected-resource/v1", ' +
            'DPoP realm="gatehouse", resource_metadata="https://gatehouse.test/.well-known/oauth-protected-resource/v1", ' +
            'algs="ES256 PS256 RS256 EdDSA Ed25519"',
        );
        assert.equal(body.error, undefined);
      }
    });

    it('answers bad, forged, expired and revoked tokens with 401 invalid_token', async () => {
      const { token, credentials } = await userToken(server, ['profile']);
      const { privateKey } = await generateKeyPair('ES256');
      const forged = await new SignJWT({ client_id: credentials.id, scope: 'profile', jti: 'x', gid: 'y' })
        .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: 'unknown' })
        .setIssuer('https://gatehouse.test')
        .setAudience('https://gatehouse.test')
        .setSubject('someone')
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(privateKey);
      for (const bad of ['not-a-token', forged]) {
        const res = await me(bearer(bad));
        assert.equal(assertProblem(res, 401).error, 'invalid_token');
        assert.match(
          challenge(res),
          /^Bearer realm="gatehouse", resource_metadata="[^"]+", error="invalid_token", error_description="[^"]+", DPoP realm="gatehouse", resource_metadata="[^"]+", algs="[^"]+"$/,
        );
      }

      server.clock.advance(3600);
      try {
        const expired = await me(bearer(token));
        assertProblem(expired, 401);
        assert.match(
          challenge(expired),
          /error="invalid_token", error_description="the access token has expired"/,
        );
      } finally {
        server.clock.advance(-3600);
      }

      expectStatus(await me(bearer(token)), 200);
      expectStatus(await revoke(server, credentials, { token: token.access_token }), 200);
      const revoked = await me(bearer(token));
      assertProblem(revoked, 401);
      assert.match(challenge(revoked), /error="invalid_token"/);
    });

    it('answers a token without scope profile with 403 insufficient_scope naming the scope', async () => {
      const { token } = await userToken(server, ['other']);
      const res = await me(bearer(token));
      assert.equal(assertProblem(res, 403).error, 'insufficient_scope');
      assert.match(
        challenge(res),
        /^Bearer realm="gatehouse", resource_metadata="[^"]+", error="insufficient_scope", error_description="[^"]+", scope="profile", DPoP realm="gatehouse", resource_metadata="[^"]+", algs="[^"]+"$/,
      );
    });

    it('answers a client_credentials token with 403, even with scope profile', async () => {
      const { token } = await clientCredentialsToken(server, ['profile']);
      const res = await me(bearer(token));
      assert.equal(assertProblem(res, 403).error, 'insufficient_scope');
      assert.match(challenge(res), /scope="profile"/);
    });

    it('refuses a MAC token presented as a bearer token', async () => {
      const { token } = await userToken(server, ['profile'], { token_type: 'mac' });
      const res = await me(bearer(token));
      assertProblem(res, 401);
      assert.match(challenge(res), /error="invalid_token"/);
    });

    it('answers malformed presentations with 400 invalid_request', async () => {
      const { token } = await userToken(server, ['profile']);
      const cases: Array<Parameters<typeof server.http.request>> = [
        ['/v1/users/me', { headers: { authorization: 'Bearer' } }],
        ['/v1/users/me', { headers: { authorization: 'Bearer two words' } }],
        // The query parameter is off by default (RFC 6750 §2.3 is optional, §5.3 warns against it).
        [`/v1/users/me?access_token=${token.access_token}`, {}],
      ];
      for (const [path, options] of cases) {
        const res = await server.http.request(path, options);
        assert.equal(assertProblem(res, 400).error, 'invalid_request');
        assert.match(
          challenge(res),
          /^Bearer realm="gatehouse", resource_metadata="[^"]+", error="invalid_request"/,
        );
      }
    });

    it('answers unknown paths with 404 and wrong methods with 405 and Allow', async () => {
      const missing = await server.http.request('/v1/nothing-here');
      assertProblem(missing, 404);
      const wrong = await server.http.request('/v1/users/me', { method: 'POST', body: '{}' });
      assertProblem(wrong, 405);
      assert.equal(wrong.headers.allow, 'GET, HEAD');
    });
  });

  describe(`RFC 6750 query parameter, when enabled (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(backend, { allowAccessTokenInQuery: true });
    });
    after(async () => {
      await server.close();
    });

    it('accepts access_token in the query, but never together with a header', async () => {
      const { user, token } = await userToken(server, ['profile']);
      const res = await server.http.request(`/v1/users/me?access_token=${token.access_token}`);
      expectStatus(res, 200);
      assert.equal((res.json as { id: string }).id, user.id);
      const both = await server.http.request(`/v1/users/me?access_token=${token.access_token}`, {
        headers: bearer(token),
      });
      assert.equal(assertProblem(both, 400).error, 'invalid_request');
    });
  });
}
