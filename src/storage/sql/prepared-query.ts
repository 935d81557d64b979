import type BetterSqlite3 from 'better-sqlite3';
import type { Compilable } from 'kysely';
import { operationOf, type QueryEvent } from './query-observer.js';

/**
 * SQLite's request connection, for the statements requests run: the authorization-code flow's, client
 * authentication's, token liveness, and the single-use `jti`s and MAC nonces. Kysely builds, compiles
 * and schedules every query on every call (about 9 us a read here, more than better-sqlite3 takes to
 * run the read); a `preparedQuery` compiles its Kysely query once and runs that SQL as a statement
 * better-sqlite3 prepared once.
 */
export interface SqliteStatements {
  readonly kind: 'sqlite';
  /**
   * False while a Kysely transaction is open on the connection (it spans awaits): a statement run
   * now would join that transaction, see its uncommitted rows and be undone by its rollback. Queries
   * then take the Kysely path, which waits for the transaction to end.
   */
  readonly usable: boolean;
  /** The connection's statement for `sql`, prepared on first use (shared with Kysely's driver). */
  prepare(sql: string): BetterSqlite3.Statement;
  /** Reports a statement run outside Kysely, so that metrics count it as Kysely's own. */
  emit(event: QueryEvent): void;
}

/**
 * PostgreSQL's pool, for the same statements: each runs as a named prepared statement (node-postgres
 * prepares a name once per connection), so neither Gatehouse (Kysely's build and compile) nor
 * PostgreSQL (parse and plan) repeats per call what is the same every call (issue 17: the code flow
 * on PostgreSQL, docs/benchmarks.md). A pooled query runs outside any transaction, as Kysely's own
 * queries on the pool do: no `usable` to wait for.
 */
export interface PostgresStatements {
  readonly kind: 'postgres';
  /** Runs `text` on a pooled connection, as a prepared statement (dialects/postgres-statements.ts). */
  query(text: string, values: unknown[]): Promise<{ rows: unknown[]; rowCount: number | null }>;
  /** Reports a statement run outside Kysely, so that metrics count it as Kysely's own. */
  emit(event: QueryEvent): void;
}

/** The request path's statements of one store. */
export type RequestStatements = SqliteStatements | PostgresStatements;

/** A Kysely query, as a repository builds it. */
interface KyselyQuery<O> extends Compilable<O> {
  execute(): Promise<unknown>;
  executeTakeFirst(): Promise<unknown>;
}

export interface PreparedQuery<P, O> {
  /** The first row, or undefined. */
  first(params: P): Promise<O | undefined>;
  all(params: P): Promise<O[]>;
  /** Runs a statement that returns no rows (an insert). */
  run(params: P): Promise<void>;
  /** Runs a statement that returns no rows, and says how many rows it inserted, updated or deleted. */
  changes(params: P): Promise<number>;
}

/** What Kysely's insert, update and delete results say they changed. */
interface KyselyWriteResult {
  numInsertedOrUpdatedRows?: bigint;
  numUpdatedRows?: bigint;
  numDeletedRows?: bigint;
}

/** Stands for a parameter while the query is compiled once: no value a caller passes starts so. */
const PLACEHOLDER = '\u0000gatehouse-parameter:';

interface Prepared {
  /** The SQL Kysely compiled, with its dialect's placeholders. */
  sql: string;
  /** The parameters it was compiled for: those given, less any undefined. */
  keys: readonly string[];
  /** For each placeholder of the SQL, the parameter whose value goes there, or undefined for a constant. */
  slots: readonly (string | undefined)[];
  /** The values bound to the placeholders: the constants in place, the parameters filled in per call. */
  bound: unknown[];
  operation: string;
  /** SQLite: the statement, prepared on first use. */
  statement?: BetterSqlite3.Statement;
}

/** Whether `values` has exactly `keys` defined (no array made: this runs on every call). */
function hasExactly(values: Record<string, unknown>, keys: readonly string[]): boolean {
  let defined = 0;
  for (const key in values) if (values[key] !== undefined) defined += 1;
  if (defined !== keys.length) return false;
  for (const key of keys) if (values[key] === undefined) return false;
  return true;
}

/**
 * One query, defined once by `build`: on SQLite's request connection (`statements`, while usable) as
 * the SQL Kysely compiled from it once, prepared once; on PostgreSQL's pool as that SQL, a named
 * prepared statement; everywhere else (no `statements`, or SQLite inside a Kysely transaction) as the
 * Kysely query itself. The storage contract tests hold every path to the same behaviour.
 *
 * `build` must pass each parameter to Kysely unchanged and must not branch on the values: it is
 * compiled once with placeholders in their place, and each call's values are bound where the
 * placeholders landed.
 */
export function preparedQuery<P extends object, O>(
  statements: RequestStatements | undefined,
  build: (params: P) => KyselyQuery<O>,
): PreparedQuery<P, O> {
  // By the parameters given (an undefined value leaves its column out of an insert): one entry, and
  // the last one used, which every call site's fixed set of parameters finds at once.
  const prepared = new Map<string, Prepared>();
  let last: Prepared | undefined;

  function compiled(values: Record<string, unknown>): Prepared {
    if (last !== undefined && hasExactly(values, last.keys)) return last;
    const keys = Object.keys(values).filter((key) => values[key] !== undefined);
    const signature = keys.join(',');
    let entry = prepared.get(signature);
    if (entry === undefined) {
      const placeholders = Object.fromEntries(keys.map((key) => [key, PLACEHOLDER + key])) as P;
      const query = build(placeholders).compile();
      const slots = query.parameters.map((value) => {
        if (typeof value !== 'string' || !value.startsWith(PLACEHOLDER)) return undefined;
        const key = value.slice(PLACEHOLDER.length);
        if (!keys.includes(key))
          throw new Error(`prepared query: parameter ${key} did not reach the SQL as given`);
        return key;
      });
      entry = {
        sql: query.sql,
        keys,
        slots,
        bound: [...query.parameters],
        operation: operationOf(query.query),
      };
      prepared.set(signature, entry);
    }
    last = entry;
    return entry;
  }

  /** Runs the prepared statement on SQLite, timed and reported like Kysely's statements. */
  function onSqlite<T>(
    on: SqliteStatements,
    params: P,
    run: (s: BetterSqlite3.Statement, v: unknown[]) => T,
  ): T {
    const values = params as Record<string, unknown>;
    const entry = compiled(values);
    const { slots, bound, operation } = entry;
    entry.statement ??= on.prepare(entry.sql);
    // Filled in place: better-sqlite3 runs the statement before this returns, so no call overlaps.
    for (let i = 0; i < slots.length; i++) {
      const key = slots[i];
      if (key !== undefined) bound[i] = values[key];
    }
    const started = performance.now();
    let failed = true;
    try {
      const result = run(entry.statement, bound);
      failed = false;
      return result;
    } finally {
      on.emit({ operation, durationMs: performance.now() - started, failed });
    }
  }

  /** Runs the prepared statement on PostgreSQL, timed and reported like Kysely's statements. */
  async function onPostgres(
    on: PostgresStatements,
    params: P,
  ): Promise<{ rows: unknown[]; rowCount: number | null }> {
    const values = params as Record<string, unknown>;
    const entry = compiled(values);
    // A new array per call: the query may wait for a connection while other calls are made.
    const bound = entry.slots.map((key, i) => (key === undefined ? entry.bound[i] : values[key]));
    const started = performance.now();
    let failed = true;
    try {
      const result = await on.query(entry.sql, bound);
      failed = false;
      return result;
    } finally {
      on.emit({ operation: entry.operation, durationMs: performance.now() - started, failed });
    }
  }

  return {
    async first(params) {
      if (statements?.kind === 'postgres')
        return (await onPostgres(statements, params)).rows[0] as O | undefined;
      if (statements?.usable) return onSqlite(statements, params, (s, v) => s.get(...v) as O | undefined);
      return (await build(params).executeTakeFirst()) as O | undefined;
    },
    async all(params) {
      if (statements?.kind === 'postgres') return (await onPostgres(statements, params)).rows as O[];
      if (statements?.usable) return onSqlite(statements, params, (s, v) => s.all(...v) as O[]);
      return (await build(params).execute()) as O[];
    },
    async run(params) {
      if (statements?.kind === 'postgres') {
        await onPostgres(statements, params);
        return;
      }
      if (statements?.usable) {
        onSqlite(statements, params, (s, v) => s.run(...v));
        return;
      }
      await build(params).execute();
    },
    async changes(params) {
      if (statements?.kind === 'postgres') return (await onPostgres(statements, params)).rowCount ?? 0;
      if (statements?.usable) return onSqlite(statements, params, (s, v) => s.run(...v).changes);
      const result = (await build(params).executeTakeFirst()) as KyselyWriteResult | undefined;
      return Number(
        result?.numInsertedOrUpdatedRows ?? result?.numUpdatedRows ?? result?.numDeletedRows ?? 0n,
      );
    },
  };
}
