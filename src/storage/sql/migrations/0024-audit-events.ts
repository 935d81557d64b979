import type { Kysely } from 'kysely';

// Frozen in time: later changes go into new migration files, never here.
// docs/decisions.md, decision 41: the audit log. One row per event, never updated; `before` and
// `after` are JSON text (the registries' views, which hold no secret), `actor_type` is user, client,
// cli or NULL. No foreign key: an event outlives the user or client it names (a deleted user's events
// are the record of the deletion). The list is read newest first by (at, id), alone or under one of
// user_id, client_id or type, each with its own index so that every page is one range read; the
// purge deletes by `at` through the first.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('audit_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('actor_type', 'text')
    .addColumn('actor_id', 'text')
    .addColumn('user_id', 'text')
    .addColumn('client_id', 'text')
    .addColumn('address', 'text')
    .addColumn('before', 'text')
    .addColumn('after', 'text')
    .addColumn('detail', 'text')
    .execute();
  await db.schema.createIndex('audit_events_by_time').on('audit_events').columns(['at', 'id']).execute();
  await db.schema
    .createIndex('audit_events_by_user')
    .on('audit_events')
    .columns(['user_id', 'at', 'id'])
    .execute();
  await db.schema
    .createIndex('audit_events_by_client')
    .on('audit_events')
    .columns(['client_id', 'at', 'id'])
    .execute();
  await db.schema
    .createIndex('audit_events_by_type')
    .on('audit_events')
    .columns(['type', 'at', 'id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('audit_events').execute();
}
