import type { Kysely } from 'kysely';
import type { UsedJtiStore } from '../../../core/ports.js';
import type { Database } from '../schema.js';

/** Expired rows are deleted by the automatic purge (repositories/purge.ts, docs/decisions.md, decision 5). */
export function createUsedJtiRepository(db: Kysely<Database>): UsedJtiStore {
  return {
    async use(namespace: string, jti: string, expiresAt: number, now: number) {
      // One statement decides, atomically in the shared store: a new (namespace, jti) is inserted; a
      // seen one is refused unless its row outlived its expiry (then it is taken over).
      const result = await db
        .insertInto('used_jtis')
        .values({ namespace, jti, expires_at: expiresAt })
        .onConflict((oc) =>
          oc
            .columns(['namespace', 'jti'])
            .doUpdateSet({ expires_at: expiresAt })
            .where('used_jtis.expires_at', '<=', now),
        )
        .executeTakeFirst();
      return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
    },
  };
}
