import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createGatehouse, type Gatehouse } from '../../src/compose/gatehouse.js';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  apiClient,
  assertProblem,
  clientCredentialsToken,
  expectStatus,
  type ApiClient,
  type Credentials,
} from '../helpers/api-requests.js';

interface StatisticsBody {
  at: string;
  minutes: string[];
  processes: number;
  token_responses: Record<string, number[]>;
  sign_ins: number[];
  failed_sign_ins: number[];
  lockouts: number[];
  errors: Record<string, number[]>;
  requests: number[];
  latency_ms: { p50: (number | null)[]; p99: (number | null)[] };
  active_sessions: number;
  signing_keys: { kid: string; alg: string; status: string; created_at: string; age_seconds: number }[];
  pending_migrations: string[];
  tls_certificate: { subject: string; not_after: string; expires_in_seconds: number } | null;
  purge_backlog: Record<string, number>;
  count_limit: number;
}

/** Issue 30, point 3 (docs/decisions.md, decision 43): the figures of every process, over /v1. */
for (const backend of backends()) {
  describe(`/v1/statistics with two Gatehouse processes on one store (${backend})`, () => {
    let server: TestServer;
    /** A second Gatehouse on the same store, as another process of the deployment would be. */
    let second: Gatehouse;
    let api: ApiClient;
    let credentials: Credentials;
    before(async () => {
      server = await startTestServer(backend);
      second = await createGatehouse(server.gatehouse.config, {
        clock: server.clock,
        storage: server.store.reopen(),
      });
      await second.app.ready();
      // This token is the first token response, answered by the first process.
      const admin = await clientCredentialsToken(server, ['admin']);
      credentials = admin.credentials;
      api = apiClient(server, admin.token);
    });
    after(async () => {
      await second.app.close();
      await server.close();
    });

    /** A client_credentials request at `app`, right or with a wrong secret. */
    const tokenAt = (gatehouse: Gatehouse, secret = credentials.secret) =>
      gatehouse.app.inject({
        method: 'POST',
        url: '/token',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${credentials.id}:${secret}`).toString('base64')}`,
        },
        payload: 'grant_type=client_credentials',
      });

    const read = async (): Promise<StatisticsBody> => {
      const res = await api.get('/statistics');
      expectStatus(res, 200);
      return res.json as StatisticsBody;
    };

    it('sums the token responses, errors and requests of both processes per minute', async () => {
      for (let i = 0; i < 2; i++) assert.equal((await tokenAt(server.gatehouse)).statusCode, 200);
      for (let i = 0; i < 3; i++) assert.equal((await tokenAt(second)).statusCode, 200);
      assert.equal((await tokenAt(second, 'wrong')).statusCode, 401);
      // The second process writes what it counted, as its 15-second timer would; the first writes its
      // own when it answers.
      await second.figures.flush();
      const body = await read();
      assert.equal(body.minutes.length, 60);
      assert.equal(Date.parse(body.minutes.at(-1) ?? ''), Math.floor(server.clock.now() / 60) * 60_000);
      assert.equal(body.processes, 2);
      // 1 (the admin's token) + 2 from the first process, 3 from the second.
      assert.equal(body.token_responses['client_credentials']?.at(-1), 6);
      assert.equal(body.errors['invalid_client']?.at(-1), 1);
      // Every request both processes answered before this one: 7 token requests.
      assert.ok((body.requests.at(-1) ?? 0) >= 7, `${body.requests.at(-1)}`);
      const p50 = body.latency_ms.p50.at(-1);
      const p99 = body.latency_ms.p99.at(-1);
      assert.ok(typeof p50 === 'number' && typeof p99 === 'number' && p50 > 0 && p99 >= p50, `${p50} ${p99}`);
      assert.equal(body.latency_ms.p50[0], null, 'an hour ago nothing was answered');
      assert.deepEqual(body.sign_ins, new Array(60).fill(0));
    });

    it('adds each flush to what the process wrote before, in the minute it was counted', async () => {
      const before = (await read()).token_responses['client_credentials']?.at(-1) ?? 0;
      assert.equal((await tokenAt(second)).statusCode, 200);
      await second.figures.flush();
      assert.equal((await read()).token_responses['client_credentials']?.at(-1), before + 1);
      // A minute later the count is in the minute before the current one.
      server.clock.advance(60);
      const later = await read();
      assert.equal(later.token_responses['client_credentials']?.at(-2), before + 1);
      assert.equal(later.token_responses['client_credentials']?.at(-1), 0);
    });

    it('says the state of things: signing keys and their age, migrations, the certificate, the purge backlog', async () => {
      const body = await read();
      const active = body.signing_keys.find((key) => key.status === 'active');
      assert.ok(active !== undefined);
      assert.equal(active.age_seconds, server.clock.now() - Date.parse(active.created_at) / 1000);
      assert.deepEqual(body.pending_migrations, []);
      // The test server serves the development certificate (CN=localhost, a year long).
      assert.ok(body.tls_certificate !== null);
      assert.match(body.tls_certificate.subject, /localhost/);
      assert.ok(body.tls_certificate.expires_in_seconds > 0);
      assert.equal(
        body.tls_certificate.expires_in_seconds,
        Date.parse(body.tls_certificate.not_after) / 1000 - server.clock.now(),
      );
      assert.ok('metric_samples' in body.purge_backlog && 'audit_events' in body.purge_backlog);
      assert.ok(Object.values(body.purge_backlog).every((rows) => rows >= 0 && rows <= body.count_limit));
      assert.equal(body.active_sessions, 0);
    });

    it('is for administrators only', async () => {
      assertProblem(await apiClient(server, undefined).get('/statistics'), 401);
      const reader = await clientCredentialsToken(server, ['profile']);
      assertProblem(await apiClient(server, reader.token).get('/statistics'), 403);
    });
  });
}
