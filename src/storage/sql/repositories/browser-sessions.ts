import { sql, type Kysely } from 'kysely';
import type { BrowserSession, Grant, SessionAuthentication } from '../../../core/model.js';
import type { BrowserSessionStore } from '../../../core/ports.js';
import type { BrowserSessionsTable, Database, UsersTable } from '../schema.js';
import { preparedQuery, type RequestStatements } from '../prepared-query.js';
import { grantFromRow, userFromRow } from './mappers.js';

/** The methods a session records (decision 30); none on a session stored before migration 0016. */
const authenticationsFromColumn = (column: string | null): Pick<BrowserSession, 'authentications'> =>
  column === null ? {} : { authentications: JSON.parse(column) as SessionAuthentication[] };

/** Decision 37's columns (migration 0020); each absent when NULL (a session stored before it). */
const deviceFromColumns = (row: {
  sid: string | null;
  user_agent: string | null;
  address: string | null;
  last_active_at: number | string | null;
}): Pick<BrowserSession, 'sid' | 'userAgent' | 'address' | 'lastActiveAt'> => ({
  ...(row.sid === null ? {} : { sid: row.sid }),
  ...(row.user_agent === null ? {} : { userAgent: row.user_agent }),
  ...(row.address === null ? {} : { address: row.address }),
  ...(row.last_active_at === null ? {} : { lastActiveAt: Number(row.last_active_at) }),
});

const fromRow = (row: BrowserSessionsTable): BrowserSession => ({
  hash: row.hash,
  userId: row.user_id,
  createdAt: Number(row.created_at),
  expiresAt: Number(row.expires_at),
  ...authenticationsFromColumn(row.authentications),
  ...deviceFromColumns(row),
});

/** A row of the signed-in reads: the user's columns and the session's own, prefixed. */
type SignedInRow = UsersTable & {
  session_created_at: number;
  session_expires_at: number;
  session_authentications: string | null;
  session_sid: string | null;
  session_user_agent: string | null;
  session_address: string | null;
  session_last_active_at: number | null;
};

const signedInFromRow = (hash: string, row: SignedInRow) => ({
  session: {
    hash,
    userId: row.id,
    createdAt: row.session_created_at,
    expiresAt: row.session_expires_at,
    ...authenticationsFromColumn(row.session_authentications),
    ...deviceFromColumns({
      sid: row.session_sid,
      user_agent: row.session_user_agent,
      address: row.session_address,
      last_active_at: row.session_last_active_at,
    }),
  },
  user: userFromRow(row),
});

/** The session columns both signed-in reads select beside the user's. */
const SESSION_COLUMNS = [
  's.created_at as session_created_at',
  's.expires_at as session_expires_at',
  's.authentications as session_authentications',
  's.sid as session_sid',
  's.user_agent as session_user_agent',
  's.address as session_address',
  's.last_active_at as session_last_active_at',
] as const;

export function createBrowserSessionRepository(
  db: Kysely<Database>,
  statements?: RequestStatements,
): BrowserSessionStore {
  // Every /authorize asks who is signed in, and an OpenID Connect one since when: one read for both.
  const signedIn = preparedQuery(statements, ({ hash, at }: { hash: string; at: number }) =>
    db
      .selectFrom('browser_sessions as s')
      .innerJoin('users as u', 'u.id', 's.user_id')
      .selectAll('u')
      .select(SESSION_COLUMNS)
      .where('s.hash', '=', hash)
      .where('s.expires_at', '>', at),
  );
  // /authorize also asks whether the user already consented to the client: the same read, one row per
  // grant of the user to that client (grants_by_user covers the join), one with no grant columns if none.
  const signedInWithGrants = preparedQuery(
    statements,
    ({ hash, at, clientId }: { hash: string; at: number; clientId: string }) =>
      db
        .selectFrom('browser_sessions as s')
        .innerJoin('users as u', 'u.id', 's.user_id')
        .leftJoin('grants as g', (join) =>
          join.onRef('g.user_id', '=', 's.user_id').on('g.client_id', '=', clientId),
        )
        .selectAll('u')
        .select(SESSION_COLUMNS)
        .select([
          'g.id as grant_id',
          'g.client_id as grant_client_id',
          'g.scope as grant_scope',
          'g.created_at as grant_created_at',
          'g.expires_at as grant_expires_at',
          'g.revoked_at as grant_revoked_at',
        ])
        .where('s.hash', '=', hash)
        .where('s.expires_at', '>', at)
        .orderBy('g.created_at', 'desc'),
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
          authentications:
            session.authentications === undefined ? null : JSON.stringify(session.authentications),
          sid: session.sid ?? null,
          user_agent: session.userAgent ?? null,
          address: session.address ?? null,
          last_active_at: session.lastActiveAt ?? null,
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
      return row && signedInFromRow(hash, row);
    },
    async signedInWithGrants(hash: string, at: number, clientId: string) {
      const rows = await signedInWithGrants.all({ hash, at, clientId });
      const first = rows[0];
      if (first === undefined) return undefined;
      const grants: Grant[] = [];
      for (const row of rows) {
        // The left join's row when the user has no grant to the client.
        if (row.grant_id === null || row.grant_client_id === null) continue;
        if (row.grant_scope === null || row.grant_created_at === null) continue;
        grants.push(
          grantFromRow({
            id: row.grant_id,
            client_id: row.grant_client_id,
            user_id: row.id,
            scope: row.grant_scope,
            created_at: row.grant_created_at,
            expires_at: row.grant_expires_at,
            revoked_at: row.grant_revoked_at,
          }),
        );
      }
      return { ...signedInFromRow(hash, first), grants };
    },
    async delete(hash: string) {
      const result = await db.deleteFrom('browser_sessions').where('hash', '=', hash).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
    async deleteByUser(userId: string) {
      const result = await db.deleteFrom('browser_sessions').where('user_id', '=', userId).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
    async countLive(at: number, limit: number) {
      // A bounded count over the expiry index (migration 0002): the dashboard's figure, never a scan
      // of every session of a large deployment.
      const { rows } = await sql<{
        n: number | string;
      }>`SELECT COUNT(*) AS n FROM (SELECT 1 FROM browser_sessions WHERE expires_at > ${at} LIMIT ${limit}) live`.execute(
        db,
      );
      return Number(rows[0]?.n ?? 0);
    },
    async listByUser(userId: string, at: number) {
      const rows = await db
        .selectFrom('browser_sessions')
        .selectAll()
        .where('user_id', '=', userId)
        .where('expires_at', '>', at)
        .orderBy('created_at')
        .orderBy('hash')
        .execute();
      return rows.map(fromRow);
    },
    async deleteOfUser(userId: string, hash: string) {
      const result = await db
        .deleteFrom('browser_sessions')
        .where('hash', '=', hash)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
    async deleteOthersOfUser(userId: string, keepHash: string) {
      const result = await db
        .deleteFrom('browser_sessions')
        .where('user_id', '=', userId)
        .where('hash', '!=', keepHash)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
    async touch(hash: string, at: number, staleBefore: number) {
      await db
        .updateTable('browser_sessions')
        .set({ last_active_at: at })
        .where('hash', '=', hash)
        .where((eb) => eb.or([eb('last_active_at', 'is', null), eb('last_active_at', '<', staleBefore)]))
        .execute();
    },
    async renew(oldHash, at, renewal) {
      const result = await db
        .updateTable('browser_sessions')
        .set({
          hash: renewal.hash,
          authentications: JSON.stringify(renewal.authentications),
          sid: renewal.sid,
          user_agent: renewal.userAgent ?? null,
          address: renewal.address ?? null,
          last_active_at: at,
        })
        .where('hash', '=', oldHash)
        .where('expires_at', '>', at)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
  };
}
