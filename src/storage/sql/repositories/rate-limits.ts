import { sql, type Kysely } from 'kysely';
import type { RateLimitStore } from '../../../core/ports.js';
import type { Database } from '../schema.js';

/**
 * Request counters in the throttle table (keys prefixed `rl:` and suffixed with their window by the
 * caller; the purge deletes windows that have ended). Each process merges what it counted locally in
 * one upsert (core/ops/batched-rate-counter.ts), so rate limits cost no statement on the request path.
 */
export function createRateLimitRepository(db: Kysely<Database>): RateLimitStore {
  return {
    async add(entries) {
      if (entries.length === 0) return [];
      // Sorted, so that concurrent merges lock the same rows in the same order (no deadlock on
      // PostgreSQL); the key names its window, so there is no reset here.
      const sorted = [...entries].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      const rows = await db
        .insertInto('throttle')
        .values(sorted.map((e) => ({ key: e.key, count: e.delta, reset_at: e.resetAt })))
        .onConflict((oc) =>
          oc.column('key').doUpdateSet({ count: sql<number>`throttle.count + excluded.count` }),
        )
        .returning(['key', 'count'])
        .execute();
      return rows.map((row) => ({ key: row.key, count: Number(row.count) }));
    },
  };
}
