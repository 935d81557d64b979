import type { Kysely } from 'kysely';

// Frozen in time: later changes go into new migration files, never here.
// Nonces of MAC-signed requests (docs/decisions.md, decision 3). The primary key (jti, nonce) makes
// "insert if absent" atomic in the shared store, so a replay is refused by every process.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('mac_nonces')
    .addColumn('jti', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('mac_nonces_pkey', ['jti', 'nonce'])
    .execute();
  await db.schema.createIndex('mac_nonces_by_expiry').on('mac_nonces').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('mac_nonces').execute();
}
