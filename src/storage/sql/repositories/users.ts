import { sql, type Kysely } from 'kysely';
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
      // Decision 35: verified only while the address stays, decided in this statement (SET reads the
      // row as it was): a NULL on either side is no match, so removing the address unverifies too.
      const emailVerified = sql<number>`CASE WHEN email = ${rest.email} THEN email_verified ELSE 0 END`;
      const result = await db
        .updateTable('users')
        .set({ ...rest, email_verified: emailVerified })
        .where('id', '=', id)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
    async listByEmail(email: string, limit: number) {
      // lower() on both sides, as migration 0019's index is built: SQLite's folds ASCII letters only,
      // PostgreSQL's those of its locale; an address typed exactly as stored matches on both.
      if (!isLookupKey(email)) return [];
      const rows = await db
        .selectFrom('users')
        .selectAll()
        .where(sql<string>`lower(email)`, '=', sql<string>`lower(${email})`)
        .orderBy('created_at')
        .orderBy('id')
        .limit(limit)
        .execute();
      return rows.map(userFromRow);
    },
    async markEmailVerified(id: string, email: string) {
      if (!isLookupKey(id)) return false;
      const result = await db
        .updateTable('users')
        .set({ email_verified: 1 })
        .where('id', '=', id)
        .where('email', '=', email)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
    async delete(id: string) {
      if (!isLookupKey(id)) return false;
      const result = await db.deleteFrom('users').where('id', '=', id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}
