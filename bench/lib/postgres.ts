import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { BenchContext, ScenarioOutcome } from './types.js';

/** The stores a scenario can run on. */
export type StoreBackend = 'sqlite' | 'postgres';

export const BACKEND_NAME: Record<StoreBackend, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' };

/**
 * A fresh database beside the base URL's (the CLI has no schema option), dropped afterwards with
 * whatever connections are left on it.
 */
export async function withFreshDatabase<T>(baseUrl: string, run: (url: string) => Promise<T>): Promise<T> {
  const name = `bench_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: baseUrl, connectionTimeoutMillis: 3000 });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(baseUrl);
    url.pathname = `/${name}`;
    try {
      return await run(url.toString());
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    }
  } finally {
    await admin.end();
  }
}

/** The outcome of a PostgreSQL scenario on a machine without a reachable PostgreSQL. */
export function postgresSkipped(id: string): ScenarioOutcome {
  return {
    rows: [],
    notes: [`${id} skipped: PostgreSQL not reachable (set GATEHOUSE_BENCH_DATABASE_URL).`],
  };
}

/**
 * Runs a PostgreSQL scenario's body on a fresh database, or skips it with a notice when PostgreSQL is
 * unreachable (run.ts looked for it because the scenario is marked `postgres`).
 */
export async function onFreshPostgres(
  context: BenchContext,
  id: string,
  run: (databaseUrl: string) => Promise<ScenarioOutcome>,
): Promise<ScenarioOutcome> {
  if (context.pgBaseUrl === undefined) return postgresSkipped(id);
  return withFreshDatabase(context.pgBaseUrl, run);
}

/** Runs statements on one connection to `databaseUrl`, closed afterwards. */
export async function withPgClient<T>(
  databaseUrl: string,
  run: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}
