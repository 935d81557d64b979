import type { Kysely } from 'kysely';
import type { UsedJtiStore } from '../../../core/ports.js';
import { preparedQuery, type RequestStatements } from '../prepared-query.js';
import type { Database } from '../schema.js';

interface UseParams {
  namespace: string;
  jti: string;
  expiresAt: number;
  now: number;
}

/**
 * Expired rows are deleted by the automatic purge (repositories/purge.ts, docs/decisions.md, decision 5).
 * `statements`: the statement as a prepared query, since every DPoP proof and client
 * assertion runs it.
 */
export function createUsedJtiRepository(db: Kysely<Database>, statements?: RequestStatements): UsedJtiStore {
  // One statement decides, atomically in the shared store: a new (namespace, jti) is inserted; a seen
  // one is refused unless its row outlived its expiry (then it is taken over).
  const use = preparedQuery(statements, ({ namespace, jti, expiresAt, now }: UseParams) =>
    db
      .insertInto('used_jtis')
      .values({ namespace, jti, expires_at: expiresAt })
      .onConflict((oc) =>
        oc
          .columns(['namespace', 'jti'])
          .doUpdateSet({ expires_at: expiresAt })
          .where('used_jtis.expires_at', '<=', now),
      ),
  );
  return {
    async use(namespace: string, jti: string, expiresAt: number, now: number) {
      return (await use.changes({ namespace, jti, expiresAt, now })) > 0;
    },
  };
}
