import type { Kysely } from 'kysely';

// Frozen in time: later changes go into new migration files, never here.
// RFC 9449 DPoP. The key thumbprint (RFC 7638, base64url SHA-256) a code or refresh token is bound to:
// a code by the authorization request's dpop_jkt (§10), a public client's refresh token by the proof
// of the request that issued it (§5), copied on rotation. Null: not bound, as every row written
// before. A client's dpop_bound_access_tokens (§5.2) defaults to off, so every client registered
// before keeps getting what it got.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('clients')
    .addColumn('dpop_bound_access_tokens', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('authorization_codes').addColumn('dpop_jkt', 'text').execute();
  await db.schema.alterTable('refresh_tokens').addColumn('dpop_jkt', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('refresh_tokens').dropColumn('dpop_jkt').execute();
  await db.schema.alterTable('authorization_codes').dropColumn('dpop_jkt').execute();
  await db.schema.alterTable('clients').dropColumn('dpop_bound_access_tokens').execute();
}
