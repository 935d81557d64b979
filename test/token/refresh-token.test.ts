import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { User } from '../../src/core/model.js';
import { sha256 } from '../../src/shared/crypto.js';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  assertOAuthError,
  assertTokenSuccess,
  statusCounts,
  verifyAccessToken,
} from '../helpers/token-responses.js';

const REDIRECT = 'https://app.example/callback';

for (const backend of backends()) {
  describe(`refresh_token grant (${backend})`, () => {
    let server: TestServer;
    let user: User;
    before(async () => {
      server = await startTestServer(backend);
      ({ user } = await server.user());
    });
    after(async () => {
      await server.close();
    });

    /** A client, and the tokens of a code redeemed for `scope` under a grant ending at `grantExpiresAt`. */
    async function session(options: { scope?: string[]; grantExpiresAt?: number | null } = {}) {
      const { client, secret } = await server.client({
        redirect_uris: [REDIRECT],
        grant_types: ['authorization_code', 'refresh_token'],
        scopes: ['read', 'write', 'email'],
      });
      const credentials = { id: client.id, secret };
      const { code, grant } = await server.seedCode({
        client,
        user,
        scope: options.scope ?? ['read', 'write'],
        grantExpiresAt: options.grantExpiresAt ?? null,
      });
      const res = await server.http.token(
        { grant_type: 'authorization_code', code, redirect_uri: REDIRECT },
        credentials,
      );
      const body = assertTokenSuccess(res);
      assert.ok(body.refresh_token);
      return { client, credentials, grant, body, refreshToken: body.refresh_token };
    }

    function refresh(credentials: { id: string; secret: string }, token: string, scope?: string) {
      return server.http.token(
        { grant_type: 'refresh_token', refresh_token: token, ...(scope === undefined ? {} : { scope }) },
        credentials,
      );
    }

    it('rotates: a new refresh token is issued and the old one retired', async () => {
      const { credentials, refreshToken, grant } = await session();
      const body = assertTokenSuccess(await refresh(credentials, refreshToken));
      assert.ok(body.refresh_token);
      assert.notEqual(body.refresh_token, refreshToken);
      assert.equal(body.scope, 'read write');
      const { payload } = await verifyAccessToken(server, body.access_token);
      assert.equal(payload.sub, user.id);
      assert.equal(payload.gid, grant.id);
      const old = await server.store.storage.refreshTokens.get(sha256(refreshToken));
      assert.notEqual(old?.retiredAt, null);
      const next = await server.store.storage.refreshTokens.get(sha256(body.refresh_token));
      assert.equal(next?.retiredAt, null);
      assert.equal(next?.grantId, grant.id);
      // And the new one rotates in turn.
      const third = assertTokenSuccess(await refresh(credentials, body.refresh_token));
      assert.notEqual(third.refresh_token, body.refresh_token);
    });

    it('narrows scope on request, keeps the original when omitted, refuses widening', async () => {
      const { credentials, refreshToken } = await session({ scope: ['read', 'write'] });
      const narrowed = assertTokenSuccess(await refresh(credentials, refreshToken, 'read'));
      assert.equal(narrowed.scope, 'read');
      assert.equal((await verifyAccessToken(server, narrowed.access_token)).payload.scope, 'read');
      assert.ok(narrowed.refresh_token);

      // RFC 6749 §6: omitting scope means the original grant's scope, not the last narrowed one.
      const omitted = assertTokenSuccess(await refresh(credentials, narrowed.refresh_token));
      assert.equal(omitted.scope, 'read write');
      assert.ok(omitted.refresh_token);

      // `email` is allowed to the client but was not in this grant; `admin` is in neither.
      for (const scope of ['read email', 'admin']) {
        assertOAuthError(await refresh(credentials, omitted.refresh_token, scope), 400, 'invalid_scope');
      }
      // The refused requests changed nothing: the token still works.
      assertTokenSuccess(await refresh(credentials, omitted.refresh_token));
    });

    it("refuses another client's refresh token with invalid_grant, leaving it usable", async () => {
      const { credentials, refreshToken } = await session();
      const thief = await server.client({ grant_types: ['refresh_token', 'client_credentials'] });
      assertOAuthError(
        await refresh({ id: thief.client.id, secret: thief.secret }, refreshToken),
        400,
        'invalid_grant',
      );
      assertTokenSuccess(await refresh(credentials, refreshToken));
    });

    it('lets a public client refresh with its client_id alone, bound to that client', async () => {
      const { client } = await server.client({
        redirect_uris: [REDIRECT],
        grant_types: ['authorization_code', 'refresh_token'],
        public: true,
        scopes: ['read'],
      });
      const verifier = 'v'.repeat(43);
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      const { code } = await server.seedCode({
        client,
        user,
        codeChallenge: challenge,
        codeChallengeMethod: 'S256',
      });
      const first = assertTokenSuccess(
        await server.http.token({
          grant_type: 'authorization_code',
          code,
          redirect_uri: REDIRECT,
          client_id: client.id,
          code_verifier: verifier,
        }),
      );
      assert.ok(first.refresh_token);
      const otherPublic = await server.client({
        redirect_uris: [REDIRECT],
        grant_types: ['authorization_code', 'refresh_token'],
        public: true,
      });
      const stolen = await server.http.token({
        grant_type: 'refresh_token',
        refresh_token: first.refresh_token,
        client_id: otherPublic.client.id,
      });
      assertOAuthError(stolen, 400, 'invalid_grant');
      const refreshed = assertTokenSuccess(
        await server.http.token({
          grant_type: 'refresh_token',
          refresh_token: first.refresh_token,
          client_id: client.id,
        }),
      );
      assert.ok(refreshed.refresh_token);
    });

    it('refuses unknown and missing refresh tokens', async () => {
      const { credentials } = await session();
      assertOAuthError(await refresh(credentials, 'rt_unknown'), 400, 'invalid_grant');
      assertOAuthError(
        await server.http.token({ grant_type: 'refresh_token' }, credentials),
        400,
        'invalid_request',
      );
    });

    it('refuses reuse inside the grace window but keeps the grant alive', async () => {
      const { credentials, refreshToken, grant } = await session();
      const rotated = assertTokenSuccess(await refresh(credentials, refreshToken));
      assert.ok(rotated.refresh_token);
      server.clock.advance(4);
      assertOAuthError(await refresh(credentials, refreshToken), 400, 'invalid_grant');
      assert.equal((await server.store.storage.grants.get(grant.id))?.revokedAt, null);
      assertTokenSuccess(await refresh(credentials, rotated.refresh_token));
    });

    it('revokes the whole grant on reuse after the grace window (RFC 9700 §4.14)', async () => {
      const { credentials, refreshToken, grant } = await session();
      const rotated = assertTokenSuccess(await refresh(credentials, refreshToken));
      assert.ok(rotated.refresh_token);
      server.clock.advance(6);
      assertOAuthError(await refresh(credentials, refreshToken), 400, 'invalid_grant');
      assert.notEqual((await server.store.storage.grants.get(grant.id))?.revokedAt, null);
      assertOAuthError(await refresh(credentials, rotated.refresh_token), 400, 'invalid_grant');
    });

    it('lets exactly one of 20 parallel refreshes with one token succeed', async () => {
      const { credentials, refreshToken, grant } = await session();
      const responses = await Promise.all(
        Array.from({ length: 20 }, () => refresh(credentials, refreshToken)),
      );
      assert.deepEqual(statusCounts(responses), { 200: 1, 400: 19 });
      for (const res of responses.filter((r) => r.status !== 200))
        assertOAuthError(res, 400, 'invalid_grant');
      // The losers were concurrent retries inside the grace window: the grant survives.
      assert.equal((await server.store.storage.grants.get(grant.id))?.revokedAt, null);
      const winner = assertTokenSuccess(responses.find((r) => r.status === 200)!);
      assert.ok(winner.refresh_token);
      assertTokenSuccess(await refresh(credentials, winner.refresh_token));
    });

    it('never outlives the grant: expires_in is capped, and refresh fails once the grant ends', async () => {
      const lifetime = 1800;
      const { credentials, body } = await session({ grantExpiresAt: server.clock.now() + lifetime });
      assert.ok(body.expires_in <= lifetime, `expires_in ${body.expires_in}`);
      const first = await verifyAccessToken(server, body.access_token);
      assert.ok((first.payload.exp ?? Infinity) <= server.clock.now() + lifetime);

      server.clock.advance(1000);
      const refreshed = assertTokenSuccess(await refresh(credentials, body.refresh_token!));
      assert.ok(refreshed.expires_in <= lifetime - 1000, `expires_in ${refreshed.expires_in}`);
      assert.ok(refreshed.expires_in > 0);
      const rt = await server.store.storage.refreshTokens.get(sha256(refreshed.refresh_token!));
      assert.ok(rt?.expiresAt !== null && rt!.expiresAt! <= server.clock.now() + (lifetime - 1000));

      server.clock.advance(lifetime - 1000);
      assertOAuthError(await refresh(credentials, refreshed.refresh_token!), 400, 'invalid_grant');
    });

    it('refuses a refresh token whose grant was revoked', async () => {
      const { credentials, refreshToken, grant } = await session();
      await server.store.storage.grants.revoke(grant.id, server.clock.now());
      assertOAuthError(await refresh(credentials, refreshToken), 400, 'invalid_grant');
    });

    it('refuses a client no longer registered for the refresh_token grant (unauthorized_client)', async () => {
      const { refreshToken, client, credentials } = await session();
      await server.store.storage.clients.update({ ...client, grantTypes: ['authorization_code'] }, 'keep');
      assertOAuthError(await refresh(credentials, refreshToken), 400, 'unauthorized_client');
    });
  });
}
