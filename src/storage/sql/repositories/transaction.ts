import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

/**
 * Runs `work` in a transaction of its own, or in the one `db` already is (Storage.atomically builds
 * the repositories over its transaction; decision 41): Kysely does not nest transactions, and a
 * repository's few statements that must go together do so inside the caller's just as well.
 */
export function inTransaction<T>(
  db: Kysely<Database>,
  work: (trx: Kysely<Database>) => Promise<T>,
): Promise<T> {
  return db.isTransaction ? work(db) : db.transaction().execute(work);
}
