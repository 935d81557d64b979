import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { request as httpsRequest } from 'node:https';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import { backends, type TestStore } from '../helpers/backends.js';
import { runSql } from '../helpers/store-sql.js';
import { basicAuth, type HttpResponse, type RequestOptions } from '../helpers/https-client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const RUNS = Number(process.env.GATEHOUSE_FUZZ_RUNS ?? 200);
const TIMEOUT_MS = 10_000;
const REDIRECT = 'https://app.test/cb';
const off = { perAddress: 0, perClient: 0 };

/**
 * Tables whose changes on a refused request are the point: `throttle` counts failed attempts (the
 * lockout and rate limits exist to remember refused requests), and `metric_samples` holds the
 * dashboard's figures, which count refused requests by their error (decision 43) and are flushed on a
 * timer whenever it fires. Kysely's own tables never change here.
 */
const UNWATCHED = new Set(['throttle', 'metric_samples', 'kysely_migration', 'kysely_migration_lock']);

/** Every row of every table, as one canonical string per table. */
async function snapshot(store: TestStore): Promise<Map<string, string>> {
  const tables = await runSql(
    store.storage,
    store.backend === 'sqlite'
      ? sql<{
          name: string;
        }>`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`
      : sql<{ name: string }>`SELECT table_name AS name FROM information_schema.tables
          WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`,
  );
  const result = new Map<string, string>();
  for (const { name } of tables) {
    if (UNWATCHED.has(name)) continue;
    const rows = await runSql(store.storage, sql<Record<string, unknown>>`SELECT * FROM ${sql.table(name)}`);
    result.set(
      name,
      rows
        .map((row) => JSON.stringify(row))
        .sort()
        .join('\n'),
    );
  }
  return result;
}

/** Rows only in `before` (-) and only in `after` (+), per changed table. */
function describeChanges(before: Map<string, string>, after: Map<string, string>, tables: string[]): string {
  return tables
    .map((table) => {
      const old = new Set((before.get(table) ?? '').split('\n'));
      const now = new Set((after.get(table) ?? '').split('\n'));
      const removed = [...old].filter((row) => !now.has(row)).map((row) => `- ${row.slice(0, 200)}`);
      const added = [...now].filter((row) => !old.has(row)).map((row) => `+ ${row.slice(0, 200)}`);
      return `${table}:\n${[...removed, ...added].join('\n')}`;
    })
    .join('\n');
}

function changedTables(before: Map<string, string>, after: Map<string, string>): string[] {
  const names = new Set([...before.keys(), ...after.keys()]);
  return [...names].filter((name) => before.get(name) !== after.get(name));
}

interface FuzzRequest {
  method: string;
  path: string;
  options: RequestOptions;
}

/** What a header may carry at all (the client library refuses the rest before anything is sent). */
const headerSafe = (value: string) => value.replace(/[^\x20-\x7e]/g, '');

interface Material {
  clientId: string;
  secret: string;
  publicClientId: string;
  victimClientId: string;
  username: string;
  password: string;
  userToken: string;
  adminToken: string;
  userId: string;
}

function arbitraries(m: Material) {
  const anyString = fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.string({ unit: 'binary-ascii', maxLength: 40 }),
    fc.constant(''),
    fc.constant('a'.repeat(5000)),
    fc.constantFrom('%00', '%ZZ', '\u0000', '../..', '{"a":1}', 'null', '[]', 'S256', 'plain'),
  );
  const known = fc.constantFrom(
    m.clientId,
    m.secret,
    m.publicClientId,
    m.username,
    m.password,
    m.userToken,
    REDIRECT,
    `${REDIRECT}/other`,
    'https://evil.test/cb',
    'read',
    'read profile',
    'admin',
    'profile unknown',
    `ac_${randomBytes(32).toString('base64url')}`,
    `rt_${randomBytes(32).toString('base64url')}`,
    'access_token',
    'refresh_token',
    'bearer',
    'mac',
  );
  const value = fc.oneof({ arbitrary: known, weight: 2 }, { arbitrary: anyString, weight: 1 });
  const oauthKey = fc.oneof(
    {
      arbitrary: fc.constantFrom(
        'grant_type',
        'code',
        'redirect_uri',
        'client_id',
        'client_secret',
        'refresh_token',
        'scope',
        'username',
        'password',
        'code_verifier',
        'token',
        'token_type_hint',
        'response_type',
        'state',
        'code_challenge',
        'code_challenge_method',
        'device_code',
      ),
      weight: 4,
    },
    { arbitrary: fc.string({ maxLength: 12 }), weight: 1 },
  );
  const grantType = fc.oneof(
    fc.constantFrom(
      'authorization_code',
      'password',
      'client_credentials',
      'refresh_token',
      'implicit',
      'AUTHORIZATION_CODE',
      'urn:ietf:params:oauth:grant-type:device_code',
    ),
    anyString,
  );
  const pairs = fc.array(fc.tuple(oauthKey, value), { maxLength: 12 });
  const authorization = fc.oneof(
    fc.constant(undefined),
    fc.constant(basicAuth(m.clientId, m.secret)),
    fc.tuple(value, value).map(([id, secret]) => basicAuth(id, secret)),
    anyString.map((s) => `Basic ${headerSafe(s)}`),
    anyString.map((s) => `Bearer ${headerSafe(s)}`),
    fc.constant(`Bearer ${m.userToken}`),
    anyString.map(headerSafe),
  );
  const contentType = fc.oneof(
    { arbitrary: fc.constant('application/x-www-form-urlencoded'), weight: 6 },
    {
      arbitrary: fc.constantFrom(
        undefined,
        'application/json',
        'text/plain',
        'multipart/form-data; boundary=x',
        'application/x-www-form-urlencoded; charset=latin1',
      ),
      weight: 1,
    },
  );
  const rawBody = fc.oneof(fc.constant(undefined), anyString, fc.json());

  const formRequest = (path: string, extra: [string, string][] = []) =>
    fc
      .record({
        pairs,
        grantType,
        authorization,
        contentType,
        rawBody,
        useRaw: fc.boolean(),
        useGrant: fc.boolean(),
      })
      .map((r): FuzzRequest => {
        const form = new URLSearchParams();
        if (r.useGrant) form.append('grant_type', r.grantType);
        for (const [k, v] of [...extra, ...r.pairs]) form.append(k, v);
        const headers: Record<string, string> = {};
        if (r.contentType !== undefined) headers['content-type'] = r.contentType;
        if (r.authorization !== undefined) headers.authorization = r.authorization;
        const body = r.useRaw && r.rawBody !== undefined ? r.rawBody : form.toString();
        return { method: 'POST', path, options: { method: 'POST', headers, body } };
      });

  const authorize = fc
    .record({
      pairs,
      responseType: fc.oneof(fc.constantFrom('code', 'token', 'code token', 'id_token'), anyString),
      withClient: fc.boolean(),
      rawQuery: fc.option(
        anyString.map((s) => encodeURI(s).replace(/#/g, '%23')),
        { nil: undefined },
      ),
      cookie: fc.option(anyString.map(headerSafe), { nil: undefined }),
    })
    .map((r): FuzzRequest => {
      const query = new URLSearchParams();
      query.append('response_type', r.responseType);
      if (r.withClient) {
        query.append('client_id', m.clientId);
        query.append('redirect_uri', REDIRECT);
      }
      for (const [k, v] of r.pairs) query.append(k, v);
      const path = `/authorize?${r.rawQuery ?? query.toString()}`;
      const headers: Record<string, string> = r.cookie === undefined ? {} : { cookie: r.cookie };
      return { method: 'GET', path, options: { method: 'GET', headers } };
    });

  const apiPath = fc.oneof(
    fc.constantFrom(
      '/v1/users/me',
      '/v1/clients',
      `/v1/clients/${m.victimClientId}`,
      `/v1/clients/${m.victimClientId}/grants`,
      `/v1/clients/${m.victimClientId}/rotate-secret`,
      '/v1/users',
      `/v1/users/${m.userId}/grants`,
      '/v1/scopes',
      '/v1/scopes/read',
      '/v1/signing-keys',
      '/v1/openapi',
      '/v1/nothing',
    ),
    fc
      .tuple(fc.constantFrom('clients', 'users', 'scopes', 'signing-keys'), anyString)
      .map(([collection, id]) => `/v1/${collection}/${encodeURIComponent(id)}`),
  );
  const v1 = fc
    .record({
      method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'),
      path: apiPath,
      query: fc.option(
        fc.constantFrom('?limit=-1', '?limit=100000', '?offset=x', '?name=%00', '?access_token=x'),
        {
          nil: undefined,
        },
      ),
      token: fc.oneof(
        fc.constant(m.adminToken),
        fc.constant(m.userToken),
        fc.constant(undefined),
        anyString.map(headerSafe),
      ),
      body: fc.oneof(
        fc.constant(undefined),
        fc.json(),
        fc
          .record(
            {
              name: value,
              username: value,
              password: value,
              description: value,
              redirect_uris: fc.array(value, { maxLength: 3 }),
              grant_types: fc.array(grantType, { maxLength: 3 }),
              scopes: fc.array(value, { maxLength: 3 }),
              token_type: value,
              public: fc.oneof(fc.boolean(), value),
            },
            { requiredKeys: [] },
          )
          .map((o) => JSON.stringify(o)),
        anyString,
      ),
      contentType: fc.constantFrom(
        'application/json',
        'application/merge-patch+json',
        'text/plain',
        undefined,
      ),
    })
    .map((r): FuzzRequest => {
      const headers: Record<string, string> = {};
      if (r.token !== undefined) headers.authorization = `Bearer ${r.token}`;
      if (r.body !== undefined && r.contentType !== undefined) headers['content-type'] = r.contentType;
      const options: RequestOptions = { method: r.method, headers };
      if (r.body !== undefined && r.method !== 'GET' && r.method !== 'HEAD') options.body = r.body;
      return { method: r.method, path: r.path + (r.query ?? ''), options };
    });

  return {
    '/token': formRequest('/token'),
    '/revoke': formRequest('/revoke'),
    '/introspect': formRequest('/introspect'),
    // RFC 9126: an authorization request's parameters, pushed; an accepted one stores a row (201).
    '/par': formRequest('/par', [['response_type', 'code']]),
    // RFC 8628: an accepted request stores a device authorization (200).
    '/device_authorization': formRequest('/device_authorization'),
    '/authorize': authorize,
    '/v1': v1,
  };
}

/**
 * One request on a connection of its own (no keep-alive reuse: a connection the server closed after a
 * refused body must not be mistaken for a server that hung up), bounded by a timeout.
 */
function send(server: TestServer, request: FuzzRequest): Promise<HttpResponse> {
  const url = new URL(server.http.baseUrl + request.path);
  const headers: Record<string, string | string[]> = { ...request.options.headers };
  // Framed explicitly: node sends a DELETE or OPTIONS body unframed, which the server would rightly
  // read as the start of a second, malformed request.
  if (request.options.body !== undefined)
    headers['content-length'] = String(Buffer.byteLength(request.options.body));
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      {
        method: request.method,
        headers,
        ca: server.ca,
        agent: false,
        timeout: TIMEOUT_MS,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: undefined });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
    req.on('error', reject);
    if (request.options.body !== undefined) req.write(request.options.body);
    req.end();
  });
}

for (const backend of backends()) {
  describe(`fuzzing the HTTP surface (${backend})`, () => {
    let server: TestServer;
    let material: Material;
    let endpoints: ReturnType<typeof arbitraries>;

    before(async () => {
      server = await startTestServer(
        backend,
        {
          purgeIntervalSeconds: 0,
          rateLimits: { token: off, authorize: off, introspect: off, signIn: off },
        },
        // Each request on a connection of its own, framed as sent (see send()).
        { transport: 'https' },
      );
      const { client, secret } = await server.client({
        redirect_uris: [REDIRECT],
        grant_types: [
          'authorization_code',
          'implicit',
          'refresh_token',
          'password',
          'client_credentials',
          'urn:ietf:params:oauth:grant-type:device_code',
        ],
        scopes: ['read', 'profile', 'admin'],
      });
      const publicClient = await server.client({
        redirect_uris: [REDIRECT],
        grant_types: ['authorization_code'],
        public: true,
      });
      const victim = await server.client({ name: 'victim', grant_types: ['client_credentials'] });
      const { user, password } = await server.user('fuzz-user', 'fuzz user password');
      const userToken = (
        await server.http.token(
          { grant_type: 'password', username: user.username, password, scope: 'profile read' },
          { id: client.id, secret },
        )
      ).json as { access_token: string };
      const adminToken = (
        await server.http.token(
          { grant_type: 'client_credentials', scope: 'admin' },
          { id: client.id, secret },
        )
      ).json as { access_token: string };
      material = {
        clientId: client.id,
        secret,
        publicClientId: publicClient.client.id,
        victimClientId: victim.client.id,
        username: user.username,
        password,
        userToken: userToken.access_token,
        adminToken: adminToken.access_token,
        userId: user.id,
      };
      endpoints = arbitraries(material);
    });
    after(async () => {
      await server.close();
    });

    for (const endpoint of [
      '/token',
      '/revoke',
      '/introspect',
      '/par',
      '/device_authorization',
      '/authorize',
      '/v1',
    ] as const) {
      it(`${endpoint}: no 5xx, no hang, and a refused request changes nothing in the store`, async () => {
        const statuses = new Map<number, number>();
        let baseline = await snapshot(server.store);
        const history: string[] = [];
        let firstFailure: string | undefined;
        const details = await fc.check(
          fc.asyncProperty(endpoints[endpoint], async (request) => {
            const res = await send(server, request);
            history.push(
              `${res.status} ${request.method} ${request.path.slice(0, 120)} ` +
                `${JSON.stringify(request.options.headers).slice(0, 160)} ${String(request.options.body).slice(0, 300)}`,
            );
            statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
            assert.ok(res.status < 500, `answered ${res.status}: ${res.text.slice(0, 300)}`);
            const now = await snapshot(server.store);
            const changed = changedTables(baseline, now);
            const before = baseline;
            baseline = now;
            if (res.status >= 400 && changed.length > 0) {
              firstFailure ??= `${res.status} changed ${changed.join(', ')}:\n${describeChanges(before, now, changed)}\nlast requests:\n${history.slice(-4).join('\n')}`;
              assert.deepEqual(changed, [], `${res.status} changed the store`);
            }
          }),
          { numRuns: RUNS },
        );
        if (details.failed) {
          const [request] = details.counterexample ?? [];
          assert.fail(
            `${(details.errorInstance as Error | undefined)?.message ?? 'failed'}\n` +
              `request: ${request?.method} ${request?.path.slice(0, 300)} ` +
              `${JSON.stringify(request?.options).slice(0, 600)}\n` +
              `(fast-check seed ${details.seed}, path ${details.counterexamplePath})\n` +
              `first failure: ${firstFailure ?? 'n/a'}`,
          );
        }
        // The generators reach past the first checks: some requests are refused, some succeed.
        const refused = [...statuses].filter(([s]) => s >= 400).reduce((n, [, c]) => n + c, 0);
        assert.ok(refused > 0, `statuses: ${JSON.stringify([...statuses])}`);
        assert.ok(statuses.size >= 2, `statuses: ${JSON.stringify([...statuses])}`);
      });
    }
  });
}
