import type { Kysely } from 'kysely';
import type { Scope } from '../../../core/model.js';
import type { ScopeStore } from '../../../core/ports.js';
import type { Database, ScopesTable } from '../schema.js';
import { contains, isLookupKey } from './lookup-key.js';

const fromRow = (row: ScopesTable): Scope => ({
  name: row.name,
  description: row.description,
  createdAt: row.created_at,
});
const toRow = (scope: Scope): ScopesTable => ({
  name: scope.name,
  description: scope.description,
  created_at: scope.createdAt,
});

export function createScopeRepository(db: Kysely<Database>): ScopeStore {
  return {
    async ensure(scopes: Scope[]) {
      if (scopes.length === 0) return;
      await db
        .insertInto('scopes')
        .values(scopes.map(toRow))
        .onConflict((oc) => oc.column('name').doNothing())
        .execute();
    },
    async upsert(scope: Scope) {
      await db
        .insertInto('scopes')
        .values(toRow(scope))
        .onConflict((oc) => oc.column('name').doUpdateSet({ description: scope.description }))
        .execute();
    },
    async get(name: string) {
      if (!isLookupKey(name)) return undefined;
      const row = await db.selectFrom('scopes').selectAll().where('name', '=', name).executeTakeFirst();
      return row && fromRow(row);
    },
    async list() {
      const rows = await db.selectFrom('scopes').selectAll().orderBy('name').execute();
      return rows.map(fromRow);
    },
    async page({ search, limit, offset }) {
      if (search !== undefined && !isLookupKey(search)) return { items: [], total: 0 };
      let query = db.selectFrom('scopes');
      if (search !== undefined) query = query.where(contains('name', search));
      const total = await query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      const rows = await query.selectAll().orderBy('name').limit(limit).offset(offset).execute();
      return { items: rows.map(fromRow), total: Number(total.n) };
    },
    async delete(name: string) {
      if (!isLookupKey(name)) return false;
      const result = await db.deleteFrom('scopes').where('name', '=', name).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}
