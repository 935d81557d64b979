import { sql, type Kysely } from 'kysely';
import type { MetricSample, MetricSampleStore } from '../../../core/ports.js';
import type { Database } from '../schema.js';

/**
 * The dashboard's figures (decision 43, migration 0025): each process adds what it counted since its
 * last flush to its own rows, in one upsert, so no row is ever written by two processes and a crash
 * loses only what had not been flushed.
 */
export function createMetricSampleRepository(db: Kysely<Database>): MetricSampleStore {
  return {
    async add(samples) {
      if (samples.length === 0) return;
      const rows = samples
        .map((s) => ({
          minute: s.minute,
          process_id: s.processId,
          series: s.series,
          label: s.label,
          value: s.value,
        }))
        // One order for every flush: concurrent upserts lock rows in the same order (no deadlock).
        .sort((a, b) =>
          a.minute !== b.minute
            ? a.minute - b.minute
            : `${a.series}\u0000${a.label}` < `${b.series}\u0000${b.label}`
              ? -1
              : 1,
        );
      await db
        .insertInto('metric_samples')
        .values(rows)
        .onConflict((oc) =>
          oc
            .columns(['minute', 'process_id', 'series', 'label'])
            .doUpdateSet({ value: sql<number>`metric_samples.value + excluded.value` }),
        )
        .execute();
    },
    async since(minute, limit) {
      const rows = await db
        .selectFrom('metric_samples')
        .selectAll()
        .where('minute', '>=', minute)
        .orderBy('minute')
        .limit(limit)
        .execute();
      return rows.map((row): MetricSample => ({
        processId: row.process_id,
        minute: Number(row.minute),
        series: row.series,
        label: row.label,
        value: Number(row.value),
      }));
    },
  };
}
