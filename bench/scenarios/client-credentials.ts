import type { ServerProcess } from '../lib/processes.js';
import { runCli } from '../lib/processes.js';
import { clientCredentialsRequest } from '../lib/token-requests.js';
import { costRatio, cpuPerRequest, throughputRatio } from '../lib/cost.js';
import type { BenchContext, Check, Credentials, Measured, Row, Scenario, Target } from '../lib/types.js';
import { verifyTokenCheck } from '../lib/verify-token.js';
import { RATE_LIMITS_COUNTED, RATE_LIMITS_OFF } from '../lib/rate-limits.js';
import { onFreshPostgres } from '../lib/postgres.js';
import { gatehouseMemory } from '../lib/memory.js';
import { ccResults, type CcRun } from '../lib/cc-results.js';
import { cpuBudgetTarget, signatureCost, signatureRow } from '../lib/signature-cost.js';

/** Target: client_credentials with JWTs and the real store, >= 1/3 of bare Fastify (15,000/s there). */
const MIN_RATIO = 1 / 3;
const REFERENCE_RPS = 15_000;

async function measureClientCredentials(
  context: BenchContext,
  server: ServerProcess,
  client: Credentials,
  name: string,
): Promise<{ row: Row; checks: Check[] }> {
  let sample: string | undefined;
  const [result] = await context.measure(server, [
    { ...clientCredentialsRequest(client), onFirstSuccess: (body) => (sample = body) },
  ]);
  const measured = result!;
  const failures = measured.non2xx + measured.warmupNon2xx + measured.errors;
  const codes = Object.entries(measured.statusCodes)
    .map(([code, count]) => `${code}: ${count}`)
    .join(', ');
  const checks: Check[] = [
    {
      name: `${name}: every response 200`,
      pass: failures === 0,
      detail:
        `${measured.requests} responses (${codes}); ${measured.non2xx} non-2xx, ` +
        `${measured.warmupNon2xx} non-2xx in warm-up, ${measured.errors} connection errors ` +
        `(${measured.timeouts} of them 10 s timeouts)`,
    },
    await verifyTokenCheck({
      name: `${name}: a token from the run verifies`,
      serverUrl: server.url,
      issuer: server.url.replace('127.0.0.1', 'localhost'),
      ca: context.ca,
      responseBody: sample,
      clientId: client.id,
    }),
  ];
  return { row: { scenario: 'cc', label: name, result: measured }, checks };
}

type Setting = 'rate limits counted' | 'rate limits off';
const sqliteRun = (setting: Setting) => ccResults.get(`SQLite, ${setting}` satisfies CcRun);

/** PostgreSQL next to SQLite: requests/s, and server CPU per request (the noise-resistant one). */
function nextToSqlite(setting: Setting, pg: Measured): Target | undefined {
  const sqlite = sqliteRun(setting);
  if (sqlite === undefined) return undefined;
  return {
    name: `client_credentials PostgreSQL next to SQLite (${setting})`,
    target: 'reported (no threshold)',
    judge: () => ({
      measured:
        `${(pg.rps / sqlite.rps).toFixed(2)} x SQLite requests/s ` +
        `(${Math.round(pg.rps).toLocaleString('en')} vs ${Math.round(sqlite.rps).toLocaleString('en')}/s); ` +
        `CPU per request ${Math.round(cpuPerRequest(pg))} vs ${Math.round(cpuPerRequest(sqlite))} us ` +
        '(PostgreSQL itself not counted)',
      pass: true,
      reported: true,
    }),
  };
}

/** Judged on requests/s; the CPU-cost ratio is shown beside it as the cross-check for noise. */
export function ratioTarget(name: string, result: Measured): Target {
  return {
    name: `${name} >= 1/3 of bare Fastify`,
    target: '>= 0.333 x bare requests/s',
    judge: (bracket) => {
      const ratio = throughputRatio(result, bracket);
      const cost = costRatio(result, bracket);
      return {
        measured: `${ratio.toFixed(3)} x bare (by CPU per request: ${cost.toFixed(3)} x)`,
        pass: ratio >= MIN_RATIO,
      };
    },
  };
}

/** (b) client_credentials, HTTP Basic, SQLite store, pinned Gatehouse: rate limits counted, then off. */
export const clientCredentialsScenario: Scenario = {
  id: 'cc',
  title: 'client_credentials, Basic auth, SQLite, JWT (ES256)',
  async run(context) {
    const client = context.clients.clientCredentials;
    const counted = await measureClientCredentials(
      context,
      context.gatehouse,
      client,
      'client_credentials, SQLite, 1 core, rate limits counted',
    );
    // Issue 17: the server's memory at the end of a loaded run, next to its idle figure (run.ts).
    const loaded = await gatehouseMemory(
      context.gatehouse,
      context.ca,
      'Gatehouse (SQLite, rate limits counted), the shared server',
      'after its client_credentials run',
    );
    const server = await context.startGatehouse({
      label: 'gatehouse-no-limits',
      cpus: context.serverCpus,
      env: RATE_LIMITS_OFF,
    });
    const off = await measureClientCredentials(
      context,
      server,
      client,
      'client_credentials, SQLite, 1 core, rate limits off',
    ).finally(() => server.stop());
    const rps = off.row.result.rps;
    ccResults.set('SQLite, rate limits counted', counted.row.result);
    ccResults.set('SQLite, rate limits off', off.row.result);
    const signature = await signatureCost(context);
    return {
      rows: [counted.row, off.row, signatureRow(signature, 'cc')],
      checks: [...counted.checks, ...off.checks],
      memory: [loaded],
      targets: [
        cpuBudgetTarget('client_credentials (SQLite, rate limits counted)', counted.row.result, signature),
        ratioTarget('client_credentials (SQLite, rate limits counted)', counted.row.result),
        ratioTarget('client_credentials (SQLite, rate limits off)', off.row.result),
        {
          name: 'client_credentials >= 15,000/s on one core (rate limits off)',
          target: '>= 15,000/s',
          judge: () => ({
            measured: `${Math.round(rps).toLocaleString('en')}/s`,
            pass: rps >= REFERENCE_RPS,
          }),
        },
      ],
      notes: [
        'cc: "rate limits counted" is the shipped path (the default limits, raised out of reach so nothing is refused: ' +
          'every request is still counted, in memory, merged into the store every 250 ms); "rate limits off" is GATEHOUSE_RATE_LIMITS=off.',
      ],
    };
  },
};

/** (c) The same on PostgreSQL (target: "client credentials on PostgreSQL next to SQLite"). */
export const clientCredentialsPostgresScenario: Scenario = {
  id: 'cc-pg',
  title: 'client_credentials, Basic auth, PostgreSQL, JWT (ES256)',
  postgres: true,
  async run(context) {
    return onFreshPostgres(context, 'cc-pg', async (databaseUrl) => {
      // Only serve, init and migrate create a store; the other commands refuse a database without one.
      runCli({ dataDir: context.dataDir, databaseUrl }, ['migrate']);
      const created = runCli<{ client_id: string; client_secret: string }>(
        { dataDir: context.dataDir, databaseUrl },
        ['clients', 'create', '--name', 'bench-cc-pg', '--grant-types', 'client_credentials'],
      );
      const client = { id: created.client_id, secret: created.client_secret };
      const rows: Row[] = [];
      const checks: Check[] = [];
      const targets: Target[] = [];
      for (const [setting, env] of [
        ['rate limits counted', RATE_LIMITS_COUNTED],
        ['rate limits off', RATE_LIMITS_OFF],
      ] as const) {
        const server = await context.startGatehouse({
          label: 'gatehouse-pg',
          cpus: context.serverCpus,
          databaseUrl,
          env,
        });
        const measured = await measureClientCredentials(
          context,
          server,
          client,
          `client_credentials, PostgreSQL, 1 core, ${setting}`,
        ).finally(() => server.stop());
        ccResults.set(`PostgreSQL, ${setting}`, measured.row.result);
        const sqlite = sqliteRun(setting);
        rows.push({
          ...measured.row,
          scenario: 'cc-pg',
          ...(sqlite ? { compare: `${(measured.row.result.rps / sqlite.rps).toFixed(2)} x SQLite` } : {}),
        });
        checks.push(...measured.checks);
        targets.push(ratioTarget(`client_credentials (PostgreSQL, ${setting})`, measured.row.result));
        if (setting === 'rate limits counted') {
          const name = `client_credentials (PostgreSQL, ${setting})`;
          targets.push(cpuBudgetTarget(name, measured.row.result, await signatureCost(context)));
        }
        const comparison = nextToSqlite(setting, measured.row.result);
        if (comparison !== undefined) targets.push(comparison);
      }
      return {
        rows,
        checks,
        targets,
        notes: [
          'cc-pg: PostgreSQL itself is not pinned; it shares the machine with the driver and other work.',
        ],
      };
    });
  },
};
