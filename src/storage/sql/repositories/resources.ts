import type { Kysely } from 'kysely';
import type { ResourceServer } from '../../../core/model.js';
import type { ResourceStore } from '../../../core/ports.js';
import type { Database } from '../schema.js';
import { contains, isLookupKey } from './lookup-key.js';
import { resourceFromRow, resourceToRow } from './mappers.js';

/** The registered resource servers (RFC 8707), keyed by canonical URI. */
export function createResourceRepository(db: Kysely<Database>): ResourceStore {
  return {
    async insert(resource: ResourceServer) {
      // One statement: of two processes registering one URI at once, one inserts and the other is told.
      const result = await db
        .insertInto('resources')
        .values(resourceToRow(resource))
        .onConflict((oc) => oc.column('uri').doNothing())
        .executeTakeFirst();
      return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
    },
    async get(uri: string) {
      if (!isLookupKey(uri)) return undefined;
      const row = await db.selectFrom('resources').selectAll().where('uri', '=', uri).executeTakeFirst();
      return row && resourceFromRow(row);
    },
    async getMany(uris: readonly string[]) {
      const keys = uris.filter(isLookupKey);
      if (keys.length === 0) return [];
      const rows = await db.selectFrom('resources').selectAll().where('uri', 'in', keys).execute();
      return rows.map(resourceFromRow);
    },
    async list() {
      const rows = await db.selectFrom('resources').selectAll().orderBy('uri').execute();
      return rows.map(resourceFromRow);
    },
    async page({ search, limit, offset }) {
      if (search !== undefined && !isLookupKey(search)) return { items: [], total: 0 };
      let query = db.selectFrom('resources');
      if (search !== undefined) {
        query = query.where((eb) => eb.or([contains('uri', search), contains('name', search)]));
      }
      const total = await query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      const rows = await query.selectAll().orderBy('uri').limit(limit).offset(offset).execute();
      return { items: rows.map(resourceFromRow), total: Number(total.n) };
    },
    async update(resource: ResourceServer) {
      const { name, scopes } = resourceToRow(resource);
      const result = await db
        .updateTable('resources')
        .set({ name, scopes })
        .where('uri', '=', resource.uri)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
    async delete(uri: string) {
      if (!isLookupKey(uri)) return false;
      const result = await db.deleteFrom('resources').where('uri', '=', uri).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}
