/**
 * `npm run bench`: Gatehouse's performance budget (docs/benchmarks.md, the targets), every figure next to a bare
 * Fastify peer measured in the same run, because the machine is shared and noisy.
 *
 *   npm run bench -- [--only cc,password,...] [--duration S] [--warmup S] [--connections N]
 *                    [--probe-rate N] [--leak-minutes M] [--leak-rate N] [--no-write] [--profile]
 *
 * Gatehouse and the peer run as child processes pinned to core 0; this driver pins itself (and so
 * autocannon) to core 1. Results go to the terminal and into docs/benchmarks.md.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { renderProfile, summariseProfile } from './lib/cpu-profile.js';
import { runLoad, type LoadResult } from './lib/load.js';
import { codeVersion, describeMachine, loadAverage } from './lib/machine.js';
import { repoRoot, writeBlock } from './lib/markdown-block.js';
import {
  GATEHOUSE_MAIN,
  PEER_SERVER,
  ServerProcess,
  freePort,
  hasTaskset,
  pinSelf,
  runCli,
} from './lib/processes.js';
import { judgeTargets, renderConsole, renderMarkdown, type RunReport } from './lib/report.js';
import { bracketOfResult, cpuPerRequest } from './lib/cost.js';
import type {
  BenchContext,
  BenchOptions,
  Bracket,
  Measured,
  RunSpec,
  Scenario,
  StartOptions,
} from './lib/types.js';
import { bareScenario } from './scenarios/bare.js';
import { SCENARIOS } from './scenarios/index.js';
import { createBenchUsers } from './lib/users.js';
import { RATE_LIMITS_COUNTED } from './lib/rate-limits.js';
import { gatehouseMemory } from './lib/memory.js';

const USAGE = `usage: npm run bench -- [--only ID,...] [--duration S] [--warmup S] [--connections N]
                     [--probe-rate N] [--leak-minutes M] [--leak-rate N] [--rounds N] [--no-write]
                     [--profile]
Scenario ids and what each measures: docs/benchmarks.md ("How to run").
`;

let parsed: ReturnType<typeof parseOptions>;
try {
  parsed = parseOptions();
} catch (err) {
  // An unknown or malformed option: one line and the usage, never a stack trace.
  process.stderr.write(`bench: ${(err as Error).message}\n${USAGE}`);
  process.exit(2);
}
if (parsed.values.help === true) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const args = parsed.values;

function parseOptions() {
  const result = parseArgs({
    options: {
      only: { type: 'string' },
      duration: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '3' },
      connections: { type: 'string', default: '50' },
      'probe-rate': { type: 'string', default: '100' },
      'leak-minutes': { type: 'string', default: '10' },
      'leak-rate': { type: 'string', default: '2000' },
      rounds: { type: 'string', default: '5' },
      'no-write': { type: 'boolean', default: false },
      profile: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  for (const name of [
    'duration',
    'warmup',
    'connections',
    'probe-rate',
    'leak-minutes',
    'leak-rate',
    'rounds',
  ] as const) {
    const value = Number(result.values[name]);
    if (!Number.isFinite(value) || value < 0) throw new Error(`--${name} must be a number of at least 0`);
  }
  return result;
}

const options: BenchOptions = {
  duration: Number(args.duration),
  warmup: Number(args.warmup),
  connections: Number(args.connections),
  probeRate: Number(args['probe-rate']),
  profile: args.profile === true,
  leakMinutes: Number(args['leak-minutes']),
  leakRate: Number(args['leak-rate']),
  rounds: Math.max(1, Math.floor(Number(args.rounds))),
};

/** A bad command line: reported as one line, exit code 2. */
class UsageError extends Error {}

function selectScenarios(only: string | undefined): Scenario[] {
  if (only === undefined) return SCENARIOS;
  const ids = only
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id !== '' && id !== 'bare');
  const unknown = ids.filter((id) => !SCENARIOS.some((s) => s.id === id));
  if (unknown.length > 0) {
    throw new UsageError(
      `unknown scenario(s) ${unknown.join(', ')}; known: bare, ${SCENARIOS.map((s) => s.id).join(', ')}`,
    );
  }
  return SCENARIOS.filter((s) => ids.includes(s.id));
}

const GATEHOUSE_SQLITE = 'Gatehouse (SQLite, rate limits counted), the shared server';
const BARE_PEER = 'bare Fastify peer';

const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

async function reachablePostgres(): Promise<string | undefined> {
  const url =
    process.env.GATEHOUSE_BENCH_DATABASE_URL ??
    process.env.GATEHOUSE_TEST_DATABASE_URL ??
    'postgres://postgres@127.0.0.1:5432/test';
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return url;
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function measureTogether(server: ServerProcess, specs: RunSpec[], ca: string): Promise<Measured[]> {
  const load = (spec: RunSpec, duration: number) =>
    runLoad({ connections: options.connections, ...spec, url: server.url, ca, duration });
  const warm = options.warmup > 0 ? await Promise.all(specs.map((spec) => load(spec, options.warmup))) : [];
  const serverBefore = server.cpuSeconds();
  const loopBefore = server.mainThreadCpuSeconds();
  const driverBefore = process.cpuUsage();
  const wallBefore = process.hrtime.bigint();
  const results = await Promise.all(specs.map((spec) => load(spec, options.duration)));
  const wall = Number(process.hrtime.bigint() - wallBefore) / 1e9;
  const driver = process.cpuUsage(driverBefore);
  const serverCpu = (server.cpuSeconds() - serverBefore) / wall;
  const loopCpu = (server.mainThreadCpuSeconds() - loopBefore) / wall;
  const driverCpu = (driver.user + driver.system) / 1e6 / wall;
  return results.map((result, i) => ({
    ...result,
    serverCpu,
    loopCpu,
    driverCpu,
    warmupNon2xx: (warm[i]?.non2xx ?? 0) + (warm[i]?.errors ?? 0),
    concurrent: specs.length > 1,
  }));
}

async function measureCustom<T extends LoadResult>(
  server: ServerProcess,
  load: (seconds: number, phase: 'warmup' | 'measured') => Promise<T>,
): Promise<T & Measured> {
  const warm = options.warmup > 0 ? await load(options.warmup, 'warmup') : undefined;
  const serverBefore = server.cpuSeconds();
  const loopBefore = server.mainThreadCpuSeconds();
  const driverBefore = process.cpuUsage();
  const wallBefore = process.hrtime.bigint();
  const result = await load(options.duration, 'measured');
  const wall = Number(process.hrtime.bigint() - wallBefore) / 1e9;
  const driver = process.cpuUsage(driverBefore);
  return {
    ...result,
    serverCpu: (server.cpuSeconds() - serverBefore) / wall,
    loopCpu: (server.mainThreadCpuSeconds() - loopBefore) / wall,
    driverCpu: (driver.user + driver.system) / 1e6 / wall,
    warmupNon2xx: (warm?.non2xx ?? 0) + (warm?.errors ?? 0),
    concurrent: false,
  };
}

/** Mean requests/s and CPU per request of bare runs (or of two brackets). */
function bracketOf(parts: Array<Measured | Bracket>): Bracket {
  const costs = parts.map((p) => ('cpuPerRequest' in p ? p.cpuPerRequest : cpuPerRequest(p)));
  return {
    rps: parts.reduce((sum, p) => sum + p.rps, 0) / parts.length,
    cpuPerRequest: costs.reduce((sum, c) => sum + c, 0) / costs.length,
  };
}

async function main(): Promise<number> {
  const scenarios = selectScenarios(args.only);
  const machine = describeMachine();
  const pinned = hasTaskset() && machine.nproc >= 2 && pinSelf('1');
  const notes: string[] = [];
  if (!hasTaskset()) notes.push('taskset (util-linux) is missing: nothing was pinned.');
  else if (!pinned) notes.push('fewer than 2 cores: nothing was pinned.');
  const serverCpus = pinned ? '0' : undefined;
  const loadBefore = loadAverage();

  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-'));
  const profileDir = join(dataDir, 'profile');
  const target = { dataDir };
  const servers: ServerProcess[] = [];
  try {
    log(`data dir ${dataDir}; creating clients and users (argon2id)`);
    // Only serve, init and migrate create a store; init also generates the development secret, which
    // the PostgreSQL scenarios' stores are sealed with too (no secret is generated for PostgreSQL).
    runCli(target, ['init']);
    process.env.GATEHOUSE_SECRET_FILE ??= join(dataDir, 'secret');
    const cc = runCli<{ client_id: string; client_secret: string }>(target, [
      'clients',
      'create',
      '--name',
      'bench-cc',
      '--grant-types',
      'client_credentials',
    ]);
    const pw = runCli<{ client_id: string; client_secret: string }>(target, [
      'clients',
      'create',
      '--name',
      'bench-password',
      '--grant-types',
      'password',
    ]);
    const users = await createBenchUsers(target, options.connections);

    const tlsDir = join(dataDir, 'tls');
    const readCa = () => readFileSync(join(tlsDir, 'cert.pem'), 'utf8');
    const startGatehouse = async (start: StartOptions): Promise<ServerProcess> => {
      const port = await freePort();
      const server = await ServerProcess.start({
        label: start.label,
        port,
        cpus: start.cpus,
        ca: readCa,
        // --profile: every Gatehouse process writes a V8 CPU profile into its own folder on exit.
        nodeFlags: [
          ...(start.nodeFlags ?? []),
          ...(options.profile
            ? ['--cpu-prof', '--cpu-prof-dir', join(profileDir, `${start.label}-${port}`)]
            : []),
        ],
        env: start.env ?? RATE_LIMITS_COUNTED,
        args: [
          GATEHOUSE_MAIN,
          'serve',
          '--port',
          String(port),
          '--host',
          '127.0.0.1',
          '--data-dir',
          dataDir,
          ...(start.databaseUrl ? ['--database-url', start.databaseUrl] : []),
          ...(start.workers !== undefined ? ['--workers', String(start.workers)] : []),
        ],
      });
      servers.push(server);
      return server;
    };

    log('starting Gatehouse (SQLite) and the bare Fastify peer');
    const gatehouse = await startGatehouse({
      label: 'gatehouse',
      cpus: serverCpus,
    });
    const ca = readCa();
    const peerPort = await freePort();
    const peer = await ServerProcess.start({
      label: 'peer',
      port: peerPort,
      cpus: serverCpus,
      ca: () => ca,
      args: [
        PEER_SERVER,
        '--port',
        String(peerPort),
        '--cert',
        join(tlsDir, 'cert.pem'),
        '--key',
        join(tlsDir, 'key.pem'),
      ],
    });
    servers.push(peer);

    const context: BenchContext = {
      options,
      ca,
      dataDir,
      gatehouse,
      clients: {
        clientCredentials: { id: cc.client_id, secret: cc.client_secret },
        password: { id: pw.client_id, secret: pw.client_secret },
      },
      users,
      pgBaseUrl: scenarios.some((s) => s.postgres === true) ? await reachablePostgres() : undefined,
      log,
      measure: (server, specs) => measureTogether(server, specs, ca),
      measureCustom,
      startGatehouse,
      serverCpus,
    };

    const report: RunReport = {
      date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
      code: codeVersion(repoRoot()),
      machine,
      pinned,
      options,
      loadBefore,
      loadAfter: '',
      rows: [],
      memory: [],
      targets: [],
      checks: [],
      notes,
    };
    // Bare Fastify before, between and after the scenarios: each scenario is judged against the mean of
    // the bare runs on either side of it, so a noisy neighbour that comes and goes skews little.
    const runScenario = async (scenario: Scenario) => {
      log(`scenario ${scenario.id}: ${scenario.title}`);
      const outcome = await scenario.run(context);
      for (const row of outcome.rows)
        log(`  ${row.label}: ${Math.round(row.result.rps)}/s, p99 ${row.result.p99} ms`);
      return outcome;
    };
    const bareRun = async (when: string) => {
      const outcome = await runScenario(bareScenario(() => peer, when));
      report.rows.push(...outcome.rows);
      report.checks.push(...(outcome.checks ?? []));
      return bracketOf(outcome.rows.map((row) => row.result));
    };
    // Issue 17: each server's resident memory idle (started, nothing sent yet but readiness probes).
    report.memory.push(await gatehouseMemory(gatehouse, ca, GATEHOUSE_SQLITE, 'idle, just started'), {
      server: BARE_PEER,
      when: 'idle, just started',
      rssBytes: peer.rssBytes(),
    });
    let before = await bareRun('start');
    for (const [i, scenario] of scenarios.entries()) {
      const outcome = await runScenario(scenario);
      const after = await bareRun(i === scenarios.length - 1 ? 'end' : `after ${scenario.id}`);
      const bracket = bracketOf([before, after]);
      report.rows.push(...outcome.rows.map((row) => (row.unbracketed ? row : { ...row, bracket })));
      for (const row of outcome.rows) if (!row.unbracketed) bracketOfResult.set(row.result, bracket);
      report.targets.push(...(outcome.targets ?? []).map((target) => ({ target, bracket })));
      report.checks.push(...(outcome.checks ?? []));
      report.notes.push(...(outcome.notes ?? []));
      report.memory.push(...(outcome.memory ?? []));
      before = after;
    }
    report.memory.push(
      await gatehouseMemory(
        gatehouse,
        ca,
        GATEHOUSE_SQLITE,
        'end of the run (after every scenario it served)',
      ),
      { server: BARE_PEER, when: 'end of the run (after every bare run)', rssBytes: peer.rssBytes() },
    );
    const overall = bracketOf(report.rows.filter((row) => row.baseline).map((row) => row.result));
    for (const row of report.rows) if (row.baseline) row.bracket = overall;
    report.loadAfter = loadAverage();

    for (const server of servers.splice(0)) await server.stop();
    if (options.profile) {
      report.notes.push('Run with --profile: Gatehouse ran under --cpu-prof, which slows it.');
      for (const server of readdirSync(profileDir)) {
        for (const file of readdirSync(join(profileDir, server)).filter((f) => f.endsWith('.cpuprofile'))) {
          process.stdout.write(`\nCPU profile of ${server} (${file}):\n`);
          process.stdout.write(renderProfile(summariseProfile(join(profileDir, server, file))) + '\n');
        }
      }
    }

    process.stdout.write('\n' + renderConsole(report) + '\n');
    const docs = join(repoRoot(), 'docs', 'benchmarks.md');
    if (!args['no-write'] && !options.profile) {
      await writeBlock(docs, 'run', renderMarkdown(report));
      log(`results written to ${docs}`);
    }
    const failed = report.checks.filter((check) => !check.pass);
    if (failed.length > 0) {
      process.stderr.write(`\nBENCH FAILED: ${failed.length} correctness check(s) failed:\n`);
      for (const check of failed) process.stderr.write(`  ${check.name}: ${check.detail}\n`);
      return 1;
    }
    const missed = judgeTargets(report).filter((t) => !t.pass && t.reported !== true);
    if (missed.length > 0) log(`${missed.length} target(s) missed (see table)`);
    return 0;
  } finally {
    for (const server of servers) await server.stop().catch(() => undefined);
    if (!options.profile) rmSync(dataDir, { recursive: true, force: true });
    else log(`profile kept in ${profileDir}`);
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`bench: ${err.message}\n`);
      process.exit(2);
    }
    process.stderr.write(`bench: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
