import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { httpsRequest } from '../lib/https.js';
import { runLoad, type LoadResult } from '../lib/load.js';
import { percentile } from '../lib/open-loop.js';
import { BACKEND_NAME, onFreshPostgres, withPgClient, type StoreBackend } from '../lib/postgres.js';
import { runCli } from '../lib/processes.js';
import type { ServerProcess } from '../lib/processes.js';
import { RATE_LIMITS_OFF } from '../lib/rate-limits.js';
import { clientCredentialsRequest } from '../lib/token-requests.js';
import type { BenchContext, Check, Measured, Scenario, ScenarioOutcome } from '../lib/types.js';
import { verifyTokenCheck } from '../lib/verify-token.js';

/** Target: token-endpoint p99 within 20% while a million expired rows are purged. */
const MAX_P99_RATIO = 1.2;
/** Connections of the fixed-rate probe: enough that one slow response does not stall the rate. */
const PROBE_CONNECTIONS = 20;
/** The probe runs at this share of what the server sustains, so latency is not queueing at saturation. */
const RATE_SHARE = 0.5;

/**
 * The dead rows, a mix over the tables the purge handles (src/storage/sql/repositories/purge.ts), all
 * expired an hour ago: past every cutoff, including revoked access tokens' clock-skew margin.
 */
const DEAD_ROWS: ReadonlyArray<[table: string, rows: number]> = [
  ['throttle', 400_000],
  ['revoked_access_tokens', 300_000],
  ['authorization_codes', 200_000],
  ['mac_nonces', 100_000],
];
const TOTAL_DEAD = DEAD_ROWS.reduce((sum, [, rows]) => sum + rows, 0);

/** The dead rows, put into and counted in a migrated store while Gatehouse is stopped. */
interface DeadRows {
  /**
   * Makes the store hold exactly DEAD_ROWS (the tables emptied, then filled); codes belong to the
   * bench's client and a user and live grant made here.
   */
  insert(clientId: string): Promise<void>;
  /** Counts the dead rows left (the store goes with the bench's data directory or database). */
  countLeft(): Promise<number>;
}

/**
 * SQLite: one transaction of prepared statements. The user never signs in, so its password hash is a
 * placeholder; the grant is live, so the codes go by their own expiry and not by a grant's cascade.
 */
function sqliteDeadRows(path: string): DeadRows {
  return {
    async insert(clientId) {
      const db = new Database(path);
      try {
        db.pragma('journal_mode = WAL');
        const expired = Math.floor(Date.now() / 1000) - 3600;
        const count = (table: string) => DEAD_ROWS.find(([name]) => name === table)![1];
        db.transaction(() => {
          for (const [table] of DEAD_ROWS) db.prepare(`DELETE FROM ${table}`).run();
          db.prepare(
            'INSERT OR IGNORE INTO users (id, username, password_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
          ).run('bench-purge-user', 'bench-purge-user', 'placeholder-never-verified', expired, expired);
          db.prepare(
            'INSERT OR IGNORE INTO grants (id, client_id, user_id, scope, created_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, NULL, NULL)',
          ).run('bench-purge-grant', clientId, 'bench-purge-user', 'read', expired);
          const throttle = db.prepare('INSERT INTO throttle (key, count, reset_at) VALUES (?, 1, ?)');
          for (let i = 0; i < count('throttle'); i++) throttle.run(`bench-purge:${i}`, expired);
          const revoked = db.prepare('INSERT INTO revoked_access_tokens (jti, expires_at) VALUES (?, ?)');
          for (let i = 0; i < count('revoked_access_tokens'); i++)
            revoked.run(`bench-purge-jti-${i}`, expired);
          const code = db.prepare(
            'INSERT INTO authorization_codes (hash, client_id, user_id, grant_id, redirect_uri, scope, created_at, expires_at) ' +
              "VALUES (?, ?, 'bench-purge-user', 'bench-purge-grant', 'https://client.example/cb', 'read', ?, ?)",
          );
          for (let i = 0; i < count('authorization_codes'); i++)
            code.run(`bench-purge-code-${i}`, clientId, expired - 60, expired);
          const nonce = db.prepare('INSERT INTO mac_nonces (jti, nonce, expires_at) VALUES (?, ?, ?)');
          for (let i = 0; i < count('mac_nonces'); i++) nonce.run(`bench-purge-jti-${i}`, `n${i}`, expired);
        })();
      } finally {
        db.close();
      }
    },
    async countLeft() {
      const db = new Database(path);
      try {
        let left = 0;
        for (const [table] of DEAD_ROWS) {
          left += (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
        }
        return left;
      } finally {
        db.close();
      }
    },
  };
}

/**
 * The same rows in PostgreSQL: one INSERT … SELECT generate_series per table, in one transaction, then
 * VACUUM ANALYZE, so the planner knows the tables' size as autovacuum would have told it in a store
 * that filled up over time (a freshly filled table with no statistics can get a plan no purge meets).
 */
function postgresDeadRows(databaseUrl: string): DeadRows {
  return {
    insert: (clientId) =>
      withPgClient(databaseUrl, async (db) => {
        const expired = Math.floor(Date.now() / 1000) - 3600;
        const count = (table: string) => DEAD_ROWS.find(([name]) => name === table)![1];
        await db.query('BEGIN');
        await db.query(`TRUNCATE ${DEAD_ROWS.map(([table]) => table).join(', ')}`);
        await db.query(
          'INSERT INTO users (id, username, password_hash, created_at, updated_at) VALUES ($1, $1, $2, $3, $3) ON CONFLICT DO NOTHING',
          ['bench-purge-user', 'placeholder-never-verified', expired],
        );
        await db.query(
          'INSERT INTO grants (id, client_id, user_id, scope, created_at, expires_at, revoked_at) ' +
            "VALUES ('bench-purge-grant', $1, 'bench-purge-user', 'read', $2, NULL, NULL) ON CONFLICT DO NOTHING",
          [clientId, expired],
        );
        await db.query(
          "INSERT INTO throttle (key, count, reset_at) SELECT 'bench-purge:' || i, 1, $2 FROM generate_series(0, $1 - 1) AS i",
          [count('throttle'), expired],
        );
        await db.query(
          "INSERT INTO revoked_access_tokens (jti, expires_at) SELECT 'bench-purge-jti-' || i, $2 FROM generate_series(0, $1 - 1) AS i",
          [count('revoked_access_tokens'), expired],
        );
        await db.query(
          'INSERT INTO authorization_codes (hash, client_id, user_id, grant_id, redirect_uri, scope, created_at, expires_at) ' +
            "SELECT 'bench-purge-code-' || i, $2, 'bench-purge-user', 'bench-purge-grant', 'https://client.example/cb', 'read', $3::bigint - 60, $3 " +
            'FROM generate_series(0, $1 - 1) AS i',
          [count('authorization_codes'), clientId, expired],
        );
        await db.query(
          "INSERT INTO mac_nonces (jti, nonce, expires_at) SELECT 'bench-purge-jti-' || i, 'n' || i, $2 FROM generate_series(0, $1 - 1) AS i",
          [count('mac_nonces'), expired],
        );
        await db.query('COMMIT');
        await db.query(`VACUUM ANALYZE ${DEAD_ROWS.map(([table]) => table).join(', ')}`);
        // Writes the refill's dirty pages out now: left to the checkpointer, they were written during
        // the runs that followed (hundreds of MB on this disk), stalling off- and on-runs alike.
        await db.query('CHECKPOINT');
      }),
    countLeft: () =>
      withPgClient(databaseUrl, async (db) => {
        let left = 0;
        for (const [table] of DEAD_ROWS) {
          const { rows } = await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`);
          left += Number(rows[0]?.n ?? 0);
        }
        return left;
      }),
  };
}

/** What the warm-up phase reports: its load is the measured run's lead-in. */
const NO_LOAD: LoadResult = {
  rps: 0,
  p50: 0,
  p90: 0,
  p99: 0,
  max: 0,
  requests: 0,
  non2xx: 0,
  errors: 0,
  timeouts: 0,
  statusCodes: {},
  seconds: 0,
};

const PURGED = /^gatehouse_purged_rows_total\{[^}]*\}\s+([0-9.e+]+)$/;

/** `gatehouse_purged_rows_total` over every table, from GET /metrics (loopback, no token set). */
async function purgedRows(server: ServerProcess, ca: string): Promise<number> {
  const response = await httpsRequest(`${server.url}/metrics`, { ca });
  if (response.status !== 200) throw new Error(`/metrics answered ${response.status}`);
  let total = 0;
  for (const line of response.body.split('\n')) {
    const match = PURGED.exec(line);
    if (match !== null) total += Number(match[1]);
  }
  return total;
}

/** Each run's warm-up lasts at least this long (see `probe`). */
const STEADY_AFTER_SECONDS = 10;

/** The middle value (of an odd count; the mean of the two middle ones otherwise). */
function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const round1 = (value: number) => Math.round(value * 10) / 10;

/** The value below which `share` of `values` lie (nearest rank, as the probe's own percentiles). */
const percentileOf = (values: number[], share: number) => percentile(Float64Array.from(values).sort(), share);

/**
 * Several runs as one row: the median of their latency percentiles (one run caught by a hiccup of the
 * shared machine does not decide), the mean of rates and CPU, the sum of counts.
 */
function combine(runs: Measured[]): Measured {
  const mean = (pick: (run: Measured) => number) =>
    runs.reduce((sum, run) => sum + pick(run), 0) / runs.length;
  const sum = (pick: (run: Measured) => number) => runs.reduce((total, run) => total + pick(run), 0);
  const statusCodes: Record<string, number> = {};
  for (const run of runs) {
    for (const [code, count] of Object.entries(run.statusCodes))
      statusCodes[code] = (statusCodes[code] ?? 0) + count;
  }
  return {
    rps: mean((run) => run.rps),
    p50: round1(median(runs.map((run) => run.p50))),
    p90: round1(median(runs.map((run) => run.p90))),
    p99: round1(median(runs.map((run) => run.p99))),
    max: Math.max(...runs.map((run) => run.max)),
    requests: sum((run) => run.requests),
    non2xx: sum((run) => run.non2xx),
    errors: sum((run) => run.errors),
    timeouts: sum((run) => run.timeouts),
    statusCodes,
    seconds: sum((run) => run.seconds),
    secondP99s: runs.flatMap((run) => run.secondP99s ?? []),
    serverCpu: mean((run) => run.serverCpu),
    loopCpu: mean((run) => run.loopCpu),
    driverCpu: mean((run) => run.driverCpu),
    warmupNon2xx: sum((run) => run.warmupNon2xx),
    concurrent: false,
  };
}

/** One purge-on run: the purged-rows counter when its measured seconds began and ended. */
interface PurgeWindow {
  before: number;
  after: number;
  seconds: number;
  /** Dead rows left in the store once the run's server stopped. */
  left: number;
}

/**
 * The target on one store holding a million expired rows: a fixed-rate client_credentials probe
 * against a server with the purge off, then against one purging them, alternately, ROUNDS times each.
 * The only difference between the two is the purge at work: same store, same rows, same machine
 * minutes. `databaseUrl` is a fresh, empty store.
 */
async function measurePurge(
  context: BenchContext,
  id: string,
  backend: StoreBackend,
  databaseUrl: string,
  deadRows: DeadRows,
): Promise<ScenarioOutcome> {
  const target = { dataDir: context.dataDir, databaseUrl };
  runCli(target, ['migrate']);
  const created = runCli<{ client_id: string; client_secret: string }>(target, [
    'clients',
    'create',
    '--name',
    'bench-purge',
    '--grant-types',
    'client_credentials',
  ]);
  const client = { id: created.client_id, secret: created.client_secret };
  const insertStarted = performance.now();
  await deadRows.insert(client.id);
  context.log(
    `  ${id}: inserted ${TOTAL_DEAD.toLocaleString('en')} expired rows in ` +
      `${((performance.now() - insertStarted) / 1000).toFixed(1)} s`,
  );
  const start = (label: string, purge: boolean) =>
    context.startGatehouse({
      label,
      cpus: context.serverCpus,
      databaseUrl,
      // Off: the purge timer never starts. On: it wakes every second (plus jitter).
      env: { ...RATE_LIMITS_OFF, GATEHOUSE_PURGE_INTERVAL: purge ? '1' : '0' },
    });
  const request = clientCredentialsRequest(client);
  const checks: Check[] = [];
  let sample: string | undefined;
  let rate = 0;
  let server: ServerProcess | undefined;
  // The fixed-rate probe against whichever server runs now: one run of the warm-up and the measured
  // seconds without a break, the warm-up's latencies not recorded (open-loop.ts, leadInSeconds).
  // The warm-up is at least STEADY_AFTER_SECONDS: every run is a fresh server, and in its first seconds
  // JIT tiering, heap growth and (purge on) the purge process's start and cold pages dominate the tail.
  // A million rows take minutes to purge; the measured seconds are its steady state, as for purge off.
  const leadInSeconds = Math.max(context.options.warmup, STEADY_AFTER_SECONDS);
  const probe = async (seconds: number, phase: 'warmup' | 'measured'): Promise<LoadResult> => {
    // The warm-up is the measured run's lead-in.
    if (phase === 'warmup') return NO_LOAD;
    return runLoad({
      ...request,
      url: server!.url,
      ca: context.ca,
      connections: PROBE_CONNECTIONS,
      overallRate: rate,
      leadInSeconds,
      duration: seconds,
      onFirstSuccess: (body) => (sample ??= body),
    });
  };

  // What the server sustains with the purge off, to set the probe's rate.
  server = await start(`${id}-rate`, false);
  try {
    const flat = await runLoad({
      ...request,
      url: server.url,
      ca: context.ca,
      connections: context.options.connections,
      duration: Math.max(context.options.warmup, 3),
      onFirstSuccess: (body) => (sample ??= body),
    });
    rate = Math.max(50, Math.round((flat.rps * RATE_SHARE) / 50) * 50);
    context.log(`  ${id}: sustained ${Math.round(flat.rps)}/s unthrottled; probing at ${rate}/s`);
    checks.push(
      await verifyTokenCheck({
        name: `${id}: a token from the server verifies`,
        serverUrl: server.url,
        issuer: server.url.replace('127.0.0.1', 'localhost'),
        ca: context.ca,
        responseBody: sample,
        clientId: client.id,
      }),
    );
  } finally {
    await server.stop();
  }

  const off: Measured[] = [];
  const on: Measured[] = [];
  const windows: PurgeWindow[] = [];
  let purgedInAll = 0;
  // Purge-off and purge-on runs alternate (--rounds of each): a drift of the shared machine falls on both.
  const ROUNDS = context.options.rounds;
  for (let round = 1; round <= ROUNDS; round++) {
    // Every round starts from the same million (the first round from the insert above): at 10,000
    // rows/s, runs carried over from each other would end the backlog before the last of them.
    if (round > 1) await deadRows.insert(client.id);
    server = await start(`${id}-off-${round}`, false);
    try {
      off.push(await context.measureCustom(server, probe));
    } finally {
      await server.stop();
    }

    server = await start(`${id}-on-${round}`, true);
    const window: PurgeWindow = { before: 0, after: 0, seconds: 0, left: 0 };
    try {
      const running = server;
      // Wait for the first batch, so the warm-up and the measured seconds are all inside the purge.
      const deadline = Date.now() + 15_000;
      while ((await purgedRows(running, context.ca)) === 0) {
        if (Date.now() > deadline) {
          const left = await deadRows.countLeft();
          throw new Error(
            `${id}: no rows purged 15 s after start (${left.toLocaleString('en')} dead rows in the store)`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      on.push(
        await context.measureCustom(running, async (seconds, phase) => {
          if (phase === 'warmup') return probe(seconds, phase);
          // The counter when the measured seconds begin, read while the lead-in runs.
          const before = new Promise((resolve) => setTimeout(resolve, leadInSeconds * 1000)).then(() =>
            purgedRows(running, context.ca),
          );
          const result = await probe(seconds, phase);
          window.before = await before;
          window.after = await purgedRows(running, context.ca);
          window.seconds = result.seconds;
          return result;
        }),
      );
      windows.push(window);
      purgedInAll += await purgedRows(running, context.ca);
    } finally {
      await server.stop();
    }
    window.left = await deadRows.countLeft();
  }

  const offAll = combine(off);
  const onAll = combine(on);
  const ratio = onAll.p99 / Math.max(offAll.p99, 0.1);
  const deleted = windows.reduce((sum, w) => sum + (w.after - w.before), 0);
  const perSecond =
    deleted /
    Math.max(
      windows.reduce((sum, w) => sum + w.seconds, 0),
      1e-9,
    );
  const p99s = (runs: Measured[]) => runs.map((run) => run.p99).join(' / ');
  const offSeconds = offAll.secondP99s ?? [];
  const onSeconds = onAll.secondP99s ?? [];
  const typicalOff = round1(median(offSeconds));
  const typicalOn = round1(median(onSeconds));
  const over = (values: number[], limit: number) => values.filter((v) => v > limit).length;
  // A second view, reported beside the target: the p99 of each measured second, pooled per mode. Its
  // median is a typical second's p99 (one stall of the shared machine moves a run's p99 a lot, and
  // only a few seconds' p99); the seconds over twice the off median count the stalls in each mode.
  const perSecondView =
    `per-second p99 median ${typicalOn} vs ${typicalOff} ms (${(typicalOn / typicalOff).toFixed(2)} x), ` +
    `p90 ${percentileOf(onSeconds, 0.9)} vs ${percentileOf(offSeconds, 0.9)} ms; seconds over ${round1(2 * typicalOff)} ms: ` +
    `${over(onSeconds, 2 * typicalOff)}/${onSeconds.length} vs ${over(offSeconds, 2 * typicalOff)}/${offSeconds.length}`;
  context.log(`  ${id}: ${perSecondView}`);
  for (const [name, runs] of [
    ['purge off', off],
    ['purge on', on],
  ] as const) {
    const result = combine(runs);
    const failures = result.non2xx + result.warmupNon2xx + result.errors;
    checks.push({
      name: `${id} (${name}): every response 200`,
      pass: failures === 0,
      detail: `${result.requests} responses in ${runs.length} runs; ${result.non2xx} non-2xx, ${result.warmupNon2xx} non-2xx in warm-up, ${result.errors} connection errors`,
    });
  }
  checks.push({
    name: `${id}: rows deleted throughout every purge-on run, with dead rows left at its end`,
    pass: windows.every((w) => w.after > w.before && w.left > 0),
    detail:
      `${windows.map((w) => (w.after - w.before).toLocaleString('en')).join(' / ')} rows deleted in the measured seconds ` +
      `(${Math.round(perSecond).toLocaleString('en')}/s); ${purgedInAll.toLocaleString('en')} of ` +
      `${(ROUNDS * TOTAL_DEAD).toLocaleString('en')} purged in all; ${windows.map((w) => w.left.toLocaleString('en')).join(' / ')} left after each run`,
  });
  const label = `client_credentials probe on ${BACKEND_NAME[backend]}, ${rate}/s over ${PROBE_CONNECTIONS} connections, 1M expired rows`;
  return {
    rows: [
      { scenario: id, label: `${label}, purge off (${ROUNDS} runs: median latency)`, result: offAll },
      {
        scenario: id,
        label: `${label}, purging (${ROUNDS} runs alternating with purge off: median latency)`,
        result: onAll,
        compare: `p99 ${ratio.toFixed(2)} x purge off; ${Math.round(perSecond).toLocaleString('en')} rows/s purged`,
      },
    ],
    checks,
    targets: [
      {
        name: `client_credentials p99 while the purge deletes 1M expired rows (${BACKEND_NAME[backend]})`,
        target: `<= ${MAX_P99_RATIO} x p99 with the purge off (medians of ${ROUNDS} alternating runs each)`,
        judge: () => ({
          measured:
            `${ratio.toFixed(2)} x (p99 ${p99s(on)} ms purging vs ${p99s(off)} ms off; ` +
            `p50 ${onAll.p50} vs ${offAll.p50} ms; ${perSecondView}; ` +
            `${Math.round(perSecond).toLocaleString('en')} rows/s deleted)`,
          pass: ratio <= MAX_P99_RATIO,
        }),
      },
    ],
    notes: [
      `${id}: ${TOTAL_DEAD.toLocaleString('en')} rows expired an hour before (${DEAD_ROWS.map(([t, n]) => `${t} ${n.toLocaleString('en')}`).join(', ')}) ` +
        (backend === 'sqlite'
          ? 'inserted with better-sqlite3 into a fresh, migrated SQLite store before any server started; '
          : 'inserted with one INSERT … SELECT generate_series per table into a fresh, migrated PostgreSQL ' +
            'database before any server started, then VACUUM ANALYZE; PostgreSQL itself is not pinned; ') +
        `servers with GATEHOUSE_PURGE_INTERVAL=0 (off) and =1 (on) alternate on that store, ${ROUNDS} of each, ` +
        'each with its own warm-up; the store is refilled to exactly those rows before each pair; an on-run is measured from its first purged batch. ' +
        'The probe is open-loop (requests due at fixed intervals, latency from when each was due) in its own process.',
    ],
  };
}

export const purgeScenario: Scenario = {
  id: 'purge',
  title: 'client_credentials p99 while the automatic purge deletes a million expired rows (SQLite)',
  run(context) {
    const path = join(context.dataDir, `purge-${randomBytes(4).toString('hex')}.db`);
    return measurePurge(context, 'purge', 'sqlite', `sqlite:${path}`, sqliteDeadRows(path));
  },
};

export const purgePostgresScenario: Scenario = {
  id: 'purge-pg',
  title: 'client_credentials p99 while the automatic purge deletes a million expired rows (PostgreSQL)',
  postgres: true,
  run(context) {
    return onFreshPostgres(context, 'purge-pg', (databaseUrl) =>
      measurePurge(context, 'purge-pg', 'postgres', databaseUrl, postgresDeadRows(databaseUrl)),
    );
  },
};
