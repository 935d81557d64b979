import { sql, type RawBuilder } from 'kysely';

/**
 * Whether a caller-supplied key can name a stored row at all. PostgreSQL refuses text containing NUL
 * with an error (a 500 if let through), and no stored id, user name or scope contains one, so such a
 * key simply matches nothing, on both backends alike.
 */
export function isLookupKey(key: string): boolean {
  return !key.includes('\u0000');
}

/**
 * `column` contains `text`, the case of ASCII letters ignored (SearchPage in ports.ts): lower() on
 * both sides (SQLite's folds ASCII letters only, PostgreSQL's more), LIKE's wildcards in the text
 * escaped so that `_` and `%` are matched as themselves.
 */
export function contains(column: string, text: string): RawBuilder<boolean> {
  const pattern = `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return sql<boolean>`lower(${sql.ref(column)}) like lower(${pattern}) escape '\\'`;
}
