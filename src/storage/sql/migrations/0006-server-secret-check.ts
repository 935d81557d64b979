import type { Kysely } from 'kysely';

// Frozen in time: later changes go into new migration files, never here.
// One row: a value derived from the server secret (never the secret itself), so every process and
// command can tell at start-up whether its secret is the one the store's signing keys were sealed under,
// before it writes anything (src/compose/secret-check.ts).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('server_secret_check')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('check_value', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('server_secret_check').execute();
}
