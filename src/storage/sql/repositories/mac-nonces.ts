import type { Kysely } from 'kysely';
import type { MacNonceStore } from '../../../core/ports.js';
import { preparedQuery, type RequestStatements } from '../prepared-query.js';
import type { Database } from '../schema.js';

interface RememberParams {
  jti: string;
  nonce: string;
  expiresAt: number;
  now: number;
}

/**
 * Expired nonces are deleted by the automatic purge (repositories/purge.ts, docs/decisions.md, decision 5).
 * `statements`: the statement as a prepared query, since every MAC-signed request runs it.
 */
export function createMacNonceRepository(
  db: Kysely<Database>,
  statements?: RequestStatements,
): MacNonceStore {
  // One statement decides, atomically in the shared store: a new (jti, nonce) is inserted; a seen one
  // is refused unless its row outlived its window (then it is taken over).
  const remember = preparedQuery(statements, ({ jti, nonce, expiresAt, now }: RememberParams) =>
    db
      .insertInto('mac_nonces')
      .values({ jti, nonce, expires_at: expiresAt })
      .onConflict((oc) =>
        oc
          .columns(['jti', 'nonce'])
          .doUpdateSet({ expires_at: expiresAt })
          .where('mac_nonces.expires_at', '<=', now),
      ),
  );
  return {
    async remember(jti: string, nonce: string, expiresAt: number, now: number) {
      return (await remember.changes({ jti, nonce, expiresAt, now })) > 0;
    },
  };
}
