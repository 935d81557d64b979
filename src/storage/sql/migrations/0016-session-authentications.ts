import type { Kysely } from 'kysely';

// Frozen in time: later changes go into new migration files, never here.
// docs/decisions.md, decision 30: a browser session records each method that proved who the person is
// and when, as a JSON array of {"method", "at"}; auth_time, amr and acr are derived from it. NULL on
// every session there already was: each was started by a password when it was created, which is how
// core/sign-in/assurance.ts reads a session that records nothing.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('browser_sessions').addColumn('authentications', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('browser_sessions').dropColumn('authentications').execute();
}
