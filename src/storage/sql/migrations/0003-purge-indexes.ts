import type { Kysely } from 'kysely';

// Frozen in time: later changes go into new migration files, never here.
// The automatic purge (core/ops/purge.ts) picks dead rows by these columns every few seconds; without an
// index each batch would scan the whole table, which is what makes token tables hurt as they grow.
// (authorization_codes.expires_at and browser_sessions.expires_at are indexed by 0001 and 0002.)
const INDEXES: ReadonlyArray<[name: string, table: string, column: string]> = [
  ['refresh_tokens_by_expiry', 'refresh_tokens', 'expires_at'],
  ['revoked_access_tokens_by_expiry', 'revoked_access_tokens', 'expires_at'],
  ['throttle_by_reset', 'throttle', 'reset_at'],
  ['grants_by_expiry', 'grants', 'expires_at'],
  ['grants_by_revocation', 'grants', 'revoked_at'],
  // Deleting a grant cascades to its codes: without this, every grant deleted scans all codes.
  ['authorization_codes_by_grant', 'authorization_codes', 'grant_id'],
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [name, table, column] of INDEXES) {
    await db.schema.createIndex(name).on(table).column(column).execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const [name] of INDEXES) await db.schema.dropIndex(name).execute();
}
