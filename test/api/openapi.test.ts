import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { assertProblem, expectStatus } from '../helpers/api-requests.js';

type Json = Record<string, unknown>;
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
/** Verbs that may open an action segment (only where no HTTP method fits, docs/api.md). */
const ACTION_VERBS = new Set(['rotate', 'publish', 'search', 'reset', 'verify', 'revoke']);
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8';

/**
 * Seed §4.4: nouns not verbs, plural collections, lower case, hyphens not underscores, no format
 * suffix; a verb only as a final action segment on an item, served by POST alone. Returns the
 * violations found, one line each.
 */
export function namingViolations(paths: Record<string, Json>): string[] {
  const violations: string[] = [];
  for (const [path, item] of Object.entries(paths)) {
    const methods = Object.keys(item).filter((key) => METHODS.includes(key));
    const segments = path.split('/').slice(1);
    if (segments[0] !== 'v1') violations.push(`${path}: does not start with the version segment /v1`);
    const rest = segments.slice(1);
    rest.forEach((segment, index) => {
      const where = `${path}: segment "${segment}"`;
      const isParam = /^\{[A-Za-z]+\}$/.test(segment);
      if (!isParam && !/^[a-z0-9]+(-[a-z0-9]+)*$/.test(segment)) {
        violations.push(`${where} is not lower-case words joined by hyphens`);
      }
      if (segment.includes('.')) violations.push(`${where} has a format suffix`);
      const last = index === rest.length - 1;
      if (index % 2 === 1) {
        // An item position: an id parameter, or `me`, the token's own user.
        if (!isParam && !(segment === 'me' && rest[index - 1] === 'users')) {
          violations.push(`${where} should be an {id} of the collection before it`);
        }
        return;
      }
      if (isParam) {
        violations.push(`${where}: a parameter where a collection noun belongs`);
        return;
      }
      const firstWord = segment.split('-')[0] ?? '';
      if (ACTION_VERBS.has(firstWord)) {
        if (!last) violations.push(`${where}: an action must be the final segment`);
        if (index === 0) violations.push(`${where}: an action needs an item to act on`);
        if (methods.join() !== 'post') violations.push(`${where}: an action is served by POST only`);
        return;
      }
      if (!segment.endsWith('s')) violations.push(`${where} is not a plural noun`);
    });
  }
  return violations;
}

for (const backend of backends()) {
  describe(`GET /v1/openapi (${backend})`, () => {
    let server: TestServer;
    let document: Json;
    before(async () => {
      server = await startTestServer(backend);
      const res = await server.http.request('/v1/openapi', { headers: { accept: 'application/json' } });
      expectStatus(res, 200);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      assert.match(String(res.headers.vary), /accept/i);
      document = res.json as Json;
    });
    after(async () => {
      await server.close();
    });

    it('is an OpenAPI 3.1 document of every /v1 operation, served without a token', () => {
      assert.equal(document.openapi, '3.1.0');
      const paths = document.paths as Record<string, Json>;
      const operations = Object.entries(paths).flatMap(([path, item]) =>
        Object.keys(item)
          .filter((key) => METHODS.includes(key))
          .map((method) => `${method.toUpperCase()} ${path}`),
      );
      const expected = [
        'GET /v1/users/me',
        'GET /v1/clients',
        'POST /v1/clients',
        'GET /v1/clients/{id}',
        'PUT /v1/clients/{id}',
        'PATCH /v1/clients/{id}',
        'DELETE /v1/clients/{id}',
        'POST /v1/clients/{id}/rotate-secret',
        'GET /v1/clients/{id}/grants',
        'DELETE /v1/clients/{id}/grants/{grantId}',
        'GET /v1/users',
        'POST /v1/users',
        'GET /v1/users/{id}',
        'PUT /v1/users/{id}',
        'PATCH /v1/users/{id}',
        'DELETE /v1/users/{id}',
        'GET /v1/users/{id}/grants',
        'DELETE /v1/users/{id}/grants/{grantId}',
        'GET /v1/users/{id}/sessions',
        'DELETE /v1/users/{id}/sessions',
        'DELETE /v1/users/{id}/sessions/{sid}',
        'DELETE /v1/users/{id}/second-factors',
        'POST /v1/users/{id}/password-resets',
        'GET /v1/users/{id}/identity-links',
        'DELETE /v1/users/{id}/identity-links/{linkId}',
        'GET /v1/identity-providers',
        'POST /v1/identity-providers',
        'GET /v1/identity-providers/{id}',
        'PUT /v1/identity-providers/{id}',
        'PATCH /v1/identity-providers/{id}',
        'DELETE /v1/identity-providers/{id}',
        'GET /v1/initial-access-tokens',
        'POST /v1/initial-access-tokens',
        'GET /v1/initial-access-tokens/{id}',
        'DELETE /v1/initial-access-tokens/{id}',
        'GET /v1/scopes',
        'POST /v1/scopes',
        'GET /v1/scopes/{name}',
        'PUT /v1/scopes/{name}',
        'PATCH /v1/scopes/{name}',
        'DELETE /v1/scopes/{name}',
        'GET /v1/resources',
        'POST /v1/resources',
        'GET /v1/resources/{uri}',
        'PUT /v1/resources/{uri}',
        'PATCH /v1/resources/{uri}',
        'DELETE /v1/resources/{uri}',
        'GET /v1/signing-keys',
        'POST /v1/signing-keys',
        'GET /v1/signing-keys/{kid}',
        'POST /v1/signing-keys/{kid}/revoke',
        'GET /v1/audit-events',
        'GET /v1/statistics',
      ];
      assert.deepEqual([...operations].sort(), [...expected].sort());
    });

    it('gives every operation its scope, its status codes and closed request schemas', () => {
      const paths = document.paths as Record<string, Record<string, Json>>;
      for (const [path, item] of Object.entries(paths)) {
        for (const [method, operation] of Object.entries(item)) {
          const name = `${method.toUpperCase()} ${path}`;
          const scopes = (operation.security as Array<Record<string, string[]>>)?.[0]?.oauth2;
          assert.deepEqual(scopes, path === '/v1/users/me' ? ['profile'] : ['admin'], name);
          const responses = Object.keys(operation.responses as Json);
          const success = { get: '200', post: '201', put: '201', patch: '201', delete: '204' }[method];
          // RFC 9110 §15.3.3: a POST whose work goes on after the answer (a mail sent) is 202 Accepted.
          const accepted = method === 'post' && responses.includes('202');
          assert.ok(
            success !== undefined && (responses.includes(success) || accepted),
            `${name}: ${responses.join()}`,
          );
          assert.ok(responses.includes('4XX'), `${name} documents its problems`);
          const problem = ((operation.responses as Json)['4XX'] as Json).content as Json;
          assert.ok('application/problem+json' in problem, name);
          const body = (operation.requestBody as Json | undefined)?.content as Json | undefined;
          if (body !== undefined) {
            const schema = (body['application/json'] as Json).schema as Json;
            assert.equal(schema.additionalProperties, false, `${name}: the body refuses unknown fields`);
          }
        }
      }
    });

    it('has paths that obey the API’s naming rules, segment by segment', () => {
      const paths = document.paths as Record<string, Json>;
      assert.ok(Object.keys(paths).length > 10);
      assert.deepEqual(namingViolations(paths), []);
      // The checker itself catches each kind of violation.
      const bad: Record<string, Json> = {
        '/v1/Clients': { get: {} },
        '/v1/client_keys': { get: {} },
        '/v1/clients.json': { get: {} },
        '/v1/client': { get: {} },
        '/v1/clients/{id}/rotate-secret/now': { post: {} },
        '/v1/clients/{id}/publish': { get: {} },
        '/v1/search-users': { post: {} },
        '/v1/clients/{id}/{other}': { get: {} },
        '/clients': { get: {} },
      };
      for (const [path, item] of Object.entries(bad)) {
        assert.ok(namingViolations({ [path]: item }).length > 0, `${path} should be caught`);
      }
    });

    it('documents the OpenID Connect fields: users’ email and name, clients’ post_logout_redirect_uris and id_token_signed_response_alg', () => {
      const paths = document.paths as Record<string, Record<string, Json>>;
      const requestSchema = (path: string, method: string) =>
        ((((paths[path]?.[method]?.requestBody as Json).content as Json)['application/json'] as Json)
          .schema as Json) ?? {};
      const successSchema = (path: string, method: string) => {
        const responses = paths[path]?.[method]?.responses as Record<string, Json>;
        const [, success] = Object.entries(responses).find(([status]) => status.startsWith('2')) ?? [];
        const schema = ((success?.content as Json)['application/json'] as Json).schema as Json;
        // A list answers {items: [...]}: the item is the resource.
        const items = (schema.properties as Record<string, Json> | undefined)?.items;
        return items?.type === 'array' ? (items.items as Json) : schema;
      };
      const property = (schema: Json, name: string) => (schema.properties as Record<string, Json>)[name];
      /** The JSON types a schema admits, null included: ["null", "string"]. */
      const types = (schema: Json | undefined): string[] =>
        schema === undefined
          ? []
          : [
              ...(typeof schema.type === 'string' ? [schema.type] : []),
              ...((schema.anyOf as Json[] | undefined) ?? []).flatMap(types),
            ].sort();
      const enums = (schema: Json | undefined): unknown[] =>
        schema === undefined
          ? []
          : [
              ...((schema.enum as unknown[] | undefined) ?? []),
              ...((schema.anyOf as Json[] | undefined) ?? []).flatMap(enums),
            ];

      // Users: email and name are written (null removes one, where the user exists) and read back.
      for (const [path, method] of [
        ['/v1/users', 'post'],
        ['/v1/users/{id}', 'put'],
        ['/v1/users/{id}', 'patch'],
      ] as const) {
        const body = requestSchema(path, method);
        for (const claim of ['email', 'name']) {
          const schema = property(body, claim);
          assert.ok(types(schema).includes('string'), `${method} ${path}: ${claim}`);
          assert.ok(!((body.required as string[] | undefined) ?? []).includes(claim), `${claim} is optional`);
        }
      }
      assert.equal(property(requestSchema('/v1/users', 'post'), 'email')?.maxLength, 254);
      assert.deepEqual(types(property(requestSchema('/v1/users/{id}', 'patch'), 'email')), [
        'null',
        'string',
      ]);
      for (const [path, method] of [
        ['/v1/users', 'get'],
        ['/v1/users', 'post'],
        ['/v1/users/{id}', 'get'],
        ['/v1/users/{id}', 'put'],
        ['/v1/users/{id}', 'patch'],
        ['/v1/users/me', 'get'],
      ] as const) {
        const schema = successSchema(path, method);
        for (const claim of ['email', 'name']) {
          assert.deepEqual(types(property(schema, claim)), ['null', 'string'], `${method} ${path}: ${claim}`);
        }
      }

      // Clients: RP-Initiated Logout §3.1 and Registration §2, written and read back.
      for (const [path, method] of [
        ['/v1/clients', 'post'],
        ['/v1/clients/{id}', 'put'],
        ['/v1/clients/{id}', 'patch'],
      ] as const) {
        const body = requestSchema(path, method);
        const logout = property(body, 'post_logout_redirect_uris');
        assert.equal(logout?.type, 'array', `${method} ${path}`);
        assert.equal((logout?.items as Json).type, 'string');
        assert.deepEqual(enums(property(body, 'id_token_signed_response_alg')).sort(), ['ES256', 'RS256']);
      }
      for (const [path, method] of [
        ['/v1/clients', 'get'],
        ['/v1/clients', 'post'],
        ['/v1/clients/{id}', 'get'],
        ['/v1/clients/{id}', 'patch'],
      ] as const) {
        const schema = successSchema(path, method);
        const required = (schema.required as string[] | undefined) ?? [];
        for (const field of ['post_logout_redirect_uris', 'id_token_signed_response_alg']) {
          assert.ok(required.includes(field), `${method} ${path} always answers ${field}`);
        }
        assert.deepEqual(enums(property(schema, 'id_token_signed_response_alg')).sort(), ['ES256', 'RS256']);
      }
    });

    it('serves a browser a self-contained reference page under a strict CSP', async () => {
      const res = await server.http.request('/v1/openapi', { headers: { accept: BROWSER_ACCEPT } });
      expectStatus(res, 200);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      const csp = String(res.headers['content-security-policy']);
      assert.match(csp, /default-src 'none'/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:/);
      assert.doesNotMatch(res.text, /<script|<link|<img|<iframe|src=/i);
      assert.doesNotMatch(res.text, /href="(?!#)/, 'only in-page links');
      assert.match(res.text, /<title>Gatehouse REST API reference<\/title>/);
      for (const path of ['/v1/clients/{id}/rotate-secret', '/v1/signing-keys', '/v1/users/me']) {
        assert.ok(res.text.includes(path), path);
      }
      assert.match(res.text, /application\/problem\+json/);
    });

    it('answers an Accept it cannot meet with 406, and has no .json twin', async () => {
      assertProblem(
        await server.http.request('/v1/openapi', { headers: { accept: 'image/png' } }),
        406,
        'accept',
      );
      const plain = await server.http.request('/v1/openapi');
      expectStatus(plain, 200);
      assert.match(String(plain.headers['content-type']), /^application\/json/);
      assertProblem(await server.http.request('/v1/openapi.json'), 404);
      const wrong = await server.http.request('/v1/openapi', { method: 'POST', body: '{}' });
      assertProblem(wrong, 405);
    });
  });
}
