import type { Kysely } from 'kysely';

// Frozen in time: later changes go into new migration files, never here.
// docs/decisions.md, decision 37: the account's security page lists a user's browser sessions, so each
// session records the device it was signed in on (the User-Agent, cut short), the address it came from,
// when it was last active (written at most once every few minutes), and its OpenID Connect `sid`, kept
// so that it outlives the cookie's renewal at a re-authentication. Every session there already was
// records none of them (NULL): its `sid` is derived from its hash as before, and its last activity is
// written the next time it is used. `users.disabled` (0 or 1, like `admin`): an operator's switch that
// stops every sign-in of the user; nobody there already was is disabled (0).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('browser_sessions').addColumn('sid', 'text').execute();
  await db.schema.alterTable('browser_sessions').addColumn('user_agent', 'text').execute();
  await db.schema.alterTable('browser_sessions').addColumn('address', 'text').execute();
  await db.schema.alterTable('browser_sessions').addColumn('last_active_at', 'bigint').execute();
  await db.schema
    .alterTable('users')
    .addColumn('disabled', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').dropColumn('disabled').execute();
  for (const column of ['last_active_at', 'address', 'user_agent', 'sid']) {
    await db.schema.alterTable('browser_sessions').dropColumn(column).execute();
  }
}
