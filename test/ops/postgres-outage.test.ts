import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createGatehouse, type Gatehouse } from '../../src/compose/gatehouse.js';
import { loadConfig } from '../../src/config.js';
import { ClientRegistry } from '../../src/core/clients/client-registry.js';
import { systemClock } from '../../src/shared/clock.js';
import { basicAuth, HttpsClient, type HttpResponse } from '../helpers/https-client.js';
import {
  privatePostgresUnavailable,
  startPrivatePostgres,
  type PrivatePostgres,
} from '../helpers/private-postgres.js';
import { alive } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';

const skip = privatePostgresUnavailable() ?? false;
if (skip !== false) console.log(`notice: PostgreSQL outage test skipped; ${skip}`);

/** Failure bounds only: every wait below ends on an event or a condition. */
const BOUND_MS = 60_000;

interface Seen {
  path: string;
  status: number;
  phase: 'before' | 'down' | 'after';
}

describe('PostgreSQL goes away and comes back', () => {
  it(
    'answers 503 while it is down, never crashes, serves again by itself, and every token issued stays valid',
    { skip },
    async () => {
      const pgInstance: PrivatePostgres = await startPrivatePostgres();
      const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-outage-'));
      const logged: Array<{ level: number; msg: string }> = [];
      const rejections: unknown[] = [];
      const onRejection = (reason: unknown) => rejections.push(reason);
      process.on('unhandledRejection', onRejection);
      let gatehouse: Gatehouse | undefined;
      // The load loop runs while this is set; a failing assertion clears it on the way out.
      let loading = false;
      let http: HttpsClient | undefined;
      try {
        const config = loadConfig(
          {
            dataDir,
            databaseUrl: pgInstance.url,
            port: 0,
            host: '127.0.0.1',
            issuer: 'https://gatehouse.test',
            secret: Buffer.alloc(32, 9),
            logLevel: 'warn',
            // Both background tasks meet the outage: the purge (in its process) and the key ring.
            purgeIntervalSeconds: 1,
            keyRefreshIntervalSeconds: 1,
            // The load comes from one address, past the 600 token requests a minute an honest one
            // sends (while the store is down a cached client answers /token at once): a 429 would be
            // the limiter doing its job, which test/ops/limits.test.ts checks, not the outage's answer.
            rateLimits: {
              token: { perAddress: 0, perClient: 0 },
              introspect: { perAddress: 0, perClient: 0 },
            },
          },
          {},
        );
        gatehouse = await createGatehouse(config, {
          logger: {
            level: 'warn',
            stream: new Writable({
              write(chunk: Buffer, _encoding, done) {
                for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
                  logged.push(JSON.parse(line) as { level: number; msg: string });
                }
                done();
              },
            }),
          },
        });
        const url = await gatehouse.listen();
        http = new HttpsClient(url.replace('localhost', '127.0.0.1'), gatehouse.tls?.cert ?? '');
        const client = http;
        const purgePid = gatehouse.purgeProcessPid;
        assert.ok(purgePid !== undefined, 'a purge process runs');

        const { client: app, secret } = await new ClientRegistry(gatehouse.storage, systemClock).create({
          name: 'outage probe',
          grant_types: ['client_credentials'],
          scopes: ['admin'],
        });
        const credentials = { id: app.id, secret: secret ?? '' };
        const tokens: string[] = [];
        const newToken = async (): Promise<HttpResponse> => {
          const res = await client.token({ grant_type: 'client_credentials', scope: 'admin' }, credentials);
          if (res.status === 200) tokens.push((res.json as { access_token: string }).access_token);
          return res;
        };
        const first = await newToken();
        assert.equal(first.status, 200, first.text);
        const admin = tokens[0]!;
        const listClients = () =>
          client.request('/v1/clients', { headers: { authorization: `Bearer ${admin}` } });

        // Load: a bounded loop of token requests and store reads, until told to stop.
        let phase: Seen['phase'] = 'before';
        const seen: Seen[] = [];
        loading = true;
        const loopDeadline = Date.now() + 3 * BOUND_MS;
        const failures: string[] = [];
        // A dropped connection is recorded (status 0), not thrown: the test reports every one.
        const attempt = async (path: string, send: () => Promise<HttpResponse>) => {
          let status = 0;
          try {
            status = (await send()).status;
          } catch (error) {
            failures.push(`${phase} ${path}: ${(error as Error).message}`);
          }
          // The phase it was answered in: one answered before the stop began was served by the store.
          seen.push({ path, status, phase });
        };
        const worker = async () => {
          while (loading && Date.now() < loopDeadline) {
            await attempt('/token', newToken);
            await attempt('/v1/clients', listClients);
            // Paced, so that the loop loads the server without taking the machine from the database.
            await sleep(10);
          }
        };
        const workers = Promise.all([worker(), worker(), worker()]);
        await waitFor(async () => seen.length >= 30, BOUND_MS, 'the load did not start');

        phase = 'down';
        await pgInstance.stop();
        // While it is down: /readyz fails, store reads answer 503 with a clear body and Retry-After.
        const ready = await client.request('/readyz');
        assert.equal(ready.status, 503, ready.text);
        await waitFor(
          async () => seen.some((s) => s.phase === 'down' && s.path === '/v1/clients' && s.status === 503),
          BOUND_MS,
          'no 503 from the store while it was down',
        );
        const down = await listClients();
        assert.equal(down.status, 503, down.text);
        assert.match(String(down.headers['content-type']), /^application\/problem\+json/);
        assert.equal(down.headers['retry-after'], '5');
        assert.deepEqual(down.json, {
          type: 'about:blank',
          title: 'Service Unavailable',
          status: 503,
          detail: 'the store is unavailable; retry shortly',
        });
        const introspectDown = await client.request('/introspect', {
          form: { token: admin },
          headers: { authorization: basicAuth(credentials.id, credentials.secret) },
        });
        assert.ok([200, 503].includes(introspectDown.status), introspectDown.text);
        if (introspectDown.status === 503) {
          assert.equal(introspectDown.headers['retry-after'], '5');
          assert.equal((introspectDown.json as { error: string }).error, 'temporarily_unavailable');
        }
        // Long enough down for a key-ring refresh and a purge run to meet it (both every second).
        const downSince = performance.now();
        await waitFor(
          async () =>
            performance.now() - downSince > 3000 && seen.filter((s) => s.phase === 'down').length >= 30,
          BOUND_MS,
          'too few requests while the store was down',
        );

        await pgInstance.start();
        const restarted = performance.now();
        phase = 'after';
        await waitFor(
          async () => (await client.request('/readyz')).status === 200,
          BOUND_MS,
          '/readyz not ready',
        );
        await waitFor(async () => (await newToken()).status === 200, BOUND_MS, 'no token after the restart');
        await waitFor(
          async () => (await listClients()).status === 200,
          BOUND_MS,
          'no store read after the restart',
        );
        const recoveredMs = performance.now() - restarted;
        // The load loop is served again too: waited for, since the checks above can all pass before
        // any worker's next store read is answered.
        await waitFor(
          async () => seen.some((s) => s.phase === 'after' && s.path === '/v1/clients' && s.status === 200),
          BOUND_MS,
          'the load loop was not served after the restart',
        );
        loading = false;
        await workers;

        // Never a 500, never a dropped connection: 200 or 503 only, and 503 only while it was down.
        const statuses = new Set(seen.map((s) => `${s.phase} ${s.path} ${s.status}`));
        assert.deepEqual(failures, [], 'dropped connections');
        for (const s of seen) {
          assert.ok(s.status === 200 || s.status === 503, `${s.phase} ${s.path}: ${s.status}`);
          if (s.phase === 'before') assert.equal(s.status, 200, `${s.path} before the outage`);
        }
        assert.ok(statuses.has('after /v1/clients 200'), [...statuses].join(', '));

        // Every token answered 200, before, during or after the outage, is valid now.
        assert.ok(tokens.length > 10, `${tokens.length} tokens`);
        for (const token of tokens) {
          const res = await client.request('/introspect', {
            form: { token },
            headers: { authorization: basicAuth(credentials.id, credentials.secret) },
          });
          assert.equal(res.status, 200, res.text);
          assert.equal(
            (res.json as { active: boolean }).active,
            true,
            'a token issued before is still active',
          );
        }

        // Nothing crashed: the purge process is the same one, no rejection went unhandled, nothing
        // was logged as a server fault (the outage is logged at warn).
        assert.equal(gatehouse.purgeProcessPid, purgePid);
        assert.ok(alive(purgePid), 'the purge process survived');
        assert.deepEqual(rejections, []);
        const faults = logged.filter((line) => line.level >= 50);
        assert.deepEqual(faults, [], 'error lines');
        assert.ok(recoveredMs < BOUND_MS, `${Math.round(recoveredMs)} ms`);
      } finally {
        loading = false;
        process.off('unhandledRejection', onRejection);
        http?.close();
        await gatehouse?.close().catch(() => undefined);
        await pgInstance.destroy();
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  );
});
