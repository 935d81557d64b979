import { createHash } from 'node:crypto';
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

/** A prepared statement's name: from its SQL, so that no two texts share one, and its generation. */
function statementName(text: string, generation: number): string {
  return `gatehouse_${createHash('sha256').update(text).digest('hex').slice(0, 32)}_${generation}`;
}

/**
 * PostgreSQL's refusal of a prepared statement whose result columns changed since it was prepared
 * (SQLSTATE 0A000, "cached plan must not change result type"): a column added to a table it selects
 * with `*`.
 */
function isStalePlan(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { code?: unknown }).code === '0A000' &&
    /cached plan must not change result type/.test(String((error as { message?: unknown }).message))
  );
}

/**
 * The request path's statements on a PostgreSQL pool (prepared-query.ts): each SQL text runs as a
 * named prepared statement (node-postgres prepares a name once per connection), with two fallbacks,
 * both taken before the database runs anything, so the statement simply runs again:
 * - a stale plan (a newer Gatehouse's migration added a column under a `*`): the text is prepared
 *   again under a new name, which each connection prepares afresh;
 * - a name not where it was prepared (a pooler that does not track prepared statements): from then on
 *   this store sends every statement unnamed (parsed every time, as Kysely's are), which works
 *   through any pooler.
 */
export function createPostgresStatements(
  pool: pg.Pool,
  emit: (event: QueryEvent) => void,
): PostgresStatements {
  let named = true;
  /** Each SQL text's current name; a new generation after a stale plan. */
  const names = new Map<string, { name: string; generation: number }>();

  const nameOf = (text: string) => {
    let entry = names.get(text);
    if (entry === undefined) {
      entry = { name: statementName(text, 0), generation: 0 };
      names.set(text, entry);
    }
    return entry;
  };

  const run = async (text: string, values: unknown[]) => {
    if (!named) return pool.query({ text, values });
    try {
      return await pool.query({ name: nameOf(text).name, text, values });
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      if (typeof code !== 'string' || !NOT_AS_PREPARED.has(code)) throw error;
      named = false;
      return pool.query({ text, values });
    }
  };

  return {
    kind: 'postgres',
    emit,
    async query(text, values) {
      try {
        return await run(text, values);
      } catch (error) {
        if (!isStalePlan(error)) throw error;
        // Migrations: older processes keep working beside a newer one (docs/deployment.md).
        const entry = nameOf(text);
        entry.generation += 1;
        entry.name = statementName(text, entry.generation);
        return run(text, values);
      }
    },
  };
}
