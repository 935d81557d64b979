import type { Kysely } from 'kysely';

// Frozen in time: later changes go into new migration files, never here.
// RFC 9126 pushed authorization requests. They live in the store, not in process memory, so that any
// process on one PostgreSQL serves the /authorize that follows a push (docs/deployment.md: nothing
// shared lives in one process). Only the SHA-256 of the request_uri's random part is kept. Rows live
// a minute, or the half hour of a sign-in once opened: the purge deletes them by expires_at, and the
// table stays small enough that a client's delete may cascade over it without an index.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('pushed_authorization_requests')
    .addColumn('hash', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.id').onDelete('cascade'))
    .addColumn('params', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('opened_at', 'bigint')
    .addColumn('consumed_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('pushed_authorization_requests_by_expiry')
    .on('pushed_authorization_requests')
    .column('expires_at')
    .execute();

  // RFC 9126 §6 client metadata; every client registered before takes requests either way.
  await db.schema
    .alterTable('clients')
    .addColumn('require_pushed_authorization_requests', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').dropColumn('require_pushed_authorization_requests').execute();
  await db.schema.dropTable('pushed_authorization_requests').execute();
}
