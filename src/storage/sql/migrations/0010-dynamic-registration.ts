import type { Kysely } from 'kysely';

// Frozen in time: later changes go into new migration files, never here.
// RFC 7591 dynamic client registration and RFC 7592 management (docs/decisions.md, decision 20).
// Every new client column has a default, so clients made before read as an operator's.
export async function up(db: Kysely<unknown>): Promise<void> {
  // operator | token | open: how the client came to be registered.
  await db.schema
    .alterTable('clients')
    .addColumn('registration', 'text', (c) => c.notNull().defaultTo('operator'))
    .execute();
  // RFC 7592 §3: the registration access token, as its SHA-256 only; null for an operator's client.
  await db.schema.alterTable('clients').addColumn('registration_access_token_hash', 'text').execute();
  // When a user first granted the client anything (recorded for `open` clients, which the purge
  // deletes when unused).
  await db.schema.alterTable('clients').addColumn('first_granted_at', 'bigint').execute();
  // The purge's search for unused anonymous clients: by how they came and when, never a scan.
  await db.schema
    .createIndex('clients_by_registration')
    .on('clients')
    .columns(['registration', 'created_at'])
    .execute();
  // Deleting a client (an operator's delete, and now the purge's of unused anonymous clients) cascades
  // to its codes and refresh tokens by client_id: without these, every client deleted scans both tables,
  // on SQLite while holding the write lock.
  await db.schema
    .createIndex('authorization_codes_by_client')
    .on('authorization_codes')
    .column('client_id')
    .execute();
  await db.schema.createIndex('refresh_tokens_by_client').on('refresh_tokens').column('client_id').execute();

  // RFC 7591 §3 initial access tokens, stored as their SHA-256 only.
  await db.schema
    .createTable('initial_access_tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('hash', 'text', (c) => c.notNull().unique())
    // Space-delimited; null: the scopes open registration allows.
    .addColumn('scopes', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('clients_registered', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createIndex('initial_access_tokens_by_expiry')
    .on('initial_access_tokens')
    .column('expires_at')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('initial_access_tokens').execute();
  for (const index of [
    'refresh_tokens_by_client',
    'authorization_codes_by_client',
    'clients_by_registration',
  ]) {
    await db.schema.dropIndex(index).execute();
  }
  for (const column of ['first_granted_at', 'registration_access_token_hash', 'registration']) {
    await db.schema.alterTable('clients').dropColumn(column).execute();
  }
}
