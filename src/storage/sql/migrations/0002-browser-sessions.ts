import type { Kysely } from 'kysely';

// Frozen in time: later changes go into new migration files, never here.
// Browser sessions live in the store, not in process memory, so that several processes on one
// PostgreSQL share them (docs/deployment.md: nothing shared lives in one process). Only the SHA-256 of the cookie value is kept.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('browser_sessions')
    .addColumn('hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('browser_sessions_by_expiry')
    .on('browser_sessions')
    .column('expires_at')
    .execute();
  await db.schema.createIndex('browser_sessions_by_user').on('browser_sessions').column('user_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('browser_sessions').execute();
}
