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
    async retireAllExcept(kid: string, at: number) {
      await db
        .updateTable('signing_keys')
        .set({ retired_at: at })
        .where('kid', '!=', kid)
        .where('retired_at', 'is', null)
        .execute();
    },
  };
}
