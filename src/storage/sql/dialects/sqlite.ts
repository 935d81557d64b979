import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { openSqliteConnection, type SqliteSynchronous } from './sqlite-connection.js';
import { startCheckpointer } from './sqlite-checkpointer.js';
import {
  CompiledQuery,
  SqliteDialect,
  type DatabaseConnection,
  type Driver,
  type SqliteDatabase,
  type SqliteStatement,
} from 'kysely';

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

/** A first-come, first-served lock, held across awaits. */
class AsyncLock {
  private tail: Promise<void> = Promise.resolve();
  async acquire(): Promise<() => void> {
    let release!: () => void;
    const previous = this.tail;
    this.tail = new Promise<void>((resolve) => (release = resolve));
    await previous;
    return release;
  }
}

/** By file: the connections of one process to one database file share one lock (see below). */
const fileLocks = new Map<string, AsyncLock>();

/**
 * Kysely's SQLite dialect, with two changes for Storage.atomically (decision 41), whose work reads and
 * writes across awaits:
 * - Transactions begin IMMEDIATE: they take the write lock at BEGIN, waiting for it as busy_timeout
 *   allows. A deferred transaction that read first and then writes cannot wait when another process
 *   wrote meanwhile: SQLite answers SQLITE_BUSY ("database is locked") at once, its snapshot stale.
 * - The connections one process opens to one file (tests' in-process commands; a store and its
 *   reopened handle) take their turns through one lock, as Kysely's own connection lock does for one
 *   connection. better-sqlite3 waits for a lock synchronously: a statement of a second connection
 *   waiting on the first's open transaction would block the event loop that transaction needs to
 *   commit, then fail.
 */
class GatehouseSqliteDialect extends SqliteDialect {
  constructor(
    config: ConstructorParameters<typeof SqliteDialect>[0],
    private readonly filename: string,
  ) {
    super(config);
  }

  override createDriver(): Driver {
    const driver = super.createDriver();
    driver.beginTransaction = async (connection: DatabaseConnection) => {
      await connection.executeQuery(CompiledQuery.raw('begin immediate'));
    };
    if (this.filename === ':memory:') return driver;
    let lock = fileLocks.get(this.filename);
    if (lock === undefined) fileLocks.set(this.filename, (lock = new AsyncLock()));
    const fileLock = lock;
    const releases: (() => void)[] = [];
    const acquire = driver.acquireConnection.bind(driver);
    const release = driver.releaseConnection.bind(driver);
    driver.acquireConnection = async () => {
      releases.push(await fileLock.acquire());
      return acquire();
    };
    driver.releaseConnection = async (connection: DatabaseConnection) => {
      await release(connection);
      releases.shift()?.();
    };
    return driver;
  }
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
    dialect: new GatehouseSqliteDialect({ database }, options.filename),
    raw,
    prepare,
    stopCheckpointer: async () => checkpointer?.stop(),
  };
}
