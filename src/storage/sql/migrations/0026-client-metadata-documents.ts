import type { Kysely } from 'kysely';

// Frozen in time: later changes go into new migration files, never here.
// docs/decisions.md, decision 46: clients whose id is the https URL of their Client ID Metadata Document
// are stored as last fetched (registration 'document'), so grants, refresh tokens and the purge treat them
// as any client, and every process shares one fetch. clients.document_expires_at: until when the stored
// metadata stands without a fetch; null for every other client.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').addColumn('document_expires_at', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').dropColumn('document_expires_at').execute();
}
