import type { Kysely } from 'kysely';
import type { Passkey, WebAuthnChallenge, WebAuthnPurpose } from '../../../core/model.js';
import type { PasskeyStore, PasskeyUse, WebAuthnChallengeStore } from '../../../core/ports.js';
import type { Database, PasskeysTable, WebAuthnChallengesTable } from '../schema.js';

const passkeyFromRow = (row: PasskeysTable): Passkey => ({
  id: row.id,
  userId: row.user_id,
  name: row.name,
  publicKey: row.public_key,
  signCount: Number(row.sign_count),
  transports: JSON.parse(row.transports) as string[],
  backupEligible: Number(row.backup_eligible) === 1,
  backedUp: Number(row.backed_up) === 1,
  createdAt: Number(row.created_at),
  lastUsedAt: row.last_used_at === null ? null : Number(row.last_used_at),
});

const challengeFromRow = (row: WebAuthnChallengesTable): WebAuthnChallenge => ({
  hash: row.hash,
  browserHash: row.browser_hash,
  purpose: row.purpose as WebAuthnPurpose,
  userId: row.user_id,
  createdAt: Number(row.created_at),
  expiresAt: Number(row.expires_at),
});

/** Passkeys (migration 0017, docs/decisions.md, decision 33). */
export function createPasskeyRepository(db: Kysely<Database>): PasskeyStore {
  return {
    async insert(passkey: Passkey) {
      // The credential id is the key: an id registered already (to anyone) stores nothing.
      const result = await db
        .insertInto('passkeys')
        .values({
          id: passkey.id,
          user_id: passkey.userId,
          name: passkey.name,
          public_key: passkey.publicKey,
          sign_count: passkey.signCount,
          transports: JSON.stringify(passkey.transports),
          backup_eligible: passkey.backupEligible ? 1 : 0,
          backed_up: passkey.backedUp ? 1 : 0,
          created_at: passkey.createdAt,
          last_used_at: passkey.lastUsedAt,
        })
        .onConflict((oc) => oc.column('id').doNothing())
        .executeTakeFirst();
      return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
    },
    async get(id: string) {
      const row = await db.selectFrom('passkeys').selectAll().where('id', '=', id).executeTakeFirst();
      return row && passkeyFromRow(row);
    },
    async listByUser(userId: string) {
      const rows = await db
        .selectFrom('passkeys')
        .selectAll()
        .where('user_id', '=', userId)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(passkeyFromRow);
    },
    async recordUse(id: string, previousSignCount: number, use: PasskeyUse) {
      // Compare-and-set on the counter: the row lock (PostgreSQL) or the single writer (SQLite) orders
      // racing assertions, and only the first still finds the counter it was checked against.
      const result = await db
        .updateTable('passkeys')
        .set({ sign_count: use.signCount, backed_up: use.backedUp ? 1 : 0, last_used_at: use.at })
        .where('id', '=', id)
        .where('sign_count', '=', previousSignCount)
        .executeTakeFirst();
      return (result.numUpdatedRows ?? 0n) > 0n;
    },
    async delete(userId: string, id: string) {
      const result = await db
        .deleteFrom('passkeys')
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return (result.numDeletedRows ?? 0n) > 0n;
    },
  };
}

/**
 * WebAuthn challenges. Consuming is one DELETE … RETURNING (SQLite 3.35+, PostgreSQL): of concurrent
 * callers in any processes exactly one deletes the row and so gets it. Expired rows are deleted by the
 * automatic purge (repositories/purge.ts).
 */
export function createWebAuthnChallengeRepository(db: Kysely<Database>): WebAuthnChallengeStore {
  return {
    async insert(challenge: WebAuthnChallenge) {
      await db
        .insertInto('webauthn_challenges')
        .values({
          hash: challenge.hash,
          browser_hash: challenge.browserHash,
          purpose: challenge.purpose,
          user_id: challenge.userId,
          created_at: challenge.createdAt,
          expires_at: challenge.expiresAt,
        })
        .execute();
    },
    async consume(hash: string, browserHash: string, purpose: WebAuthnPurpose, at: number) {
      const row = await db
        .deleteFrom('webauthn_challenges')
        .where('hash', '=', hash)
        .where('browser_hash', '=', browserHash)
        .where('purpose', '=', purpose)
        .where('expires_at', '>', at)
        .returningAll()
        .executeTakeFirst();
      return row && challengeFromRow(row);
    },
  };
}
