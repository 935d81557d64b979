import type { Kysely } from 'kysely';

// Frozen in time: later changes go into new migration files, never here.
// A revoked signing key (a compromised one) differs from a retired one: a retired key stays in the
// JWKS so the tokens it signed keep verifying, a revoked key leaves it at once and its tokens stop
// verifying. NULL for every key that was never revoked, which is every key before this migration.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('signing_keys').addColumn('revoked_at', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('signing_keys').dropColumn('revoked_at').execute();
}
