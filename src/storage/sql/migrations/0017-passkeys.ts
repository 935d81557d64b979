import type { Kysely } from 'kysely';

// Frozen in time: later changes go into new migration files, never here.
// docs/decisions.md, decision 33: passkeys (WebAuthn credentials) and the challenges of their
// ceremonies.
// - passkeys: one row per credential, keyed by its credential id (base64url, WebAuthn §6.1: unique per
//   authenticator, so a second user registering the same id is refused by the key). The COSE public key
//   is stored as base64url text; it is public. sign_count is the signature counter last seen (§6.1.1),
//   backup_eligible the BE flag fixed at registration (a device-bound or a synced passkey), backed_up
//   the BS flag last seen (§6.1.3). Deleting the user deletes their passkeys.
// - webauthn_challenges: a challenge lives until consumed (deleted by the one statement that accepts
//   it, so two processes never accept one challenge) or until expires_at, after which the purge deletes
//   it. Only its SHA-256 is stored, bound to the SHA-256 of the browser id it was issued to and to its
//   purpose (register, sign-in, second-factor); user_id names the user of a registration or a second
//   factor, NULL for a passwordless sign-in (the credential names the user there).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('passkeys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('sign_count', 'bigint', (c) => c.notNull())
    // A JSON array of AuthenticatorTransport values, as the browser reported them.
    .addColumn('transports', 'text', (c) => c.notNull())
    .addColumn('backup_eligible', 'integer', (c) => c.notNull())
    .addColumn('backed_up', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_used_at', 'bigint')
    .execute();
  await db.schema.createIndex('passkeys_by_user').on('passkeys').column('user_id').execute();
  await db.schema
    .createTable('webauthn_challenges')
    .addColumn('hash', 'text', (c) => c.primaryKey())
    .addColumn('browser_hash', 'text', (c) => c.notNull())
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  // The purge's search (decision 5), and the cascade from a deleted user.
  await db.schema
    .createIndex('webauthn_challenges_by_expiry')
    .on('webauthn_challenges')
    .column('expires_at')
    .execute();
  await db.schema
    .createIndex('webauthn_challenges_by_user')
    .on('webauthn_challenges')
    .column('user_id')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('webauthn_challenges').execute();
  await db.schema.dropTable('passkeys').execute();
}
