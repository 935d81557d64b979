import type { Kysely } from 'kysely';
import type { AuthorizationCode } from '../../../core/model.js';
import type { AuthorizationCodeStore } from '../../../core/ports.js';
import type { AuthorizationCodesTable, Database } from '../schema.js';
import { preparedQuery, type RequestStatements } from '../prepared-query.js';
import { codeFromRow, codeToRow, codeWithGrantFromRow } from './mappers.js';

/** The grant's columns read with a code (`CodeWithGrantRow`). */
const GRANT_COLUMNS_OF_CODE = [
  'g.client_id as grant_client_id',
  'g.user_id as grant_user_id',
  'g.scope as grant_scope',
  'g.created_at as grant_created_at',
  'g.expires_at as grant_expires_at',
  'g.revoked_at as grant_revoked_at',
] as const;

/** `statements`: the code flow's statements as prepared queries (every /authorize and /token). */
export function createAuthorizationCodeRepository(
  db: Kysely<Database>,
  statements?: RequestStatements,
): AuthorizationCodeStore {
  const insert = preparedQuery(statements, (row: AuthorizationCodesTable) =>
    db.insertInto('authorization_codes').values(row),
  );
  // One statement: the row lock (PostgreSQL) or the single writer (SQLite) lets exactly one
  // concurrent redemption see consumed_at IS NULL.
  const consume = preparedQuery(statements, ({ hash, at }: { hash: string; at: number }) =>
    db
      .updateTable('authorization_codes')
      .set({ consumed_at: at })
      .where('hash', '=', hash)
      .where('consumed_at', 'is', null)
      .returningAll(),
  );
  const withGrant = preparedQuery(statements, ({ hash }: { hash: string }) =>
    db
      .selectFrom('authorization_codes as c')
      .innerJoin('grants as g', 'g.id', 'c.grant_id')
      .selectAll('c')
      .select(GRANT_COLUMNS_OF_CODE)
      .where('c.hash', '=', hash),
  );
  return {
    async insert(code: AuthorizationCode) {
      await insert.run(codeToRow(code));
    },
    async consume(hash: string, at: number) {
      const row = await consume.first({ hash, at });
      return row && codeFromRow(row);
    },
    async get(hash: string) {
      const row = await db
        .selectFrom('authorization_codes')
        .selectAll()
        .where('hash', '=', hash)
        .executeTakeFirst();
      return row && codeFromRow(row);
    },
    async getWithGrant(hash: string) {
      const row = await withGrant.first({ hash });
      return row && codeWithGrantFromRow(row);
    },
  };
}
