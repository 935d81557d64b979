import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client, User } from '../../src/core/model.js';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  assertOAuthError,
  assertTokenSuccess,
  pkcePair,
  statusCounts,
  verifyAccessToken,
} from '../helpers/token-responses.js';

const REDIRECT = 'https://app.example/callback';

for (const backend of backends()) {
  describe(`authorization_code grant (${backend})`, () => {
    let server: TestServer;
    let user: User;
    before(async () => {
      server = await startTestServer(backend);
      ({ user } = await server.user());
    });
    after(async () => {
      await server.close();
    });

    /** A confidential code-flow client; with refresh_token unless told otherwise. */
    async function codeClient(grantTypes = ['authorization_code', 'refresh_token']) {
      return server.client({ redirect_uris: [REDIRECT], grant_types: grantTypes, scopes: ['read', 'write'] });
    }

    function redeem(
      code: string,
      credentials: { id: string; secret: string } | undefined,
      extra: Record<string, string> = {},
    ) {
      return server.http.token(
        { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, ...extra },
        credentials,
      );
    }

    it('issues an access token and a refresh token to a client with the refresh_token grant', async () => {
      const { client, secret } = await codeClient();
      const { code, grant } = await server.seedCode({ client, user, scope: ['read'] });
      const body = assertTokenSuccess(await redeem(code, { id: client.id, secret }));
      assert.equal(body.token_type, 'bearer');
      assert.equal(body.expires_in, 3600);
      assert.equal(body.scope, 'read');
      assert.equal(typeof body.refresh_token, 'string');
      const { payload } = await verifyAccessToken(server, body.access_token);
      assert.equal(payload.sub, user.id);
      assert.equal(payload.client_id, client.id);
      assert.equal(payload.scope, 'read');
      assert.equal(payload.gid, grant.id);
    });

    it('issues no refresh token when the client lacks the refresh_token grant', async () => {
      const { client, secret } = await codeClient(['authorization_code']);
      const { code } = await server.seedCode({ client, user });
      const body = assertTokenSuccess(await redeem(code, { id: client.id, secret }));
      assert.equal(body.refresh_token, undefined);
    });

    it('refuses an unknown code with invalid_grant', async () => {
      const { client, secret } = await codeClient();
      assertOAuthError(await redeem('ac_nosuchcode', { id: client.id, secret }), 400, 'invalid_grant');
    });

    it('refuses a missing code with invalid_request', async () => {
      const { client, secret } = await codeClient();
      const res = await server.http.token(
        { grant_type: 'authorization_code', redirect_uri: REDIRECT },
        { id: client.id, secret },
      );
      assertOAuthError(res, 400, 'invalid_request');
    });

    it('refuses a code older than ten minutes', async () => {
      const { client, secret } = await codeClient();
      const { code } = await server.seedCode({ client, user });
      server.clock.advance(601);
      assertOAuthError(await redeem(code, { id: client.id, secret }), 400, 'invalid_grant');
    });

    it('accepts a code just inside its ten minutes', async () => {
      const { client, secret } = await codeClient();
      const { code } = await server.seedCode({ client, user });
      server.clock.advance(599);
      assertTokenSuccess(await redeem(code, { id: client.id, secret }));
    });

    it("refuses another client's code, which stays redeemable by its own client", async () => {
      const owner = await codeClient();
      const thief = await codeClient();
      const { code } = await server.seedCode({ client: owner.client, user });
      assertOAuthError(
        await redeem(code, { id: thief.client.id, secret: thief.secret }),
        400,
        'invalid_grant',
      );
      assertTokenSuccess(await redeem(code, { id: owner.client.id, secret: owner.secret }));
    });

    it('refuses a redirect_uri that differs from the one used, and changes nothing', async () => {
      const { client, secret } = await server.client({
        redirect_uris: [REDIRECT, 'https://app.example/other'],
        grant_types: ['authorization_code'],
      });
      const { code } = await server.seedCode({ client, user, redirectUri: REDIRECT });
      const credentials = { id: client.id, secret };
      for (const wrong of ['https://app.example/other', REDIRECT + '/', 'https://APP.example/callback']) {
        assertOAuthError(await redeem(code, credentials, { redirect_uri: wrong }), 400, 'invalid_grant');
      }
      assertTokenSuccess(await redeem(code, credentials));
    });

    it('requires redirect_uri, and changes nothing when it is missing', async () => {
      const { client, secret } = await codeClient();
      const { code } = await server.seedCode({ client, user });
      const res = await server.http.token(
        { grant_type: 'authorization_code', code },
        { id: client.id, secret },
      );
      assertOAuthError(res, 400, 'invalid_request');
      assertTokenSuccess(await redeem(code, { id: client.id, secret }));
    });

    describe('PKCE (RFC 7636)', () => {
      let client: Client;
      let credentials: { id: string; secret: string };
      before(async () => {
        const created = await codeClient();
        client = created.client;
        credentials = { id: client.id, secret: created.secret };
      });

      it('accepts the S256 verifier that matches the challenge', async () => {
        const { verifier, challenge } = pkcePair();
        const { code } = await server.seedCode({
          client,
          user,
          codeChallenge: challenge,
          codeChallengeMethod: 'S256',
        });
        assertTokenSuccess(await redeem(code, credentials, { code_verifier: verifier }));
      });

      it('refuses a wrong verifier, leaving the code redeemable with the right one', async () => {
        const { verifier, challenge } = pkcePair();
        const { code } = await server.seedCode({
          client,
          user,
          codeChallenge: challenge,
          codeChallengeMethod: 'S256',
        });
        const wrong = pkcePair().verifier;
        assertOAuthError(await redeem(code, credentials, { code_verifier: wrong }), 400, 'invalid_grant');
        // A verifier that is the challenge itself (what a "plain" downgrade would send) is wrong too.
        assertOAuthError(await redeem(code, credentials, { code_verifier: challenge }), 400, 'invalid_grant');
        assertOAuthError(await redeem(code, credentials, { code_verifier: 'short' }), 400, 'invalid_grant');
        assertTokenSuccess(await redeem(code, credentials, { code_verifier: verifier }));
      });

      it('refuses a missing verifier when a challenge was sent', async () => {
        const { verifier, challenge } = pkcePair();
        const { code } = await server.seedCode({
          client,
          user,
          codeChallenge: challenge,
          codeChallengeMethod: 'S256',
        });
        assertOAuthError(await redeem(code, credentials), 400, 'invalid_grant');
        assertTokenSuccess(await redeem(code, credentials, { code_verifier: verifier }));
      });

      it('enforces a challenge stored without a method as plain (RFC 7636 §4.3), never skipping it', async () => {
        const { verifier } = pkcePair();
        const { code } = await server.seedCode({ client, user, codeChallenge: verifier });
        assertOAuthError(await redeem(code, credentials), 400, 'invalid_grant');
        assertOAuthError(
          await redeem(code, credentials, { code_verifier: pkcePair().verifier }),
          400,
          'invalid_grant',
        );
        assertTokenSuccess(await redeem(code, credentials, { code_verifier: verifier }));
      });

      it('refuses a verifier when no challenge was sent (downgrade, RFC 9700 §2.1.1)', async () => {
        const { code } = await server.seedCode({ client, user });
        assertOAuthError(
          await redeem(code, credentials, { code_verifier: pkcePair().verifier }),
          400,
          'invalid_grant',
        );
        assertTokenSuccess(await redeem(code, credentials));
      });
    });

    describe('public clients', () => {
      let client: Client;
      before(async () => {
        ({ client } = await server.client({
          redirect_uris: [REDIRECT],
          grant_types: ['authorization_code', 'refresh_token'],
          public: true,
          scopes: ['read'],
        }));
      });

      it('authenticate with client_id alone and must use PKCE', async () => {
        assert.equal(client.secretHash, null);
        const { verifier, challenge } = pkcePair();
        const { code } = await server.seedCode({
          client,
          user,
          codeChallenge: challenge,
          codeChallengeMethod: 'S256',
        });
        const res = await server.http.token({
          grant_type: 'authorization_code',
          code,
          redirect_uri: REDIRECT,
          client_id: client.id,
          code_verifier: verifier,
        });
        const body = assertTokenSuccess(res);
        assert.equal(typeof body.refresh_token, 'string');
      });

      it('are refused a code issued without a PKCE challenge', async () => {
        const { code } = await server.seedCode({ client, user });
        const res = await server.http.token({
          grant_type: 'authorization_code',
          code,
          redirect_uri: REDIRECT,
          client_id: client.id,
        });
        assertOAuthError(res, 400, 'invalid_grant');
      });

      it('are refused when they present a secret (they have none)', async () => {
        const { verifier, challenge } = pkcePair();
        const { code } = await server.seedCode({
          client,
          user,
          codeChallenge: challenge,
          codeChallengeMethod: 'S256',
        });
        const res = await server.http.token(
          { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
          { id: client.id, secret: 'guess' },
        );
        assertOAuthError(res, 401, 'invalid_client');
      });

      it('cannot be impersonated: no client at all is invalid_client', async () => {
        const { verifier, challenge } = pkcePair();
        const { code } = await server.seedCode({
          client,
          user,
          codeChallenge: challenge,
          codeChallengeMethod: 'S256',
        });
        const res = await server.http.token({
          grant_type: 'authorization_code',
          code,
          redirect_uri: REDIRECT,
          code_verifier: verifier,
        });
        assertOAuthError(res, 401, 'invalid_client');
      });
    });

    it('accepts a client_id in the form that names the Basic-authenticated client', async () => {
      const { client, secret } = await codeClient();
      const { code } = await server.seedCode({ client, user });
      assertTokenSuccess(await redeem(code, { id: client.id, secret }, { client_id: client.id }));
    });

    it('answers a client_id in the form naming another client with 401 invalid_client', async () => {
      const { client, secret } = await codeClient();
      const other = await codeClient();
      const { code } = await server.seedCode({ client, user });
      assertOAuthError(
        await redeem(code, { id: client.id, secret }, { client_id: other.client.id }),
        401,
        'invalid_client',
      );
      assertTokenSuccess(await redeem(code, { id: client.id, secret }));
    });

    it('refuses a second use and revokes the tokens the first use issued', async () => {
      const { client, secret } = await codeClient();
      const credentials = { id: client.id, secret };
      const { code, grant } = await server.seedCode({ client, user });
      const first = assertTokenSuccess(await redeem(code, credentials));
      assert.ok(first.refresh_token);
      assertOAuthError(await redeem(code, credentials), 400, 'invalid_grant');
      const stored = await server.store.storage.grants.get(grant.id);
      assert.notEqual(stored?.revokedAt, null);
      const refresh = await server.http.token(
        { grant_type: 'refresh_token', refresh_token: first.refresh_token },
        credentials,
      );
      assertOAuthError(refresh, 400, 'invalid_grant');
    });

    it('lets exactly one of 20 parallel redemptions of one code succeed', async () => {
      const { client, secret } = await codeClient();
      const { code } = await server.seedCode({ client, user });
      const responses = await Promise.all(
        Array.from({ length: 20 }, () => redeem(code, { id: client.id, secret })),
      );
      assert.deepEqual(statusCounts(responses), { 200: 1, 400: 19 });
      for (const res of responses.filter((r) => r.status !== 200))
        assertOAuthError(res, 400, 'invalid_grant');
    });

    it('refuses a code whose grant was revoked before redemption', async () => {
      const { client, secret } = await codeClient();
      const { code, grant } = await server.seedCode({ client, user });
      await server.store.storage.grants.revoke(grant.id, server.clock.now());
      assertOAuthError(await redeem(code, { id: client.id, secret }), 400, 'invalid_grant');
    });
  });
}
