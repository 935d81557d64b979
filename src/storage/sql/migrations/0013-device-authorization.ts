import type { Kysely } from 'kysely';

// Frozen in time: later changes go into new migration files, never here.
// RFC 8628 device authorization requests. They live in the store, not in process memory: the device
// may poll any process, and the user's browser may reach another. Only SHA-256 hashes of the device
// code and of the user code are kept; the user code's is unique, which is how the verification page
// finds a request and how two requests never share a code. Each poll's time and the interval (grown
// by slow_down) are columns of the row, so one UPDATE both checks and records a poll across
// processes. Rows live for the device code's lifetime (ten minutes by default); the purge deletes
// them by expires_at.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('device_authorizations')
    .addColumn('hash', 'text', (c) => c.primaryKey())
    .addColumn('user_code_hash', 'text', (c) => c.notNull().unique())
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.id').onDelete('cascade'))
    // Space-delimited, like grants.scope.
    .addColumn('scope', 'text', (c) => c.notNull())
    // A JSON array of canonical URIs, like authorization_codes.resources.
    .addColumn('resources', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    // "interval" is a reserved word in PostgreSQL.
    .addColumn('poll_interval', 'integer', (c) => c.notNull())
    .addColumn('last_polled_at', 'bigint')
    // Whether the last poll came sooner than the interval (it was answered slow_down): what the
    // poll's UPDATE reports back, since RETURNING gives the row as it is after the update.
    .addColumn('polled_too_soon', 'integer', (c) => c.notNull().defaultTo(0))
    // pending, approved or denied.
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('grant_id', 'text', (c) => c.references('grants.id').onDelete('cascade'))
    .addColumn('auth_time', 'bigint')
    .addColumn('sid', 'text')
    .addColumn('decided_at', 'bigint')
    .addColumn('consumed_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('device_authorizations_by_expiry')
    .on('device_authorizations')
    .column('expires_at')
    .execute();
  // Deleting a grant (with its user or client, or by the purge) cascades here.
  await db.schema
    .createIndex('device_authorizations_by_grant')
    .on('device_authorizations')
    .column('grant_id')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('device_authorizations').execute();
}
