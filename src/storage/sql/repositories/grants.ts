import { inTransaction } from './transaction.js';
import type { Kysely } from 'kysely';
import type { Grant } from '../../../core/model.js';
import type { GrantStore } from '../../../core/ports.js';
import type { Database } from '../schema.js';
import { grantFromRow, grantToRow } from './mappers.js';
import { isLookupKey } from './lookup-key.js';
import { preparedQuery, type RequestStatements } from '../prepared-query.js';

export function createGrantRepository(db: Kysely<Database>, statements?: RequestStatements): GrantStore {
  // Every /authorize reads the user's grants (remembered consent).
  const byUser = preparedQuery(statements, ({ userId }: { userId: string }) =>
    db.selectFrom('grants').selectAll().where('user_id', '=', userId).orderBy('created_at', 'desc'),
  );
  // Every check of a user's access token reads its grant (exact liveness: /introspect, /v1, /userinfo).
  const byId = preparedQuery(statements, ({ id }: { id: string }) =>
    db.selectFrom('grants').selectAll().where('id', '=', id),
  );
  return {
    async insert(grant: Grant) {
      await db.insertInto('grants').values(grantToRow(grant)).execute();
    },
    async get(id: string) {
      if (!isLookupKey(id)) return undefined;
      const row = await byId.first({ id });
      return row && grantFromRow(row);
    },
    async listByUser(userId: string) {
      return (await byUser.all({ userId })).map(grantFromRow);
    },
    async listByClient(clientId: string) {
      const rows = await db
        .selectFrom('grants')
        .selectAll()
        .where('client_id', '=', clientId)
        .orderBy('created_at', 'desc')
        .execute();
      return rows.map(grantFromRow);
    },
    async pageStanding(owner, at, limit, offset) {
      let standing = db
        .selectFrom('grants')
        .where('revoked_at', 'is', null)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', at)]));
      if (owner.clientId !== undefined) standing = standing.where('client_id', '=', owner.clientId);
      if (owner.userId !== undefined) standing = standing.where('user_id', '=', owner.userId);
      const [rows, count] = await Promise.all([
        standing
          .selectAll()
          .orderBy('created_at', 'desc')
          .orderBy('id')
          .limit(limit)
          .offset(offset)
          .execute(),
        standing.select((eb) => eb.fn.countAll<number | string | bigint>().as('n')).executeTakeFirst(),
      ]);
      return { items: rows.map(grantFromRow), total: Number(count?.n ?? 0) };
    },
    async revoke(id: string, at: number) {
      return inTransaction(db, async (trx) => {
        const result = await trx
          .updateTable('grants')
          .set({ revoked_at: at })
          .where('id', '=', id)
          .where('revoked_at', 'is', null)
          .executeTakeFirst();
        await trx
          .updateTable('refresh_tokens')
          .set({ retired_at: at })
          .where('grant_id', '=', id)
          .where('retired_at', 'is', null)
          .execute();
        return result.numUpdatedRows > 0n;
      });
    },
  };
}
