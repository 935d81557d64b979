import { sql, type Kysely } from 'kysely';

// Frozen in time: later changes go into new migration files, never here.
// RFC 7523 private_key_jwt client authentication, and the single-use identifiers it needs.
export async function up(db: Kysely<unknown>): Promise<void> {
  // RFC 7591 §2 token_endpoint_auth_method. Every client written before keeps working: a confidential
  // client is client_secret_basic (it still accepts client_secret_post too), a public one none.
  await db.schema
    .alterTable('clients')
    .addColumn('token_endpoint_auth_method', 'text', (c) => c.notNull().defaultTo('client_secret_basic'))
    .execute();
  await sql`UPDATE clients SET token_endpoint_auth_method = 'none' WHERE is_public = 1`.execute(db);
  // RFC 7591 §2 jwks (a JSON JWK Set) and jwks_uri: at most one is set, only for private_key_jwt.
  await db.schema.alterTable('clients').addColumn('jwks', 'text').execute();
  await db.schema.alterTable('clients').addColumn('jwks_uri', 'text').execute();

  // Identifiers accepted once (a client assertion's jti, RFC 7523 §3 item 7), per namespace, kept until
  // the token that carried them expires. The primary key makes "insert if absent" atomic in the shared
  // store, so a replay is refused by every process.
  await db.schema
    .createTable('used_jtis')
    .addColumn('namespace', 'text', (c) => c.notNull())
    .addColumn('jti', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('used_jtis_pkey', ['namespace', 'jti'])
    .execute();
  // The purge deletes by expiry (repositories/purge.ts): indexed so a batch never scans.
  await db.schema.createIndex('used_jtis_by_expiry').on('used_jtis').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('used_jtis').execute();
  for (const column of ['jwks_uri', 'jwks', 'token_endpoint_auth_method']) {
    await db.schema.alterTable('clients').dropColumn(column).execute();
  }
}
