import type { Kysely } from 'kysely';
import type { AuthorizationCode } from '../../../core/model.js';
import type { AuthorizationCodeStore } from '../../../core/ports.js';
import type { Database } from '../schema.js';
import { GRANT_COLUMNS_OF_CODE, type SqliteHotPath } from '../sqlite-hot-path.js';
import { codeFromRow, codeToRow, codeWithGrantFromRow } from './mappers.js';

export function createAuthorizationCodeRepository(
  db: Kysely<Database>,
  hot?: SqliteHotPath,
): AuthorizationCodeStore {
  return {
    async insert(code: AuthorizationCode) {
      if (hot?.usable) return hot.insertCode(codeToRow(code));
      await db.insertInto('authorization_codes').values(codeToRow(code)).execute();
    },
    async consume(hash: string, at: number) {
      // One statement: the row lock (PostgreSQL) or the single writer (SQLite) lets exactly one
      // concurrent redemption see consumed_at IS NULL.
      if (hot?.usable) {
        const consumed = hot.consumeCode(hash, at);
        return consumed && codeFromRow(consumed);
      }
      const row = await db
        .updateTable('authorization_codes')
        .set({ consumed_at: at })
        .where('hash', '=', hash)
        .where('consumed_at', 'is', null)
        .returningAll()
        .executeTakeFirst();
      return row && codeFromRow(row);
    },
    async get(hash: string) {
      const row = await db
        .selectFrom('authorization_codes')
        .selectAll()
        .where('hash', '=', hash)
        .executeTakeFirst();
      return row && codeFromRow(row);
    },
    async getWithGrant(hash: string) {
      const row = hot?.usable
        ? hot.codeWithGrant(hash)
        : await db
            .selectFrom('authorization_codes as c')
            .innerJoin('grants as g', 'g.id', 'c.grant_id')
            .selectAll('c')
            .select(GRANT_COLUMNS_OF_CODE)
            .where('c.hash', '=', hash)
            .executeTakeFirst();
      return row && codeWithGrantFromRow(row);
    },
  };
}
