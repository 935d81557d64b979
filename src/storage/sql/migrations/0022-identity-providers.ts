import type { Kysely } from 'kysely';

// Frozen in time: later changes go into new migration files, never here.
// docs/decisions.md, decisions 38-40: upstream identity providers and the links of users to them.
// - identity_providers: one row per provider, keyed by its slug id (in its redirect URI). The client
//   secret and the private_key_jwt key are sealed under the server secret's key-encryption key (as
//   signing keys are); scopes and the claim mapping are JSON text.
// - federated_links: (issuer, subject) names one upstream person, linked to at most one user: the
//   unique index refuses a second link in any process. Deleting the user or the provider deletes the
//   links.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('identity_providers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('issuer', 'text')
    .addColumn('authorization_endpoint', 'text')
    .addColumn('token_endpoint', 'text')
    .addColumn('userinfo_endpoint', 'text')
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('client_auth', 'text', (c) => c.notNull())
    .addColumn('client_secret_sealed', 'text')
    .addColumn('private_key_sealed', 'text')
    .addColumn('public_jwk', 'text')
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('claim_mapping', 'text', (c) => c.notNull())
    .addColumn('link_by_verified_email', 'integer', (c) => c.notNull())
    .addColumn('trust_upstream_assurance', 'integer', (c) => c.notNull())
    .addColumn('required_acr', 'text')
    .addColumn('logo_uri', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('federated_links')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('provider_id', 'text', (c) =>
      c.notNull().references('identity_providers.id').onDelete('cascade'),
    )
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('label', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_used_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('federated_links_by_upstream')
    .on('federated_links')
    .columns(['issuer', 'subject'])
    .unique()
    .execute();
  await db.schema.createIndex('federated_links_by_user').on('federated_links').column('user_id').execute();
  await db.schema
    .createIndex('federated_links_by_provider')
    .on('federated_links')
    .column('provider_id')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('federated_links').execute();
  await db.schema.dropTable('identity_providers').execute();
}
