import { sql, type Kysely } from 'kysely';
import type { MacNonceStore } from '../../../core/ports.js';
import type { Database } from '../schema.js';

/** Expired rows removed per clean-up, and how often (one insert in CLEANUP_EVERY) a clean-up runs. */
const CLEANUP_BATCH = 64;
const CLEANUP_EVERY = 16;

export function createMacNonceRepository(
  db: Kysely<Database>,
  dialect: 'sqlite' | 'postgres',
): MacNonceStore {
  let inserts = 0;

  /**
   * Deletes a small batch of expired nonces. Run now and then from the write path, it removes on
   * average four rows per insert, so the table stays bounded by the traffic of one timestamp window.
   */
  async function deleteExpired(now: number): Promise<number> {
    const statement =
      dialect === 'postgres'
        ? // SKIP LOCKED: concurrent clean-ups in other processes take other rows instead of waiting.
          // By ctid, as the purge deletes (repositories/purge.ts): a TID scan to each locked row.
          sql`DELETE FROM mac_nonces WHERE ctid = ANY(ARRAY(SELECT ctid FROM mac_nonces WHERE expires_at <= ${now} LIMIT ${CLEANUP_BATCH} FOR UPDATE SKIP LOCKED))`
        : sql`DELETE FROM mac_nonces WHERE (jti, nonce) IN (SELECT jti, nonce FROM mac_nonces WHERE expires_at <= ${now} LIMIT ${CLEANUP_BATCH})`;
    const result = await statement.execute(db);
    return Number(result.numAffectedRows ?? 0n);
  }

  return {
    async remember(jti: string, nonce: string, expiresAt: number, now: number) {
      // One statement decides, atomically in the shared store: a new (jti, nonce) is inserted; a
      // seen one is refused unless its row outlived its window (then it is taken over).
      const result = await db
        .insertInto('mac_nonces')
        .values({ jti, nonce, expires_at: expiresAt })
        .onConflict((oc) =>
          oc
            .columns(['jti', 'nonce'])
            .doUpdateSet({ expires_at: expiresAt })
            .where('mac_nonces.expires_at', '<=', now),
        )
        .executeTakeFirst();
      inserts = (inserts + 1) % CLEANUP_EVERY;
      if (inserts === 0) await deleteExpired(now).catch(() => 0);
      return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
    },
    deleteExpired,
  };
}
