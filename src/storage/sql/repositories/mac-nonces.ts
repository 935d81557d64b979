import type { Kysely } from 'kysely';
import type { MacNonceStore } from '../../../core/ports.js';
import type { Database } from '../schema.js';

/** Expired nonces are deleted by the automatic purge (repositories/purge.ts, docs/decisions.md, decision 5). */
export function createMacNonceRepository(db: Kysely<Database>): MacNonceStore {
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
      return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
    },
  };
}
