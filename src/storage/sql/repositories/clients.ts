import type { Kysely } from 'kysely';
import type { Client } from '../../../core/model.js';
import type { ClientFilter, ClientStore } from '../../../core/ports.js';
import type { ClientsTable, Database } from '../schema.js';
import { clientFromRow, clientToRow } from './mappers.js';
import { isLookupKey } from './lookup-key.js';

/**
 * `fastGet`, when given, reads one client by id without Kysely's per-call query building: client
 * authentication runs on every token request, and on SQLite that building costs more than the read.
 */
export function createClientRepository(
  db: Kysely<Database>,
  fastGet?: (id: string) => ClientsTable | undefined,
): ClientStore {
  return {
    async insert(client: Client) {
      await db.insertInto('clients').values(clientToRow(client)).execute();
    },
    async get(id: string) {
      if (!isLookupKey(id)) return undefined;
      const row = fastGet
        ? fastGet(id)
        : await db.selectFrom('clients').selectAll().where('id', '=', id).executeTakeFirst();
      return row && clientFromRow(row);
    },
    async list(filter: ClientFilter) {
      let query = db.selectFrom('clients');
      if (filter.name !== undefined) query = query.where('name', '=', filter.name);
      if (filter.grantType !== undefined) {
        // grant_types is a JSON array of known names; a quoted match cannot hit a longer name.
        query = query.where('grant_types', 'like', `%"${filter.grantType}"%`);
      }
      const total = await query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      const rows = await query
        .selectAll()
        .orderBy('created_at')
        .orderBy('id')
        .limit(filter.limit)
        .offset(filter.offset)
        .execute();
      return { items: rows.map(clientFromRow), total: Number(total.n) };
    },
    async update(client: Client) {
      const { id, ...rest } = clientToRow(client);
      const result = await db.updateTable('clients').set(rest).where('id', '=', id).executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
    async delete(id: string) {
      if (!isLookupKey(id)) return false;
      const result = await db.deleteFrom('clients').where('id', '=', id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}
