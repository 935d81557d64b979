import type { Kysely } from 'kysely';
import type { AuthorizationCode } from '../../../core/model.js';
import type { AuthorizationCodeStore } from '../../../core/ports.js';
import type { Database } from '../schema.js';
import { codeFromRow, codeToRow } from './mappers.js';

export function createAuthorizationCodeRepository(db: Kysely<Database>): AuthorizationCodeStore {
  return {
    async insert(code: AuthorizationCode) {
      await db.insertInto('authorization_codes').values(codeToRow(code)).execute();
    },
    async consume(hash: string, at: number) {
      // One statement: the row lock (PostgreSQL) or the single writer (SQLite) lets exactly one
      // concurrent redemption see consumed_at IS NULL.
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
  };
}
