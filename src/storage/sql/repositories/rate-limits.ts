import { sql, type Kysely } from 'kysely';
import type { RateLimitStore } from '../../../core/ports.js';
import type { Database } from '../schema.js';

/**
 * Request counters in the throttle table (keys prefixed `rl:` by the caller; the purge deletes windows
 * that have ended). All of a request's counters are counted in one upsert, so a rate limit costs one
 * statement per request however many limits apply.
 */
export function createRateLimitRepository(db: Kysely<Database>): RateLimitStore {
  return {
    async hit(keys: readonly string[], windowSeconds: number, at: number) {
      if (keys.length === 0) return [];
      // Sorted, so that concurrent statements lock the same rows in the same order (no deadlock on
      // PostgreSQL when two requests share two keys).
      const sorted = [...new Set(keys)].sort();
      const rows = await db
        .insertInto('throttle')
        .values(sorted.map((key) => ({ key, count: 1, reset_at: at + windowSeconds })))
        .onConflict((oc) =>
          oc.column('key').doUpdateSet({
            count: sql<number>`CASE WHEN throttle.reset_at <= ${at} THEN 1 ELSE throttle.count + 1 END`,
            reset_at: sql<number>`CASE WHEN throttle.reset_at <= ${at} THEN ${at + windowSeconds} ELSE throttle.reset_at END`,
          }),
        )
        .returning(['key', 'count', 'reset_at'])
        .execute();
      const byKey = new Map(rows.map((row) => [row.key, row]));
      return keys.map((key) => {
        const row = byKey.get(key);
        if (row === undefined) throw new Error('rate limit upsert returned no row for a key');
        return { key, count: Number(row.count), resetAt: Number(row.reset_at) };
      });
    },
    async add(entries) {
      if (entries.length === 0) return [];
      // Sorted for the same lock order as hit(); the key names its window, so there is no reset here.
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
