import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TokenError } from 'gatehouse-oauth-resource-server/rfc6750';
import { OAuthError } from '../../src/core/errors.js';
import { Problem } from '../../src/http/api/v1/problem.js';
import { errorLabel } from '../../src/http/error-label.js';
import { apiClient, clientCredentialsToken } from '../helpers/api-requests.js';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const METRICS_TOKEN = 'scrape-token-for-error-metrics';

/** Every gatehouse_oauth_errors_total sample, as `route error` → value. */
function errorCounts(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^gatehouse_oauth_errors_total\{(.*)\} (\d+)$/.exec(line);
    if (match === null) continue;
    const labels = Object.fromEntries(
      [...(match[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map(([, key, value]) => [key, value]),
    );
    counts.set(`${labels.route} ${labels.error}`, Number(match[2]));
  }
  return counts;
}

// docs/deployment.md says to alert on gatehouse_oauth_errors_total{error="server_error"}: a refusal
// (no token, a bad one, a missing resource) must never count there, only a 5xx.
for (const backend of backends()) {
  describe(`gatehouse_oauth_errors_total labels refusals by what they are (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(backend, {
        metricsToken: METRICS_TOKEN,
        purgeIntervalSeconds: 0,
        dynamicRegistration: 'open',
      });
    });
    after(async () => {
      await server?.close();
    });

    const scrape = async () => {
      const res = await server.http.request('/metrics', {
        headers: { authorization: `Bearer ${METRICS_TOKEN}` },
      });
      assert.equal(res.status, 200);
      return errorCounts(res.text);
    };

    it('401 without a token or with a bad one at /v1 and /register/:id, 404, 400 and 403: no server_error', async () => {
      const none = apiClient(server, undefined);
      assert.equal((await none.get('/clients')).status, 401);
      assert.equal((await none.get('/users/me')).status, 401);
      assert.equal((await apiClient(server, 'not-a-token').get('/clients')).status, 401);
      assert.equal((await server.http.request('/register/cl_nobody')).status, 401);
      const wrongToken = await server.http.request('/register/cl_nobody', {
        headers: { authorization: 'Bearer rat_wrong' },
      });
      assert.equal(wrongToken.status, 401);

      const admin = apiClient(server, (await clientCredentialsToken(server, ['admin'])).token);
      assert.equal((await admin.get('/clients/cl_nobody')).status, 404);
      assert.equal((await admin.post('/clients', { name: 'x', grant_types: ['nonsense'] })).status, 400);
      const profileOnly = apiClient(server, (await clientCredentialsToken(server, ['profile'])).token);
      assert.equal((await profileOnly.get('/clients')).status, 403);

      const counts = await scrape();
      const serverErrors = [...counts].filter(([key]) => key.endsWith(' server_error'));
      assert.deepEqual(serverErrors, [], 'no refusal counts as server_error');
      assert.equal(counts.get('/v1/clients invalid_token'), 2);
      assert.equal(counts.get('/v1/users/me invalid_token'), 1);
      assert.equal(counts.get('/register/:id invalid_token'), 2);
      assert.equal(counts.get('/v1/clients/:id not_found'), 1);
      assert.equal(counts.get('/v1/clients invalid_request'), 1);
      assert.equal(counts.get('/v1/clients insufficient_scope'), 1);
    });
  });
}

describe('errorLabel', () => {
  it('is server_error for a 5xx only, and a refusal’s own code otherwise', () => {
    assert.equal(errorLabel(new Error('boom'), 500), 'server_error');
    assert.equal(errorLabel(new Error('store down'), 503), 'server_error');
    assert.equal(
      errorLabel(new OAuthError('temporarily_unavailable', 'later', 503), 503),
      'temporarily_unavailable',
    );
    assert.equal(errorLabel(new OAuthError('invalid_grant', 'no'), 400), 'invalid_grant');
    assert.equal(errorLabel(new TokenError(undefined, 'a token is required'), 401), 'invalid_token');
    assert.equal(errorLabel(new TokenError('insufficient_scope', 'admin'), 403), 'insufficient_scope');
    assert.equal(errorLabel(new Problem(409, 'taken', { field: 'name' }), 409), 'conflict');
    assert.equal(errorLabel(new Problem(415, 'send JSON'), 415), 'invalid_request');
    assert.equal(
      errorLabel(Object.assign(new Error('too large'), { statusCode: 413 }), 413),
      'invalid_request',
    );
  });
});
