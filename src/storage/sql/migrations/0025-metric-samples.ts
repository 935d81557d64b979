import type { Kysely } from 'kysely';

// Frozen in time: later changes go into new migration files, never here.
// docs/decisions.md, decision 43: the dashboard's figures. Each process adds what it counted to one row
// per (minute, process, series, label) every few seconds, so every process of a deployment writes its
// own rows and a reader sums them. The key leads with the minute: the dashboard reads the last hour
// and the purge deletes minutes older than its cutoff, both one range of the primary key.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('metric_samples')
    .addColumn('minute', 'bigint', (c) => c.notNull())
    .addColumn('process_id', 'text', (c) => c.notNull())
    .addColumn('series', 'text', (c) => c.notNull())
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('value', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('metric_samples_pkey', ['minute', 'process_id', 'series', 'label'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('metric_samples').execute();
}
