import type { SqlStorage } from '../../src/storage/sql/index.js';

/** Rows of the throttle table whose key starts with `prefix`. */
export async function throttleRows(storage: SqlStorage, prefix: string): Promise<number> {
  const row = await storage.db
    .selectFrom('throttle')
    .select(({ fn }) => fn.countAll<number>().as('n'))
    .where('key', 'like', `${prefix}%`)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Inserts `count` throttle windows keyed `${prefix}0`, `${prefix}1`, …, ended at `resetAt` (to purge). */
export async function insertDeadThrottleRows(
  storage: SqlStorage,
  prefix: string,
  count: number,
  resetAt: number,
): Promise<void> {
  for (let first = 0; first < count; first += 1000) {
    const rows = Array.from({ length: Math.min(1000, count - first) }, (_, i) => ({
      key: `${prefix}${first + i}`,
      count: 1,
      reset_at: resetAt,
    }));
    await storage.db.insertInto('throttle').values(rows).execute();
  }
}
