import type { Kysely } from 'kysely';

// Frozen in time: later changes go into new migration files, never here.
// The scopes a self-registered client's registration was made under (docs/decisions.md, decision 20):
// an initial access token's `--scopes`, or the open list, as they were when it registered. Every later
// RFC 7592 PUT is held to them. Space-delimited; null for an operator's client, and for a client that
// registered before this column existed (held to the scopes it has).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').addColumn('registration_scopes', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').dropColumn('registration_scopes').execute();
}
