import type pg from 'pg';
import type { PostgresStatements } from '../prepared-query.js';
import type { QueryEvent } from '../query-observer.js';

/**
 * SQLSTATEs of a named statement that the connection does not hold as node-postgres believes: 26000
 * (invalid_sql_statement_name, "prepared statement … does not exist") and 42P05
 * (duplicate_prepared_statement, "… already exists"). A pooler in transaction mode that does not track
 * prepared statements (PgBouncer before 1.21, or 1.21+ with max_prepared_statements = 0) hands each
 * transaction whichever server connection is free, which causes both.
 */
const NOT_AS_PREPARED = new Set(['26000', '42P05']);

/**
 * The request path's statements on a PostgreSQL pool (prepared-query.ts): named prepared statements,
 * until the database says a name is not where it was prepared; from then on this store sends each
 * statement unnamed (parsed every time, as Kysely's are), which works through any pooler. Either
 * refusal comes before the statement runs, so it runs again, unnamed, once.
 */
export function createPostgresStatements(
  pool: pg.Pool,
  emit: (event: QueryEvent) => void,
): PostgresStatements {
  let named = true;
  return {
    kind: 'postgres',
    emit,
    async query(name, text, values) {
      if (!named) return pool.query({ text, values });
      try {
        return await pool.query({ name, text, values });
      } catch (error) {
        const code = (error as { code?: unknown } | null)?.code;
        if (typeof code !== 'string' || !NOT_AS_PREPARED.has(code)) throw error;
        named = false;
        return pool.query({ text, values });
      }
    },
  };
}
