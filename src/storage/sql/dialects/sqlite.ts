import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { openSqliteConnection, type SqliteSynchronous } from './sqlite-connection.js';
import { startCheckpointer } from './sqlite-checkpointer.js';
import { SqliteDialect, type SqliteDatabase, type SqliteStatement } from 'kysely';

export interface SqliteOptions {
  /** File path, or ':memory:'. */
  filename: string;
  /**
   * NORMAL (default): in WAL mode a process crash loses no committed transaction and the file stays
   * consistent; only a power loss or OS crash can drop the last commits. FULL adds an fsync per commit
   * (on the event loop: better-sqlite3 is synchronous) to survive those too.
   */
  synchronous?: SqliteSynchronous;
  /** Checkpoints in a background thread (default); off for a connection that checkpoints itself. */
  checkpointer?: boolean;
  /** Told after each background checkpoint whether it copied the whole WAL (tests wait on it). */
  onCheckpoint?: (complete: boolean) => void;
}

/**
 * Kysely's SQLite driver prepares every statement on every call. The queries Gatehouse runs are a
 * small fixed set, so caching prepared statements by SQL text removes that cost from the hot path.
 * The prepared queries (prepared-query.ts) take their statements from the same cache.
 */
function statementCache(db: BetterSqlite3.Database): (sql: string) => BetterSqlite3.Statement {
  const cache = new Map<string, BetterSqlite3.Statement>();
  return (sql) => {
    let statement = cache.get(sql);
    if (statement === undefined) {
      statement = db.prepare(sql);
      cache.set(sql, statement);
    }
    return statement;
  };
}

export function createSqliteDialect(options: SqliteOptions): {
  dialect: SqliteDialect;
  raw: BetterSqlite3.Database;
  /** The connection's statement for `sql`, prepared once (Kysely's driver uses the same). */
  prepare: (sql: string) => BetterSqlite3.Statement;
  /** Stops the background checkpointer (before the connection closes). */
  stopCheckpointer: () => Promise<void>;
} {
  // The directory too: owner only, as for the secret beside it.
  if (options.filename !== ':memory:') mkdirSync(dirname(options.filename), { recursive: true, mode: 0o700 });
  const raw = openSqliteConnection(options.filename, options.synchronous ?? 'NORMAL');
  const checkpointer =
    options.filename === ':memory:' || options.checkpointer === false
      ? undefined
      : startCheckpointer(raw, options.filename, undefined, options.onCheckpoint);
  const prepare = statementCache(raw);
  const database: SqliteDatabase = {
    close: () => raw.close(),
    prepare: (sql) => prepare(sql) as unknown as SqliteStatement,
  };
  return {
    dialect: new SqliteDialect({ database }),
    raw,
    prepare,
    stopCheckpointer: async () => checkpointer?.stop(),
  };
}
