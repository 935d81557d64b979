import { inTransaction } from './transaction.js';
import type { Kysely } from 'kysely';
import type { SecondFactorStore } from '../../../core/ports.js';
import type { Database } from '../schema.js';

/**
 * Second factors (docs/decisions.md, decision 34). A code is accepted by one conditional UPDATE (the
 * step moves forward, the recovery code is unused), so every process sharing the store agrees.
 */
export function createSecondFactorRepository(db: Kysely<Database>): SecondFactorStore {
  return {
    async getTotp(userId) {
      const row = await db
        .selectFrom('totp_credentials')
        .selectAll()
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return (
        row && {
          userId: row.user_id,
          secretSealed: row.secret_sealed,
          createdAt: Number(row.created_at),
          confirmedAt: row.confirmed_at === null ? null : Number(row.confirmed_at),
          lastStep: row.last_step === null ? null : Number(row.last_step),
        }
      );
    },

    async beginTotp({ userId, secretSealed, createdAt }) {
      // A set-up begun before is replaced; a confirmed one is left alone (the update's WHERE).
      const result = await db
        .insertInto('totp_credentials')
        .values({ user_id: userId, secret_sealed: secretSealed, created_at: createdAt })
        .onConflict((oc) =>
          oc
            .column('user_id')
            .doUpdateSet({ secret_sealed: secretSealed, created_at: createdAt, last_step: null })
            .where('totp_credentials.confirmed_at', 'is', null),
        )
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
    },

    async useTotpStep(userId, step, at, confirm) {
      const result = await db
        .updateTable('totp_credentials')
        .set(confirm ? { last_step: step, confirmed_at: at } : { last_step: step })
        .where('user_id', '=', userId)
        .where('confirmed_at', confirm ? 'is' : 'is not', null)
        .where((eb) => eb.or([eb('last_step', 'is', null), eb('last_step', '<', step)]))
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async deleteTotp(userId) {
      const result = await db.deleteFrom('totp_credentials').where('user_id', '=', userId).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    async replaceRecoveryCodes(userId, hashes, at) {
      await inTransaction(db, async (trx) => {
        await trx.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
        if (hashes.length > 0) {
          await trx
            .insertInto('recovery_codes')
            .values(hashes.map((hash) => ({ user_id: userId, code_hash: hash, created_at: at })))
            .execute();
        }
      });
    },

    async useRecoveryCode(userId, hash, at) {
      const result = await db
        .updateTable('recovery_codes')
        .set({ used_at: at })
        .where('user_id', '=', userId)
        .where('code_hash', '=', hash)
        .where('used_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async countRecoveryCodes(userId) {
      const row = await db
        .selectFrom('recovery_codes')
        .select((eb) => eb.fn.countAll().as('count'))
        .where('user_id', '=', userId)
        .where('used_at', 'is', null)
        .executeTakeFirstOrThrow();
      return Number(row.count);
    },

    async deleteRecoveryCodes(userId) {
      const result = await db.deleteFrom('recovery_codes').where('user_id', '=', userId).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
