import { inTransaction } from './transaction.js';
import type { Kysely } from 'kysely';
import type { RefreshToken } from '../../../core/model.js';
import type { RefreshTokenStore } from '../../../core/ports.js';
import type { Database } from '../schema.js';
import { refreshTokenFromRow, refreshTokenToRow } from './mappers.js';

export function createRefreshTokenRepository(db: Kysely<Database>): RefreshTokenStore {
  return {
    async insert(token: RefreshToken) {
      await db.insertInto('refresh_tokens').values(refreshTokenToRow(token)).execute();
    },
    async get(hash: string) {
      const row = await db
        .selectFrom('refresh_tokens')
        .selectAll()
        .where('hash', '=', hash)
        .executeTakeFirst();
      return row && refreshTokenFromRow(row);
    },
    async rotate(oldHash: string, next: RefreshToken, at: number) {
      return inTransaction(db, async (trx) => {
        const retired = await trx
          .updateTable('refresh_tokens')
          .set({ retired_at: at })
          .where('hash', '=', oldHash)
          .where('retired_at', 'is', null)
          .returningAll()
          .executeTakeFirst();
        if (retired === undefined) return undefined;
        await trx.insertInto('refresh_tokens').values(refreshTokenToRow(next)).execute();
        return refreshTokenFromRow(retired);
      });
    },
    async retire(hash: string, at: number) {
      const result = await db
        .updateTable('refresh_tokens')
        .set({ retired_at: at })
        .where('hash', '=', hash)
        .where('retired_at', 'is', null)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
  };
}
