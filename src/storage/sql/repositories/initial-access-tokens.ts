import { sql, type Kysely } from 'kysely';
import type { InitialAccessTokenStore } from '../../../core/ports.js';
import type { Database } from '../schema.js';
import { initialAccessTokenFromRow, initialAccessTokenToRow } from './mappers.js';
import { isLookupKey } from './lookup-key.js';

/**
 * RFC 7591 §3 initial access tokens. Expired ones are deleted by the automatic purge
 * (repositories/purge.ts, docs/decisions.md, decision 5).
 */
export function createInitialAccessTokenRepository(db: Kysely<Database>): InitialAccessTokenStore {
  return {
    async insert(token) {
      await db.insertInto('initial_access_tokens').values(initialAccessTokenToRow(token)).execute();
    },
    async getByHash(hash) {
      if (!isLookupKey(hash)) return undefined;
      const row = await db
        .selectFrom('initial_access_tokens')
        .selectAll()
        .where('hash', '=', hash)
        .executeTakeFirst();
      return row && initialAccessTokenFromRow(row);
    },
    async list() {
      const rows = await db
        .selectFrom('initial_access_tokens')
        .selectAll()
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(initialAccessTokenFromRow);
    },
    async page(limit, offset) {
      const total = await db
        .selectFrom('initial_access_tokens')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      const rows = await db
        .selectFrom('initial_access_tokens')
        .selectAll()
        .orderBy('created_at')
        .orderBy('id')
        .limit(limit)
        .offset(offset)
        .execute();
      return { items: rows.map(initialAccessTokenFromRow), total: Number(total.n) };
    },
    async get(id) {
      if (!isLookupKey(id)) return undefined;
      const row = await db
        .selectFrom('initial_access_tokens')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirst();
      return row && initialAccessTokenFromRow(row);
    },
    async delete(id) {
      if (!isLookupKey(id)) return false;
      const result = await db.deleteFrom('initial_access_tokens').where('id', '=', id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
    async countRegistration(id) {
      await db
        .updateTable('initial_access_tokens')
        .set({ clients_registered: sql<number>`clients_registered + 1` })
        .where('id', '=', id)
        .execute();
    },
  };
}
