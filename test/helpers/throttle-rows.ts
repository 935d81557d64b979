import { sql } from 'kysely';
import type { Storage } from '../../src/core/ports.js';
import { insertRows, runSql, sqlStore } from './store-sql.js';

/** Rows of the throttle table whose key starts with `prefix`. */
export async function throttleRows(storage: Storage, prefix: string): Promise<number> {
  const [row] = await runSql(
    sqlStore(storage),
    sql<{ n: number | string }>`SELECT count(*) AS n FROM throttle WHERE key LIKE ${`${prefix}%`}`,
  );
  return Number(row?.n ?? 0);
}

/** Inserts `count` throttle windows keyed `${prefix}0`, `${prefix}1`, …, ended at `resetAt` (to purge). */
export async function insertDeadThrottleRows(
  storage: Storage,
  prefix: string,
  count: number,
  resetAt: number,
): Promise<void> {
  const rows = Array.from({ length: count }, (_, i) => ({
    key: `${prefix}${i}`,
    count: 1,
    reset_at: resetAt,
  }));
  await insertRows(sqlStore(storage), 'throttle', rows);
}
