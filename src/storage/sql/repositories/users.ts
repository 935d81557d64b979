import type { Kysely } from 'kysely';
import type { User } from '../../../core/model.js';
import type { UserStore } from '../../../core/ports.js';
import type { Database } from '../schema.js';
import { userFromRow, userToRow } from './mappers.js';
import { isLookupKey } from './lookup-key.js';

export function createUserRepository(db: Kysely<Database>): UserStore {
  return {
    async insert(user: User) {
      const result = await db
        .insertInto('users')
        .values(userToRow(user))
        .onConflict((oc) => oc.column('username').doNothing())
        .executeTakeFirst();
      return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
    },
    async get(id: string) {
      if (!isLookupKey(id)) return undefined;
      const row = await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
      return row && userFromRow(row);
    },
    async getByUsername(username: string) {
      if (!isLookupKey(username)) return undefined;
      const row = await db
        .selectFrom('users')
        .selectAll()
        .where('username', '=', username)
        .executeTakeFirst();
      return row && userFromRow(row);
    },
    async list(limit: number, offset: number) {
      const total = await db
        .selectFrom('users')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      const rows = await db
        .selectFrom('users')
        .selectAll()
        .orderBy('created_at')
        .orderBy('id')
        .limit(limit)
        .offset(offset)
        .execute();
      return { items: rows.map(userFromRow), total: Number(total.n) };
    },
    async update(user: User) {
      const { id, ...rest } = userToRow(user);
      const result = await db.updateTable('users').set(rest).where('id', '=', id).executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
    async delete(id: string) {
      if (!isLookupKey(id)) return false;
      const result = await db.deleteFrom('users').where('id', '=', id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}
