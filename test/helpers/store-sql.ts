/**
 * Raw SQL on a test store, for set-up and inspection no port covers (bulk dead rows, a row's stored
 * form, a migration table edited by hand). Tests go through these, never through the store's Kysely
 * handle, so that a change in how the store is built changes this file only.
 */
import type { Kysely, RawBuilder, Selectable } from 'kysely';
import type { Storage } from '../../src/core/ports.js';
import type { SqlStorage } from '../../src/storage/sql/index.js';
import type { Database } from '../../src/storage/sql/schema.js';

export type Table = keyof Database;

/** The SQL store behind `storage` (a test's own, or a Gatehouse's `storage`); throws on any other. */
export function sqlStore(storage: Storage): SqlStorage {
  if (!('db' in storage)) throw new Error('not a SQL store: raw SQL needs SQLite or PostgreSQL');
  return storage as SqlStorage;
}
export type Row<T extends Table> = Selectable<Database[T]>;

/** Every row of `table`. */
export async function tableRows<T extends Table>(storage: SqlStorage, table: T): Promise<Row<T>[]> {
  // The table name is the caller's choice: Kysely cannot narrow the row type through it.
  return (await storage.db.selectFrom(table).selectAll().execute()) as Row<T>[];
}

/** How many rows `table` holds. */
export async function countRows(storage: SqlStorage, table: Table): Promise<number> {
  const row = await storage.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Inserts `rows` into `table` (they must match the table's columns exactly), as many to a statement
 * as both stores take parameters for.
 */
export async function insertRows<T extends Table>(
  storage: SqlStorage,
  table: T,
  rows: readonly Partial<Row<T>>[],
): Promise<void> {
  const chunk = Math.max(1, Math.floor(30_000 / Object.keys(rows[0] ?? {}).length));
  for (let i = 0; i < rows.length; i += chunk) {
    await storage.db
      .insertInto(table)
      .values(rows.slice(i, i + chunk) as never)
      .execute();
  }
}

/** Runs one statement written with Kysely's `sql` tag; returns its rows. */
export async function runSql<R>(storage: SqlStorage, statement: RawBuilder<R>): Promise<R[]> {
  return (await statement.execute(storage.db)).rows;
}

/**
 * Runs `body` inside a transaction on the store's connection (SQLite: the one connection every
 * request uses). `body` runs its statements with `run`; a throw rolls the transaction back.
 */
export async function inTransaction<T>(
  storage: SqlStorage,
  body: (run: (statement: RawBuilder<unknown>) => Promise<unknown>) => Promise<T>,
): Promise<T> {
  return storage.db.transaction().execute((trx) => body((statement) => statement.execute(trx)));
}

/** Runs a migration's `down` on the store: the store as the Gatehouse before that migration left it. */
export async function undoMigration(
  storage: SqlStorage,
  down: (db: Kysely<unknown>) => Promise<void>,
): Promise<void> {
  await down(storage.db as unknown as Kysely<unknown>);
}
