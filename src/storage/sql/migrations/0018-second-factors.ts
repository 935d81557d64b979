import type { Kysely } from 'kysely';

// Frozen in time: later changes go into new migration files, never here.
// docs/decisions.md, decision 34: a second factor after a password.
// - totp_credentials: one authenticator app per user. The RFC 6238 secret is needed to check a code, so
//   it cannot be hashed: it is sealed (AES-256-GCM under a key derived from the server secret). A row
//   with no confirmed_at is a set-up begun and not finished; it proves nothing. last_step is the RFC
//   6238 time step of the last code accepted: a code is accepted only by an UPDATE that moves it forward
//   (RFC 6238 §5.2, "the verifier MUST NOT accept the second attempt of the same OTP"), so two processes
//   cannot both accept one code.
// - recovery_codes: ten single-use codes per user, only their SHA-256 kept; used_at set by one
//   conditional UPDATE.
// - clients.require_mfa: a client whose users must sign in with two factors; off for every client there is.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('totp_credentials')
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('secret_sealed', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('confirmed_at', 'bigint')
    .addColumn('last_step', 'bigint')
    .execute();
  await db.schema
    .createTable('recovery_codes')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .addPrimaryKeyConstraint('recovery_codes_pkey', ['user_id', 'code_hash'])
    .execute();
  await db.schema
    .alterTable('clients')
    .addColumn('require_mfa', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').dropColumn('require_mfa').execute();
  await db.schema.dropTable('recovery_codes').execute();
  await db.schema.dropTable('totp_credentials').execute();
}
