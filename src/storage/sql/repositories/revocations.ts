import type { Kysely } from 'kysely';
import type { RevocationStore } from '../../../core/ports.js';
import type { Database } from '../schema.js';
import { preparedQuery, type RequestStatements } from '../prepared-query.js';

export function createRevocationRepository(
  db: Kysely<Database>,
  statements?: RequestStatements,
): RevocationStore {
  // Every check of an access token asks this (exact revocation: /introspect, /v1, /userinfo).
  const revoked = preparedQuery(statements, ({ jti }: { jti: string }) =>
    db.selectFrom('revoked_access_tokens').select('jti').where('jti', '=', jti),
  );
  return {
    async revokeAccessToken(jti: string, expiresAt: number) {
      await db
        .insertInto('revoked_access_tokens')
        .values({ jti, expires_at: expiresAt })
        .onConflict((oc) => oc.column('jti').doNothing())
        .execute();
    },
    async isAccessTokenRevoked(jti: string) {
      return (await revoked.first({ jti })) !== undefined;
    },
  };
}
