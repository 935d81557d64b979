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
  statement: BetterSqlite3.Statement;
  /** The parameters it was compiled for: those given, less any undefined. */
  keys: readonly string[];
  /** For each `?` of the SQL, the parameter whose value goes there, or undefined for a constant. */
  slots: readonly (string | undefined)[];
  /** The values bound to the `?`s: the constants in place, the parameters filled in per call. */
  bound: unknown[];
  operation: string;
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
 * the SQL Kysely compiled from it once, prepared once; everywhere else (PostgreSQL, or SQLite inside
 * a Kysely transaction) as the Kysely query itself. The storage contract tests hold both paths to the
 * same behaviour.
 *
 * `build` must pass each parameter to Kysely unchanged and must not branch on the values: it is
 * compiled once with placeholders in their place, and each call's values are bound where the
 * placeholders landed.
 */
export function preparedQuery<P extends object, O>(
  statements: SqliteStatements | undefined,
  build: (params: P) => KyselyQuery<O>,
): PreparedQuery<P, O> {
  // By the parameters given (an undefined value leaves its column out of an insert): one entry, and
  // the last one used, which every call site's fixed set of parameters finds at once.
  const prepared = new Map<string, Prepared>();
  let last: Prepared | undefined;

  function prepare(on: SqliteStatements, values: Record<string, unknown>): Prepared {
    if (last !== undefined && hasExactly(values, last.keys)) return last;
    const keys = Object.keys(values).filter((key) => values[key] !== undefined);
    const signature = keys.join(',');
    let entry = prepared.get(signature);
    if (entry === undefined) {
      const placeholders = Object.fromEntries(keys.map((key) => [key, PLACEHOLDER + key])) as P;
      const compiled = build(placeholders).compile();
      const slots = compiled.parameters.map((value) => {
        if (typeof value !== 'string' || !value.startsWith(PLACEHOLDER)) return undefined;
        const key = value.slice(PLACEHOLDER.length);
        if (!keys.includes(key))
          throw new Error(`prepared query: parameter ${key} did not reach the SQL as given`);
        return key;
      });
      entry = {
        statement: on.prepare(compiled.sql),
        keys,
        slots,
        bound: [...compiled.parameters],
        operation: operationOf(compiled.query),
      };
      prepared.set(signature, entry);
    }
    last = entry;
    return entry;
  }

  /** Runs the prepared statement, timed and reported like Kysely's statements. */
  function execute<T>(
    on: SqliteStatements,
    params: P,
    run: (s: BetterSqlite3.Statement, v: unknown[]) => T,
  ): T {
    const values = params as Record<string, unknown>;
    const { statement, slots, bound, operation } = prepare(on, values);
    // Filled in place: better-sqlite3 runs the statement before this returns, so no call overlaps.
    for (let i = 0; i < slots.length; i++) {
      const key = slots[i];
      if (key !== undefined) bound[i] = values[key];
    }
    const started = performance.now();
    let failed = true;
    try {
      const result = run(statement, bound);
      failed = false;
      return result;
    } finally {
      on.emit({ operation, durationMs: performance.now() - started, failed });
    }
  }

  return {
    async first(params) {
      if (statements?.usable) return execute(statements, params, (s, v) => s.get(...v) as O | undefined);
      return (await build(params).executeTakeFirst()) as O | undefined;
    },
    async all(params) {
      if (statements?.usable) return execute(statements, params, (s, v) => s.all(...v) as O[]);
      return (await build(params).execute()) as O[];
    },
    async run(params) {
      if (statements?.usable) {
        execute(statements, params, (s, v) => s.run(...v));
        return;
      }
      await build(params).execute();
    },
    async changes(params) {
      if (statements?.usable) return execute(statements, params, (s, v) => s.run(...v).changes);
      const result = (await build(params).executeTakeFirst()) as KyselyWriteResult | undefined;
      return Number(
        result?.numInsertedOrUpdatedRows ?? result?.numUpdatedRows ?? result?.numDeletedRows ?? 0n,
      );
    },
  };
}
