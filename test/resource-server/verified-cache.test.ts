import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ResourceServer, type RequestInfo } from 'gatehouse-oauth-resource-server';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('resource-server library: validated-token cache', () => {
  let server: TestServer;
  let token: string;
  let jwksFetches = 0;
  let now = 0;
  let library: ResourceServer;
  const request = (): RequestInfo => ({
    method: 'GET',
    url: '/notes',
    host: 'api.test',
    protocol: 'https',
    authorization: `Bearer ${token}`,
  });

  before(async () => {
    server = await startTestServer('sqlite', {}, { transport: 'https' });
    const { client, secret } = await server.client({ scopes: ['notes:read'] });
    const res = await server.http.token({ grant_type: 'client_credentials' }, { id: client.id, secret });
    token = (res.json as { access_token: string }).access_token;
    now = server.clock.now();
    library = new ResourceServer({
      issuer: 'https://gatehouse.test',
      jwksUri: `${server.http.baseUrl}/jwks`,
      now: () => now,
      fetch: async (url, init) => {
        jwksFetches += 1;
        const response = await server.http.request(new URL(String(url)).pathname, {
          method: init?.method ?? 'GET',
        });
        return new Response(response.text, {
          status: response.status,
          headers: { 'content-type': 'application/json' },
        });
      },
    });
  });
  after(async () => {
    library.close();
    await server.close();
  });

  it('accepts a token seen before without verifying it again, and still refuses it once expired', async () => {
    const first = await library.authorize(request(), ['notes:read']);
    assert.equal(first.clientId, first.claims.client_id);
    // Tamper with the cached copy the caller got: the cache must not share it.
    first.scopes.push('admin');
    const second = await library.authorize(request(), ['notes:read']);
    assert.deepEqual(second.scopes, ['notes:read']);
    assert.equal(jwksFetches, 1, 'the JWKS was fetched once');
    now += 3600 + 10;
    await assert.rejects(library.authorize(request()), /expired|not valid/);
  });

  it('does not let a forged token ride on a cached one', async () => {
    now = server.clock.now();
    const [header, payload] = token.split('.');
    const forged = `${header}.${payload}.${'A'.repeat(86)}`;
    await assert.rejects(library.authorize({ ...request(), authorization: `Bearer ${forged}` }), /not valid/);
  });
});
