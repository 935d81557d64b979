import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { BrowserSessions } from '../../src/core/browser-sessions.js';
import type { QueryEvent } from '../../src/storage/sql/query-observer.js';
import { backends } from '../helpers/backends.js';
import { basicAuth } from '../helpers/https-client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const REDIRECT_URI = 'https://app.example/cb';
const off = { perAddress: 0, perClient: 0 };

/**
 * The benchmark budget counts the SQL statements of a code flow with remembered consent (at most 10; Hydra's
 * benchmark reports about 81). This pins Gatehouse's count per request, so a change that adds a
 * statement to the hot path has to say so here. The OpenID Connect code flow's budget is 6.
 */
for (const backend of backends()) {
  describe(`statements per request (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(backend, {
        purgeIntervalSeconds: 0,
        // No background merges of rate counters while statements are counted.
        rateLimits: { token: off, authorize: off, introspect: off, signIn: off },
        // Nor the key ring's timed re-read of the signing keys (its view stays fresh by the manual clock).
        keyRefreshIntervalSeconds: 3600,
      });
    });
    after(async () => {
      await server.close();
    });

    /** The statements the store ran while `work` did, by operation. */
    async function statementsOf(work: () => Promise<void>): Promise<Record<string, number>> {
      const counted: Record<string, number> = {};
      const stop = server.store.storage.observeQueries((event: QueryEvent) => {
        counted[event.operation] = (counted[event.operation] ?? 0) + 1;
      });
      try {
        await work();
      } finally {
        stop();
      }
      return counted;
    }

    it('a code flow with remembered consent runs at most 7: 4 at /authorize, 2-3 at /token', async () => {
      const { client, secret } = await server.client({
        redirect_uris: [REDIRECT_URI],
        grant_types: ['authorization_code'],
        scopes: ['read'],
      });
      const { user } = await server.user();
      // Signed in and consented before: the grant is remembered.
      await server.seedCode({ client, user, scope: ['read'] });
      const browserId = await new BrowserSessions(server.store.storage.browserSessions, server.clock).start(
        user.id,
      );
      const verifier = randomBytes(32).toString('base64url');
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      const query = new URLSearchParams({
        response_type: 'code',
        client_id: client.id,
        redirect_uri: REDIRECT_URI,
        scope: 'read',
        state: 's1',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      });

      let code = '';
      const atAuthorize = await statementsOf(async () => {
        const res = await server.http.request(`/authorize?${query}`, {
          headers: { cookie: `__Host-gatehouse=${browserId}` },
        });
        assert.equal(res.status, 302, res.text);
        code = new URL(String(res.headers.location)).searchParams.get('code') ?? '';
      });
      assert.notEqual(code, '');
      // client, signed-in user (session joined with user), the user's grants, the new code.
      assert.deepEqual(atAuthorize, { select: 3, insert: 1 });

      const atToken = await statementsOf(async () => {
        const res = await server.http.request('/token', {
          method: 'POST',
          headers: { authorization: basicAuth(client.id, secret) },
          form: {
            grant_type: 'authorization_code',
            code,
            redirect_uri: REDIRECT_URI,
            code_verifier: verifier,
          },
        });
        assert.equal(res.status, 200, res.text);
      });
      // client (cached for a second per process since /authorize read it, so usually absent), the
      // code read with its grant, the code consumed.
      assert.ok([0, 1].includes((atToken.select ?? 0) - 1), JSON.stringify(atToken));
      assert.equal(atToken.update, 1);
      assert.equal(atToken.insert, undefined);
    });

    it('an OpenID Connect code flow (scope openid, nonce) runs one select more at /authorize: the sign-in’s auth_time and sid', async () => {
      const { client, secret } = await server.client({
        redirect_uris: [REDIRECT_URI],
        grant_types: ['authorization_code'],
        scopes: ['openid'],
        id_token_signed_response_alg: 'ES256',
      });
      const { user } = await server.user();
      // Signed in and consented before: the grant is remembered.
      await server.seedCode({ client, user, scope: ['openid'] });
      const browserId = await new BrowserSessions(server.store.storage.browserSessions, server.clock).start(
        user.id,
      );
      const verifier = randomBytes(32).toString('base64url');
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      const query = new URLSearchParams({
        response_type: 'code',
        client_id: client.id,
        redirect_uri: REDIRECT_URI,
        scope: 'openid',
        nonce: 'n-1',
        state: 's1',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      });

      let code = '';
      const atAuthorize = await statementsOf(async () => {
        const res = await server.http.request(`/authorize?${query}`, {
          headers: { cookie: `__Host-gatehouse=${browserId}` },
        });
        assert.equal(res.status, 302, res.text);
        code = new URL(String(res.headers.location)).searchParams.get('code') ?? '';
      });
      assert.notEqual(code, '');
      // As the plain flow, plus the browser session's sign-in (auth_time, sid: Core §2) for the ID token;
      // the code carries nonce, auth_time and sid, so /token reads nothing more (bench budget: 6).
      assert.deepEqual(atAuthorize, { select: 4, insert: 1 });

      const atToken = await statementsOf(async () => {
        const res = await server.http.request('/token', {
          method: 'POST',
          headers: { authorization: basicAuth(client.id, secret) },
          form: {
            grant_type: 'authorization_code',
            code,
            redirect_uri: REDIRECT_URI,
            code_verifier: verifier,
          },
        });
        assert.equal(res.status, 200, res.text);
        assert.equal(typeof (res.json as { id_token?: unknown }).id_token, 'string');
      });
      // client (cached for a second per process since /authorize read it, so usually absent), the
      // code read with its grant, the code consumed.
      assert.ok([0, 1].includes((atToken.select ?? 0) - 1), JSON.stringify(atToken));
      assert.equal(atToken.update, 1);
      assert.equal(atToken.insert, undefined);
    });
  });
}
