import type BetterSqlite3 from 'better-sqlite3';
import type { QueryEvent } from './query-observer.js';
import type { AuthorizationCodesTable, ClientsTable, GrantsTable, UsersTable } from './schema.js';

/** A code row joined with the columns of its grant, as one statement reads them. */
export interface CodeWithGrantRow extends AuthorizationCodesTable {
  grant_client_id: string;
  grant_user_id: string;
  grant_scope: string;
  grant_created_at: number;
  grant_expires_at: number | null;
  grant_revoked_at: number | null;
}

/** The columns `CodeWithGrantRow` adds, in SQL; shared by the Kysely query and the prepared one. */
export const GRANT_COLUMNS_OF_CODE = [
  'g.client_id as grant_client_id',
  'g.user_id as grant_user_id',
  'g.scope as grant_scope',
  'g.created_at as grant_created_at',
  'g.expires_at as grant_expires_at',
  'g.revoked_at as grant_revoked_at',
] as const;

/**
 * The statements of the authorization-code flow and of client authentication, prepared once on
 * SQLite. Kysely builds, compiles and schedules every query on every call (about 9 us a read here,
 * more than better-sqlite3 takes to run the read), and these run on every /authorize and /token.
 * Every other query, and every query on PostgreSQL, goes through Kysely; the storage contract tests
 * hold both paths to the same behaviour.
 */
export interface SqliteHotPath {
  /**
   * False while a Kysely transaction is open on the connection (it spans awaits): a statement run
   * now would join that transaction, see its uncommitted rows and be undone by its rollback. The
   * callers then take the Kysely path, which waits for the transaction to end.
   */
  readonly usable: boolean;
  clientById(id: string): ClientsTable | undefined;
  signedInUser(sessionHash: string, at: number): UsersTable | undefined;
  grantsByUser(userId: string): GrantsTable[];
  codeWithGrant(hash: string): CodeWithGrantRow | undefined;
  insertCode(row: AuthorizationCodesTable): void;
  /** Marks the code consumed unless it already was; the row as consumed, or undefined. */
  consumeCode(hash: string, at: number): AuthorizationCodesTable | undefined;
}

const SQL = {
  clientById: 'SELECT * FROM clients WHERE id = ?',
  signedInUser:
    'SELECT u.* FROM browser_sessions AS s INNER JOIN users AS u ON u.id = s.user_id ' +
    'WHERE s.hash = ? AND s.expires_at > ?',
  grantsByUser: 'SELECT * FROM grants WHERE user_id = ? ORDER BY created_at DESC',
  codeWithGrant:
    `SELECT c.*, ${GRANT_COLUMNS_OF_CODE.join(', ')} FROM authorization_codes AS c ` +
    'INNER JOIN grants AS g ON g.id = c.grant_id WHERE c.hash = ?',
  insertCode:
    'INSERT INTO authorization_codes (hash, client_id, user_id, grant_id, redirect_uri, scope, ' +
    'code_challenge, code_challenge_method, created_at, expires_at, consumed_at) VALUES (@hash, ' +
    '@client_id, @user_id, @grant_id, @redirect_uri, @scope, @code_challenge, @code_challenge_method, ' +
    '@created_at, @expires_at, @consumed_at)',
  consumeCode:
    'UPDATE authorization_codes SET consumed_at = ? WHERE hash = ? AND consumed_at IS NULL RETURNING *',
} as const;

type Name = keyof typeof SQL;
const OPERATION: Record<Name, string> = {
  clientById: 'select',
  signedInUser: 'select',
  grantsByUser: 'select',
  codeWithGrant: 'select',
  insertCode: 'insert',
  consumeCode: 'update',
};

export function createSqliteHotPath(
  raw: BetterSqlite3.Database,
  emit: (event: QueryEvent) => void,
): SqliteHotPath {
  const statements = new Map<Name, BetterSqlite3.Statement>();
  // Prepared on first use: the tables exist only once migrations have run.
  const statement = (name: Name) => {
    let prepared = statements.get(name);
    if (prepared === undefined) {
      prepared = raw.prepare(SQL[name]);
      statements.set(name, prepared);
    }
    return prepared;
  };
  // Timed and reported like Kysely's statements, so metrics count these too.
  function run<T>(name: Name, execute: (prepared: BetterSqlite3.Statement) => T): T {
    const started = performance.now();
    let failed = true;
    try {
      const result = execute(statement(name));
      failed = false;
      return result;
    } finally {
      emit({ operation: OPERATION[name], durationMs: performance.now() - started, failed });
    }
  }
  return {
    get usable() {
      return !raw.inTransaction;
    },
    clientById: (id) => run('clientById', (s) => s.get(id) as ClientsTable | undefined),
    signedInUser: (hash, at) => run('signedInUser', (s) => s.get(hash, at) as UsersTable | undefined),
    grantsByUser: (userId) => run('grantsByUser', (s) => s.all(userId) as GrantsTable[]),
    codeWithGrant: (hash) => run('codeWithGrant', (s) => s.get(hash) as CodeWithGrantRow | undefined),
    insertCode: (row) => {
      run('insertCode', (s) => s.run(row));
    },
    consumeCode: (hash, at) =>
      run('consumeCode', (s) => s.get(at, hash) as AuthorizationCodesTable | undefined),
  };
}
