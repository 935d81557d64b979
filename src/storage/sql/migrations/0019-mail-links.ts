import { sql, type Kysely } from 'kysely';

// Frozen in time: later changes go into new migration files, never here.
// docs/decisions.md, decision 35: recovery and email verification by mail.
// - users.email_verified (0 or 1, like admin): 0 for every user there already was. Gatehouse never
//   verified an address before this, and OpenID Connect Core §5.1 defines true as "verified by the
//   provider": an address an operator typed is not, until its owner follows a link mailed to it.
// - users_by_lower_email: "Forgot password?" finds users by the address they type, compared without
//   regard to ASCII case (lower() in both dialects), without scanning the table.
// - mail_links: single-use links, only the SHA-256 of each token kept. `address` is where the link
//   went: a verification counts only while the user still has that address. One UPDATE ... WHERE
//   used_at IS NULL AND expires_at > now consumes a link, so of concurrent followers (any process)
//   exactly one succeeds. Deleting the user deletes their links; the purge deletes expired ones by
//   expires_at.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('users')
    .addColumn('email_verified', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createIndex('users_by_lower_email')
    .on('users')
    .expression(sql`lower(email)`)
    .execute();
  await db.schema
    .createTable('mail_links')
    .addColumn('hash', 'text', (c) => c.primaryKey())
    // password-reset or email-verification.
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('mail_links_by_expiry').on('mail_links').column('expires_at').execute();
  // Deleting a user cascades here.
  await db.schema.createIndex('mail_links_by_user').on('mail_links').column('user_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('mail_links').execute();
  await db.schema.dropIndex('users_by_lower_email').execute();
  await db.schema.alterTable('users').dropColumn('email_verified').execute();
}
