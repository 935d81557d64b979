import type { Kysely } from 'kysely';

// Frozen in time: later changes go into new migration files, never here.
// docs/decisions.md, decision 36: what a sign-in was worth reaches the tokens issued on it. A code, a
// device authorization and a refresh token keep the `acr` reported for the sign-in (OpenID Connect
// Core §2; RFC 9470 §4 in access tokens) and its RFC 8176 `amr` values as a JSON array, so that the
// ID token and the access tokens they lead to (refreshes included: Core §12.2 keeps the original
// sign-in) say what happened then. NULL on rows written before: nothing is claimed for them.
const TABLES = ['authorization_codes', 'refresh_tokens', 'device_authorizations'] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of TABLES) {
    await db.schema.alterTable(table).addColumn('acr', 'text').execute();
    await db.schema.alterTable(table).addColumn('amr', 'text').execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of TABLES) {
    await db.schema.alterTable(table).dropColumn('amr').execute();
    await db.schema.alterTable(table).dropColumn('acr').execute();
  }
}
