import type { Kysely } from 'kysely';

// Frozen in time: later changes go into new migration files, never here.
// OpenID Connect (Core 1.0): what the provider needs beside the OAuth tables. Every column is nullable
// or has a default, so rows written before it read as "not OpenID Connect" and keep working.
export async function up(db: Kysely<unknown>): Promise<void> {
  // Core §5.1 standard claims a user may have; optional, never verified.
  await db.schema.alterTable('users').addColumn('email', 'text').execute();
  await db.schema.alterTable('users').addColumn('name', 'text').execute();

  // OpenID Connect Registration §2: RS256 unless the client registered another algorithm.
  await db.schema
    .alterTable('clients')
    .addColumn('id_token_signed_response_alg', 'text', (c) => c.notNull().defaultTo('RS256'))
    .execute();
  // RP-Initiated Logout §3.1: a JSON array like redirect_uris.
  await db.schema
    .alterTable('clients')
    .addColumn('post_logout_redirect_uris', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();

  // What the ID token of the token response repeats from the authorization request (Core §3.1.3.6).
  await db.schema.alterTable('authorization_codes').addColumn('nonce', 'text').execute();
  await db.schema.alterTable('authorization_codes').addColumn('auth_time', 'bigint').execute();
  await db.schema.alterTable('authorization_codes').addColumn('sid', 'text').execute();

  // Core §12.2: a refresh's ID token keeps the original auth_time and sid; copied on rotation.
  await db.schema.alterTable('refresh_tokens').addColumn('auth_time', 'bigint').execute();
  await db.schema.alterTable('refresh_tokens').addColumn('sid', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const [table, column] of [
    ['refresh_tokens', 'sid'],
    ['refresh_tokens', 'auth_time'],
    ['authorization_codes', 'sid'],
    ['authorization_codes', 'auth_time'],
    ['authorization_codes', 'nonce'],
    ['clients', 'post_logout_redirect_uris'],
    ['clients', 'id_token_signed_response_alg'],
    ['users', 'name'],
    ['users', 'email'],
  ] as const) {
    await db.schema.alterTable(table).dropColumn(column).execute();
  }
}
