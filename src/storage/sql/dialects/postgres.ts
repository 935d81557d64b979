import pg from 'pg';
import { PostgresDialect } from 'kysely';

// BIGINT (int8) columns hold epoch seconds, far inside Number's exact range.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => Number(value));

export interface PostgresOptions {
  connectionString: string;
  /** Schema to use instead of `public` (tests run each suite in a fresh one). */
  schema?: string;
  poolSize?: number;
  /** A pooled connection failed while idle (server restart, pg_terminate_backend, network). */
  onIdleClientError?: (error: Error) => void;
}

export function createPostgresDialect(options: PostgresOptions): {
  dialect: PostgresDialect;
  pool: pg.Pool;
} {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.poolSize ?? 10,
    // A database that does not answer (down, or a network that drops packets) fails the request after
    // this long instead of holding it until the client gives up; connection refusals fail at once.
    connectionTimeoutMillis: 5000,
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
  });
  // Without a listener, node-postgres re-emits an idle connection's failure as an unhandled 'error'
  // event, which ends the process. The pool has already dropped that connection and opens another
  // on demand; statements in flight on other connections see their own errors.
  pool.on('error', (error) => options.onIdleClientError?.(error));
  // A connection that fails while checked out between statements (a restart's "terminating connection
  // due to administrator command", a reset) emits 'error' with no pool listener attached: unhandled, it
  // ended the process. Its next statement fails instead (answered 503), and the pool discards it when
  // it is released, so nothing is left to do here; the idle case is reported above.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return { dialect: new PostgresDialect({ pool }), pool };
}
