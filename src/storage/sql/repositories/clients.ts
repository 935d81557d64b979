import type { Kysely } from 'kysely';
import type { Client } from '../../../core/model.js';
import type { ClientFilter, ClientStore } from '../../../core/ports.js';
import type { Database } from '../schema.js';
import type { SqliteHotPath } from '../sqlite-hot-path.js';
import { clientFromRow, clientToRow } from './mappers.js';
import { isLookupKey } from './lookup-key.js';

/** `hot`, on SQLite, reads one client by id with a prepared statement: every token request does. */
export function createClientRepository(
  db: Kysely<Database>,
  hot?: SqliteHotPath,
  /**
   * How long a client read stays in this process's memory. Client authentication runs on every token
   * request; a change made through this store is seen at once, one made by another process within
   * this many milliseconds.
   */
  cacheTtlMs = 0,
): ClientStore {
  const cache = new Map<string, { client: Client; until: number }>();
  const forget = (id: string) => cache.delete(id);
  return {
    async insert(client: Client) {
      forget(client.id);
      await db.insertInto('clients').values(clientToRow(client)).execute();
    },
    async get(id: string) {
      if (!isLookupKey(id)) return undefined;
      const cached = cacheTtlMs > 0 ? cache.get(id) : undefined;
      if (cached !== undefined && cached.until > Date.now()) return { ...cached.client };
      const row = hot?.usable
        ? hot.clientById(id)
        : await db.selectFrom('clients').selectAll().where('id', '=', id).executeTakeFirst();
      const client = row && clientFromRow(row);
      if (client !== undefined && cacheTtlMs > 0) {
        // Bounded: a flood of distinct ids cannot grow the map without limit.
        if (cache.size >= 10_000) cache.clear();
        cache.set(id, { client, until: Date.now() + cacheTtlMs });
      }
      return client;
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
      forget(client.id);
      const { id, ...rest } = clientToRow(client);
      const result = await db.updateTable('clients').set(rest).where('id', '=', id).executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
    async delete(id: string) {
      if (!isLookupKey(id)) return false;
      forget(id);
      const result = await db.deleteFrom('clients').where('id', '=', id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}
