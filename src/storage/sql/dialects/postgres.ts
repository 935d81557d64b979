import pg from 'pg';
import { PostgresDialect } from 'kysely';

// BIGINT (int8) columns hold epoch seconds, far inside Number's exact range.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => Number(value));

export interface PostgresOptions {
  connectionString: string;
  /** Schema to use instead of `public` (tests run each suite in a fresh one). */
  schema?: string;
  poolSize?: number;
}

export function createPostgresDialect(options: PostgresOptions): {
  dialect: PostgresDialect;
  pool: pg.Pool;
} {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.poolSize ?? 10,
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
  });
  return { dialect: new PostgresDialect({ pool }), pool };
}
