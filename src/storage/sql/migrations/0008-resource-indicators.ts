import type { Kysely } from 'kysely';

// Frozen in time: later changes go into new migration files, never here.
// RFC 8707 resource indicators: the registered resource servers, and the resources each code and
// refresh token was issued for. The new columns default to none, so rows written before it read as
// "no resource" (tokens for the issuer), as they were.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('resources')
    // The canonical URI (core/scopes/resources.ts): one resource server, one row.
    .addColumn('uri', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text')
    // Space-delimited, like clients.scopes; empty: it accepts any scope.
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  // JSON arrays of canonical URIs, like clients.redirect_uris.
  await db.schema
    .alterTable('authorization_codes')
    .addColumn('resources', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();
  await db.schema
    .alterTable('refresh_tokens')
    .addColumn('resources', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('refresh_tokens').dropColumn('resources').execute();
  await db.schema.alterTable('authorization_codes').dropColumn('resources').execute();
  await db.schema.dropTable('resources').execute();
}
