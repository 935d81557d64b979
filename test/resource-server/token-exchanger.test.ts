import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import {
  createTokenExchanger,
  nodeFetch,
  TokenExchangeError,
  type FetchLike,
  type TokenExchangerOptions,
} from 'gatehouse-oauth-resource-server';
import { TOKEN_EXCHANGE_GRANT, type Client, type User } from '../../src/core/model.js';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const NEXT = 'https://next.example/api';
const OTHER = 'https://other.example';

/**
 * The library's token exchanger (RFC 8693) against a real Gatehouse: what it asks for, its cache per
 * (incoming token, resource, scope) until shortly before expiry, its bound, shared concurrent
 * requests, client authentication by callback, and errors as TokenExchangeError.
 */
for (const backend of backends()) {
  describe(`resource-server library: token exchanger (${backend})`, () => {
    let server: TestServer;
    let service: { client: Client; secret: string };
    let app: { client: Client; secret: string };
    let user: User;
    let node: ReturnType<typeof nodeFetch>;
    /** Every request the exchangers sent, counted. */
    let sent = 0;
    let counting: FetchLike;
    let nowMs = 0;

    before(async () => {
      server = await startTestServer(backend, {}, { transport: 'https' });
      const { resources } = server.gatehouse.engine;
      await resources.create({ uri: NEXT, scopes: ['read', 'write'] });
      await resources.create({ uri: OTHER, scopes: ['read'] });
      app = await server.client({ redirect_uris: ['https://app.example/cb'], scopes: ['read', 'write'] });
      service = await server.client({
        grant_types: [TOKEN_EXCHANGE_GRANT],
        scopes: ['read', 'write'],
        token_exchange_targets: [NEXT, OTHER],
      });
      ({ user } = await server.user());
      node = nodeFetch(server.ca);
      counting = (url, init) => {
        sent += 1;
        return node.fetch(url, init);
      };
      nowMs = server.clock.now() * 1000;
    });
    after(async () => {
      node?.close();
      await server?.close();
    });

    /** A user's access token, as the calling app would send it to this service. */
    async function incomingToken(): Promise<string> {
      const { code } = await server.seedCode({ client: app.client, user, scope: ['read', 'write'] });
      const res = await server.http.token(
        { grant_type: 'authorization_code', code, redirect_uri: 'https://app.example/cb' },
        { id: app.client.id, secret: app.secret },
      );
      assert.equal(res.status, 200, res.text);
      return (res.json as { access_token: string }).access_token;
    }

    function exchanger(options: Partial<TokenExchangerOptions> = {}) {
      return createTokenExchanger({
        issuer: server.url,
        clientId: service.client.id,
        clientSecret: service.secret,
        fetch: counting,
        now: () => nowMs,
        ...options,
      });
    }

    it('exchanges for the next service, and reuses the token until shortly before it expires', async () => {
      const tokens = exchanger({ refreshBeforeExpirySeconds: 60 });
      const incoming = await incomingToken();
      const before = sent;
      const first = await tokens.exchangeToken(incoming, { resource: NEXT, scope: 'read' });
      const claims = decodeJwt(first.accessToken);
      assert.equal(claims.aud, NEXT);
      assert.equal(claims.sub, user.id);
      assert.equal(claims.scope, 'read');
      assert.deepEqual(claims.act, { sub: service.client.id });
      assert.equal(first.issuedTokenType, 'urn:ietf:params:oauth:token-type:access_token');
      assert.equal(first.expiresAt, nowMs + 3600 * 1000);
      assert.equal(sent, before + 1);

      // The same (token, resource, scope), the scope however spelled: from the cache.
      assert.equal(await tokens.exchange(incoming, { resource: [NEXT], scope: ['read'] }), first.accessToken);
      assert.equal(sent, before + 1);
      // Another scope or resource: another exchange.
      const both = await tokens.exchange(incoming, { resource: NEXT, scope: 'write read' });
      assert.equal(decodeJwt(both).scope, 'read write');
      await tokens.exchange(incoming, { resource: OTHER });
      assert.equal(sent, before + 3);
      assert.equal(tokens.size, 3);

      // 59 minutes and a second later the first token is within a minute of expiry: exchanged anew.
      nowMs += (3600 - 60) * 1000 - 1000;
      assert.equal(await tokens.exchange(incoming, { resource: NEXT, scope: 'read' }), first.accessToken);
      assert.equal(sent, before + 3);
      nowMs += 1000;
      server.clock.advance(1);
      const renewed = await tokens.exchange(incoming, { resource: NEXT, scope: 'read' });
      assert.notEqual(renewed, first.accessToken);
      assert.equal(sent, before + 4);
      tokens.close();
    });

    it('keeps at most cacheSize tokens, dropping the least recently used', async () => {
      const tokens = exchanger({ cacheSize: 2 });
      const incoming = await incomingToken();
      await tokens.exchange(incoming, { resource: NEXT, scope: 'read' });
      await tokens.exchange(incoming, { resource: NEXT, scope: 'write' });
      await tokens.exchange(incoming, { resource: NEXT, scope: 'read' }); // read is now the most recent
      await tokens.exchange(incoming, { resource: OTHER });
      assert.equal(tokens.size, 2);
      const before = sent;
      await tokens.exchange(incoming, { resource: NEXT, scope: 'read' });
      assert.equal(sent, before, 'read stayed cached');
      await tokens.exchange(incoming, { resource: NEXT, scope: 'write' });
      assert.equal(sent, before + 1, 'write was dropped');
    });

    it('sends one request for concurrent identical exchanges', async () => {
      const tokens = exchanger();
      const incoming = await incomingToken();
      const before = sent;
      const results = await Promise.all(
        Array.from({ length: 5 }, () => tokens.exchange(incoming, { audience: NEXT, scope: 'read' })),
      );
      assert.equal(sent, before + 1);
      assert.equal(new Set(results).size, 1);
    });

    it('authenticates by callback (client_secret_post here)', async () => {
      const tokens = exchanger({
        clientSecret: undefined,
        clientAuthentication: ({ body }) => {
          body.set('client_id', service.client.id);
          body.set('client_secret', service.secret);
        },
      });
      const token = await tokens.exchange(await incomingToken(), { resource: NEXT });
      assert.equal(decodeJwt(token).client_id, service.client.id);
    });

    it('rejects with the token endpoint’s error, and caches nothing', async () => {
      const tokens = exchanger();
      const incoming = await incomingToken();
      for (const [options, code] of [
        [{ resource: 'https://unregistered.example' }, 'invalid_target'],
        [{ resource: NEXT, scope: 'admin' }, 'invalid_scope'],
      ] as const) {
        await assert.rejects(tokens.exchange(incoming, options), (error: unknown) => {
          assert.ok(error instanceof TokenExchangeError);
          assert.equal(error.code, code);
          assert.equal(error.status, 400);
          return true;
        });
      }
      await assert.rejects(tokens.exchange('not-a-token', { resource: NEXT }), { code: 'invalid_request' });
      const wrongSecret = exchanger({ clientSecret: 'wrong' });
      await assert.rejects(wrongSecret.exchange(incoming, { resource: NEXT }), {
        code: 'invalid_client',
        status: 401,
      });
      assert.equal(tokens.size, 0);
      const unreachable = exchanger({ tokenEndpoint: 'https://127.0.0.1:1/token', fetch: undefined });
      await assert.rejects(unreachable.exchange(incoming, { resource: NEXT }), { code: 'unavailable' });
      unreachable.close();
    });
  });
}
