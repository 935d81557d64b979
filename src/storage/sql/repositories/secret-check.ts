import type { Kysely } from 'kysely';
import type { SecretCheckStore } from '../../../core/ports.js';
import type { Database } from '../schema.js';

/** The migration that adds the table; a store before it has no place for the value yet. */
const CHECK_MIGRATION = '0006-server-secret-check';
/** The table holds one row. */
const ROW_ID = 1;

type CheckTables = {
  server_secret_check: { id: number; check_value: string; created_at: number };
};

/**
 * The server secret's check value (compose/secret-check.ts), in its one-row table. Read on a store at
 * any migration level: secret checks run before migrations are applied.
 */
export function createSecretCheckRepository(
  db: Kysely<Database>,
  pendingMigrations: () => Promise<string[]>,
): SecretCheckStore {
  const table = () => db.withTables<CheckTables>();
  const stored = async (): Promise<string | undefined> => {
    const row = await table()
      .selectFrom('server_secret_check')
      .select('check_value')
      .where('id', '=', ROW_ID)
      .executeTakeFirst();
    return row?.check_value;
  };
  return {
    async read() {
      if ((await pendingMigrations()).includes(CHECK_MIGRATION)) return undefined;
      return stored();
    },
    async write(value, at) {
      await table()
        .insertInto('server_secret_check')
        .values({ id: ROW_ID, check_value: value, created_at: at })
        .onConflict((conflict) => conflict.column('id').doNothing())
        .execute();
      return stored();
    },
  };
}
