import { sql, type Kysely } from 'kysely';
import type { DeviceAuthorization } from '../../../core/model.js';
import type { DeviceAuthorizationStore, DeviceDecision } from '../../../core/ports.js';
import type { Database } from '../schema.js';
import { deviceAuthorizationFromRow, deviceAuthorizationToRow } from './mappers.js';

/**
 * Device authorization requests (RFC 8628). Deciding, polling and consuming are one statement each:
 * the row lock (PostgreSQL) or the single writer (SQLite) orders concurrent ones, so each poll sees
 * the one before, and exactly one consumer sees consumed_at IS NULL. Expired rows are deleted by the
 * automatic purge (repositories/purge.ts).
 */
export function createDeviceAuthorizationRepository(db: Kysely<Database>): DeviceAuthorizationStore {
  return {
    async insert(authorization: DeviceAuthorization) {
      // A user code already held (by a live request or one not yet purged) stores nothing.
      const result = await db
        .insertInto('device_authorizations')
        .values(deviceAuthorizationToRow(authorization))
        .onConflict((oc) => oc.column('user_code_hash').doNothing())
        .executeTakeFirst();
      return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
    },
    async getByUserCode(userCodeHash: string) {
      const row = await db
        .selectFrom('device_authorizations')
        .selectAll()
        .where('user_code_hash', '=', userCodeHash)
        .executeTakeFirst();
      return row && deviceAuthorizationFromRow(row);
    },
    async decide(userCodeHash: string, decision: DeviceDecision, at: number) {
      const result = await db
        .updateTable('device_authorizations')
        .set(
          decision.status === 'approved'
            ? {
                status: 'approved',
                user_id: decision.userId,
                grant_id: decision.grantId,
                scope: decision.scope.join(' '),
                auth_time: decision.authTime,
                sid: decision.sid,
                acr: decision.acr ?? null,
                amr:
                  decision.amr === undefined || decision.amr === null ? null : JSON.stringify(decision.amr),
                decided_at: at,
              }
            : { status: 'denied', user_id: decision.userId, decided_at: at },
        )
        .where('user_code_hash', '=', userCodeHash)
        .where('status', '=', 'pending')
        .where('expires_at', '>', at)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
    async poll(hash: string, clientId: string, at: number, slowDownSeconds: number) {
      // Every SET expression reads the row as it was before this statement (SQL; both dialects), so
      // the check and the record of this poll are one step: no other poll comes between them.
      const tooSoon = sql<number>`(status = 'pending' AND expires_at > ${at} AND last_polled_at IS NOT NULL AND ${at} - last_polled_at < poll_interval)`;
      const row = await db
        .updateTable('device_authorizations')
        .set({
          poll_interval: sql<number>`CASE WHEN ${tooSoon} THEN poll_interval + ${slowDownSeconds} ELSE poll_interval END`,
          polled_too_soon: sql<number>`CASE WHEN ${tooSoon} THEN 1 ELSE 0 END`,
          last_polled_at: at,
        })
        .where('hash', '=', hash)
        .where('client_id', '=', clientId)
        .returningAll()
        .executeTakeFirst();
      return (
        row && { authorization: deviceAuthorizationFromRow(row), tooSoon: Number(row.polled_too_soon) === 1 }
      );
    },
    async consume(hash: string, clientId: string, at: number) {
      const row = await db
        .updateTable('device_authorizations')
        .set({ consumed_at: at })
        .where('hash', '=', hash)
        .where('client_id', '=', clientId)
        .where('status', '=', 'approved')
        .where('consumed_at', 'is', null)
        .where('expires_at', '>', at)
        .returningAll()
        .executeTakeFirst();
      return row && deviceAuthorizationFromRow(row);
    },
  };
}
