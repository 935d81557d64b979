import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import type { Client, User } from '../../src/core/model.js';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const REDIRECT = 'https://app.example/callback';

interface Tokens {
  access_token: string;
  refresh_token: string;
  scope?: string;
}

for (const backend of backends()) {
  describe(`refresh after the operator removes a client's scope (${backend})`, () => {
    let server: TestServer;
    let user: User;
    before(async () => {
      server = await startTestServer(backend);
      ({ user } = await server.user());
    });
    after(async () => {
      await server.close();
    });

    /** A client granted `scopes` by the user, with its first token response. */
    async function granted(scopes: string[]) {
      const { client, secret } = await server.client({
        redirect_uris: [REDIRECT],
        grant_types: ['authorization_code', 'refresh_token'],
        scopes,
      });
      const credentials = { id: client.id, secret };
      const { code } = await server.seedCode({ client, user, scope: scopes });
      const res = await server.http.token(
        { grant_type: 'authorization_code', code, redirect_uri: REDIRECT },
        credentials,
      );
      assert.equal(res.status, 200, res.text);
      return { client, credentials, tokens: res.json as Tokens };
    }

    async function withScopes(client: Client, scopes: string[]): Promise<void> {
      assert.ok(await server.store.storage.clients.update({ ...client, scopes }, 'keep'));
    }

    it('issues only the scopes the client still has, in the access token and the next refresh', async () => {
      const { client, credentials, tokens } = await granted(['read', 'write']);
      await withScopes(client, ['read']);
      const res = await server.http.token(
        { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
        credentials,
      );
      assert.equal(res.status, 200, res.text);
      const refreshed = res.json as Tokens;
      assert.equal(refreshed.scope, 'read');
      assert.equal(decodeJwt(refreshed.access_token).scope, 'read');

      // Given back to the client later, the removed scope does not return through the rotated token.
      await withScopes(client, ['read', 'write']);
      const again = await server.http.token(
        { grant_type: 'refresh_token', refresh_token: refreshed.refresh_token },
        credentials,
      );
      assert.equal(again.status, 200, again.text);
      assert.equal((again.json as Tokens).scope, 'read');
    });

    it('answers invalid_scope when a removed scope is asked for, or when none remains, and changes nothing', async () => {
      const { client, credentials, tokens } = await granted(['read', 'write']);
      await withScopes(client, ['read']);
      const asked = await server.http.token(
        { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, scope: 'write' },
        credentials,
      );
      assert.equal(asked.status, 400);
      assert.equal((asked.json as { error: string }).error, 'invalid_scope');

      await withScopes(client, ['other']);
      const none = await server.http.token(
        { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
        credentials,
      );
      assert.equal(none.status, 400);
      assert.equal((none.json as { error: string }).error, 'invalid_scope');

      // The refresh token was not spent by the refusals.
      await withScopes(client, ['read', 'write']);
      const ok = await server.http.token(
        { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
        credentials,
      );
      assert.equal(ok.status, 200, ok.text);
    });
  });
}
