import { sql, type Kysely } from 'kysely';
import type { ThrottleStore } from '../../../core/ports.js';
import type { Database } from '../schema.js';

export function createThrottleRepository(db: Kysely<Database>): ThrottleStore {
  return {
    async hit(key: string, windowSeconds: number, at: number) {
      // One upsert counts the failure or opens a new window when the old one has passed, so
      // concurrent failures from several processes are all counted.
      const row = await db
        .insertInto('throttle')
        .values({ key, count: 1, reset_at: at + windowSeconds })
        .onConflict((oc) =>
          oc.column('key').doUpdateSet({
            count: sql<number>`CASE WHEN throttle.reset_at <= ${at} THEN 1 ELSE throttle.count + 1 END`,
            reset_at: sql<number>`CASE WHEN throttle.reset_at <= ${at} THEN ${at + windowSeconds} ELSE throttle.reset_at END`,
          }),
        )
        .returning(['count', 'reset_at'])
        .executeTakeFirstOrThrow();
      return { count: Number(row.count), resetAt: Number(row.reset_at) };
    },
    async peek(key: string, at: number) {
      const row = await db
        .selectFrom('throttle')
        .select(['count', 'reset_at'])
        .where('key', '=', key)
        .where('reset_at', '>', at)
        .executeTakeFirst();
      return row ? { count: Number(row.count), resetAt: Number(row.reset_at) } : { count: 0, resetAt: at };
    },
    async reset(key: string) {
      await db.deleteFrom('throttle').where('key', '=', key).execute();
    },
  };
}
