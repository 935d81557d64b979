import { sql, type Kysely } from 'kysely';
import type { PushedAuthorizationRequest } from '../../../core/model.js';
import type { PushedAuthorizationRequestStore } from '../../../core/ports.js';
import type { Database } from '../schema.js';
import { pushedRequestFromRow, pushedRequestToRow } from './mappers.js';

/**
 * Pushed authorization requests (RFC 9126). Opening and consuming are one statement each: the row
 * lock (PostgreSQL) or the single writer (SQLite) lets exactly one concurrent consumer see
 * consumed_at IS NULL. Expired rows are deleted by the automatic purge (repositories/purge.ts).
 */
export function createPushedRequestRepository(db: Kysely<Database>): PushedAuthorizationRequestStore {
  return {
    async insert(request: PushedAuthorizationRequest) {
      await db.insertInto('pushed_authorization_requests').values(pushedRequestToRow(request)).execute();
    },
    async open(hash: string, clientId: string, now: number, expiresAtOnceOpened: number) {
      const row = await db
        .updateTable('pushed_authorization_requests')
        .set({
          // Both read the row as it was: the first opening moves the expiry, later ones keep it.
          expires_at: sql<number>`CASE WHEN opened_at IS NULL THEN ${expiresAtOnceOpened} ELSE expires_at END`,
          opened_at: sql<number>`COALESCE(opened_at, ${now})`,
        })
        .where('hash', '=', hash)
        .where('client_id', '=', clientId)
        .where('consumed_at', 'is', null)
        .where('expires_at', '>', now)
        .returningAll()
        .executeTakeFirst();
      return row && pushedRequestFromRow(row);
    },
    async consume(hash: string, clientId: string, at: number) {
      const result = await db
        .updateTable('pushed_authorization_requests')
        .set({ consumed_at: at })
        .where('hash', '=', hash)
        .where('client_id', '=', clientId)
        .where('consumed_at', 'is', null)
        .where('expires_at', '>', at)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
  };
}
