import type { Kysely } from 'kysely';

// Frozen in time: later changes go into new migration files, never here.
// docs/decisions.md, decision 39: which upstream identity providers a client's sign-in page offers.
// - clients.identity_providers: a JSON array of provider ids, in the order the page shows them; null
//   (every client there is) offers every provider, so nothing changes for a client until an operator
//   chooses.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').addColumn('identity_providers', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').dropColumn('identity_providers').execute();
}
