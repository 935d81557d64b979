import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { CookieJar, hidden } from '../helpers/cookie-jar.js';

const METRICS_TOKEN = 'scrape-token-for-tests';

/** The value of one sample line, matched on its name and every label given. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name + '{') && !line.startsWith(name + ' ')) continue;
    const labelText = line.slice(name.length).split(' ')[0] ?? '';
    if (Object.entries(labels).every(([key, value]) => labelText.includes(`${key}="${value}"`))) {
      return Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return undefined;
}

for (const backend of backends()) {
  describe(`observability (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(backend, { metricsToken: METRICS_TOKEN, purgeIntervalSeconds: 0 });
    });
    after(async () => {
      await server.close();
    });

    const scrape = async () => {
      const res = await server.http.request('/metrics', {
        headers: { authorization: `Bearer ${METRICS_TOKEN}` },
      });
      assert.equal(res.status, 200);
      assert.match(String(res.headers['content-type']), /^text\/plain/);
      return res.text;
    };

    it('refuses /metrics without the configured bearer token', async () => {
      const none = await server.http.request('/metrics');
      assert.equal(none.status, 401);
      assert.match(String(none.headers['www-authenticate']), /^Bearer/);
      const wrong = await server.http.request('/metrics', { headers: { authorization: 'Bearer nope' } });
      assert.equal(wrong.status, 401);
      assert.doesNotMatch(wrong.text, /gatehouse_/);
    });

    it('counts requests by route and status, tokens by grant and type, errors by code, store statements', async () => {
      const { client, secret } = await server.client({ grant_types: ['client_credentials'] });
      for (let i = 0; i < 3; i++) {
        const ok = await server.http.token({ grant_type: 'client_credentials' }, { id: client.id, secret });
        assert.equal(ok.status, 200);
      }
      const bad = await server.http.token(
        { grant_type: 'client_credentials' },
        { id: client.id, secret: 'x' },
      );
      assert.equal(bad.status, 401);
      await server.http.request('/no/such/path');

      const text = await scrape();
      const route = '/token';
      assert.equal(
        sample(text, 'gatehouse_http_requests_total', { route, method: 'POST', status: '200' }),
        3,
      );
      assert.equal(
        sample(text, 'gatehouse_http_requests_total', { route, method: 'POST', status: '401' }),
        1,
      );
      assert.equal(sample(text, 'gatehouse_http_requests_total', { route: 'unmatched', status: '404' }), 1);
      assert.equal(
        sample(text, 'gatehouse_http_request_duration_seconds_count', { route, method: 'POST' }),
        4,
      );
      assert.equal(
        sample(text, 'gatehouse_tokens_issued_total', {
          grant_type: 'client_credentials',
          token_type: 'bearer',
        }),
        3,
      );
      assert.equal(sample(text, 'gatehouse_oauth_errors_total', { route, error: 'invalid_client' }), 1);
      // Every store statement is counted, the prepared ones on the hot path included (client reads may
      // come from a short cache on PostgreSQL, so count a request that always reaches the store).
      const statements = (t: string) =>
        sample(t, 'gatehouse_store_query_duration_seconds_count', { operation: 'raw', outcome: 'ok' }) ?? 0;
      assert.equal((await server.http.request('/readyz')).status, 200);
      const after = await scrape();
      assert.ok(
        statements(after) > statements(text),
        `raw statements ${statements(text)} -> ${statements(after)}`,
      );
      assert.match(
        after,
        /gatehouse_store_query_duration_seconds_bucket\{le="0\.001",operation="select",outcome="ok"\}/,
      );
      // Raw URLs never become label values.
      assert.doesNotMatch(text, /no\/such\/path/);
    });

    it('counts tokens the implicit grant issues in the redirect', async () => {
      const { client } = await server.client({
        redirect_uris: ['https://app.test/cb'],
        grant_types: ['implicit'],
        scopes: ['read'],
      });
      const { user, password } = await server.user();
      const jar = new CookieJar();
      const query = `/authorize?${new URLSearchParams({
        response_type: 'token',
        client_id: client.id,
        redirect_uri: 'https://app.test/cb',
        scope: 'read',
      })}`;
      const signInPage = await jar.get(server.http, query);
      const signedIn = await jar.post(server.http, '/sign-in', {
        csrf_token: hidden(signInPage, 'csrf_token'),
        next: hidden(signInPage, 'next'),
        username: user.username,
        password,
      });
      assert.equal(signedIn.status, 303);
      const consent = await jar.get(server.http, query);
      const decided = await jar.post(server.http, '/consent', {
        csrf_token: hidden(consent, 'csrf_token'),
        request: hidden(consent, 'request'),
        scope: 'read',
        lifetime: 'forever',
        decision: 'allow',
      });
      assert.equal(decided.status, 302);
      assert.match(String(decided.headers.location), /#access_token=/);
      const text = await scrape();
      assert.equal(
        sample(text, 'gatehouse_tokens_issued_total', { grant_type: 'implicit', token_type: 'bearer' }),
        1,
      );
    });

    it('counts purged rows by table', async () => {
      const { client } = await server.client({
        redirect_uris: ['https://app.test/cb'],
        grant_types: ['authorization_code'],
      });
      const { user } = await server.user();
      await server.seedCode({ client, user });
      await server.seedCode({ client, user });
      server.clock.advance(601);
      const deleted = await server.gatehouse.purger.runOnce();
      assert.equal(deleted.authorization_codes, 2);
      assert.equal(
        sample(await scrape(), 'gatehouse_purged_rows_total', { table: 'authorization_codes' }),
        2,
      );
    });

    it('gives every response a request id, keeping a well-formed X-Request-Id from the caller', async () => {
      const fresh = await server.http.request('/healthz');
      assert.match(String(fresh.headers['x-request-id']), /^[0-9a-f-]{36}$/);
      const kept = await server.http.request('/healthz', { headers: { 'x-request-id': 'lb-7f3a.42' } });
      assert.equal(kept.headers['x-request-id'], 'lb-7f3a.42');
      const forged = await server.http.request('/healthz', {
        headers: { 'x-request-id': 'a"b},{"level":60' },
      });
      assert.match(String(forged.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    });

    it('reports readiness: store reachable and migrations current', async () => {
      const res = await server.http.request('/readyz');
      assert.equal(res.status, 200);
      assert.deepEqual(res.json, { status: 'ok' });
    });
  });
}

describe('metrics without a token', () => {
  it('are served to a direct loopback connection only', async () => {
    const server = await startTestServer('sqlite', { purgeIntervalSeconds: 0 });
    try {
      // The test client connects from 127.0.0.1, so it is served.
      const res = await server.http.request('/metrics');
      assert.equal(res.status, 200);
      assert.match(res.text, /gatehouse_http_requests_total/);
    } finally {
      await server.close();
    }
  });
});
