import type { Kysely } from 'kysely';
import type { RevocationStore } from '../../../core/ports.js';
import type { Database } from '../schema.js';

export function createRevocationRepository(db: Kysely<Database>): RevocationStore {
  return {
    async revokeAccessToken(jti: string, expiresAt: number) {
      await db
        .insertInto('revoked_access_tokens')
        .values({ jti, expires_at: expiresAt })
        .onConflict((oc) => oc.column('jti').doNothing())
        .execute();
    },
    async isAccessTokenRevoked(jti: string) {
      const row = await db
        .selectFrom('revoked_access_tokens')
        .select('jti')
        .where('jti', '=', jti)
        .executeTakeFirst();
      return row !== undefined;
    },
  };
}
