import type { Kysely } from 'kysely';

// Frozen in time: later changes go into new migration files, never here.
// docs/decisions.md, decision 29: a user is an administrator only when given the role; every user
// there already was is not one (0), so no token issued for them carries `admin` until an operator
// runs `gatehouse users update U --admin`. Decision 23: a client's token exchange targets (RFC 8693
// §2.1 resource/audience), a JSON array of resource URIs; '[]' (every client registered before):
// an exchange keeps the subject token's own audience.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('users')
    .addColumn('admin', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('clients')
    .addColumn('token_exchange_targets', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').dropColumn('token_exchange_targets').execute();
  await db.schema.alterTable('users').dropColumn('admin').execute();
}
