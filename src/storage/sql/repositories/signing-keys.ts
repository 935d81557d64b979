import type { Kysely } from 'kysely';
import type { SigningKeyRecord } from '../../../core/model.js';
import type { SigningKeyStore } from '../../../core/ports.js';
import type { Database } from '../schema.js';
import { signingKeyFromRow, signingKeyToRow } from './mappers.js';

export function createSigningKeyRepository(db: Kysely<Database>): SigningKeyStore {
  return {
    async insert(key: SigningKeyRecord) {
      await db.insertInto('signing_keys').values(signingKeyToRow(key)).execute();
    },
    async list() {
      const rows = await db
        .selectFrom('signing_keys')
        .selectAll()
        .orderBy('created_at', 'desc')
        .orderBy('kid', 'desc')
        .execute();
      return rows.map(signingKeyFromRow);
    },
    async retireAllExcept(kids: readonly string[], at: number) {
      await db
        .updateTable('signing_keys')
        .set({ retired_at: at })
        .where('kid', 'not in', [...kids])
        .where('retired_at', 'is', null)
        .execute();
    },
    async revoke(kid: string, at: number) {
      // A key revoked twice keeps its first revocation time, and a retired one its retirement time.
      await db
        .updateTable('signing_keys')
        .set((eb) => ({ revoked_at: at, retired_at: eb.fn.coalesce('retired_at', eb.val(at)) }))
        .where('kid', '=', kid)
        .where('revoked_at', 'is', null)
        .execute();
      const found = await db
        .selectFrom('signing_keys')
        .select('kid')
        .where('kid', '=', kid)
        .executeTakeFirst();
      return found !== undefined;
    },
  };
}
