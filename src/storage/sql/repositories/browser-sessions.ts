import type { Kysely } from 'kysely';
import type { BrowserSession } from '../../../core/model.js';
import type { BrowserSessionStore } from '../../../core/ports.js';
import type { BrowserSessionsTable, Database } from '../schema.js';
import { preparedQuery, type SqliteStatements } from '../prepared-query.js';
import { userFromRow } from './mappers.js';

const fromRow = (row: BrowserSessionsTable): BrowserSession => ({
  hash: row.hash,
  userId: row.user_id,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
});

export function createBrowserSessionRepository(
  db: Kysely<Database>,
  statements?: SqliteStatements,
): BrowserSessionStore {
  // Every /authorize asks who is signed in, and an OpenID Connect one since when: one read for both.
  const signedIn = preparedQuery(statements, ({ hash, at }: { hash: string; at: number }) =>
    db
      .selectFrom('browser_sessions as s')
      .innerJoin('users as u', 'u.id', 's.user_id')
      .selectAll('u')
      .select(['s.created_at as session_created_at', 's.expires_at as session_expires_at'])
      .where('s.hash', '=', hash)
      .where('s.expires_at', '>', at),
  );
  return {
    async insert(session: BrowserSession) {
      await db
        .insertInto('browser_sessions')
        .values({
          hash: session.hash,
          user_id: session.userId,
          created_at: session.createdAt,
          expires_at: session.expiresAt,
        })
        .execute();
    },
    async get(hash: string, at: number) {
      const row = await db
        .selectFrom('browser_sessions')
        .selectAll()
        .where('hash', '=', hash)
        .where('expires_at', '>', at)
        .executeTakeFirst();
      return row && fromRow(row);
    },
    async signedIn(hash: string, at: number) {
      const row = await signedIn.first({ hash, at });
      if (row === undefined) return undefined;
      const session: BrowserSession = {
        hash,
        userId: row.id,
        createdAt: row.session_created_at,
        expiresAt: row.session_expires_at,
      };
      return { session, user: userFromRow(row) };
    },
    async delete(hash: string) {
      const result = await db.deleteFrom('browser_sessions').where('hash', '=', hash).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
    async deleteByUser(userId: string) {
      const result = await db.deleteFrom('browser_sessions').where('user_id', '=', userId).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
