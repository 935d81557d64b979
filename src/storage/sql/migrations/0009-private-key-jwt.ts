import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Frozen in time: later changes go into new migration files, never here.
// RFC 7523 private_key_jwt client authentication, and the single-use identifiers it needs.

/** 0001's rule: a client has a secret exactly when it is not public. */
const OLD_CHECK = 'constraint "clients_secret_unless_public" check ((is_public = 1) = (secret_hash IS NULL))';
/**
 * Its successors: a client has a secret exactly when its method uses one (a private_key_jwt client is
 * neither public nor holds a secret), and it is public exactly when its method is none.
 */
const SECRET_BY_METHOD = sql`(secret_hash IS NULL) = (token_endpoint_auth_method IN ('none', 'private_key_jwt'))`;
const PUBLIC_IS_NONE = sql`(is_public = 1) = (token_endpoint_auth_method = 'none')`;

export async function up(db: Kysely<unknown>): Promise<void> {
  // RFC 7591 §2 token_endpoint_auth_method. Every client written before keeps working: a confidential
  // client is client_secret_basic (it still accepts client_secret_post too), a public one none.
  await db.schema
    .alterTable('clients')
    .addColumn('token_endpoint_auth_method', 'text', (c) => c.notNull().defaultTo('client_secret_basic'))
    .execute();
  await sql`UPDATE clients SET token_endpoint_auth_method = 'none' WHERE is_public = 1`.execute(db);
  // RFC 7591 §2 jwks (a JSON JWK Set) and jwks_uri: at most one is set, only for private_key_jwt.
  await db.schema.alterTable('clients').addColumn('jwks', 'text').execute();
  await db.schema.alterTable('clients').addColumn('jwks_uri', 'text').execute();
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    // In the migration's transaction, like every PostgreSQL migration.
    await db.schema.alterTable('clients').dropConstraint('clients_secret_unless_public').execute();
    await db.schema
      .alterTable('clients')
      .addCheckConstraint('clients_secret_by_method', SECRET_BY_METHOD)
      .execute();
    await db.schema
      .alterTable('clients')
      .addCheckConstraint('clients_public_is_none', PUBLIC_IS_NONE)
      .execute();
  } else {
    await replaceSqliteCheck(db, OLD_CHECK, newChecks(db));
  }

  // Identifiers accepted once (a client assertion's jti, RFC 7523 §3 item 7), per namespace, kept until
  // the token that carried them expires. The primary key makes "insert if absent" atomic in the shared
  // store, so a replay is refused by every process.
  await db.schema
    .createTable('used_jtis')
    .addColumn('namespace', 'text', (c) => c.notNull())
    .addColumn('jti', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('used_jtis_pkey', ['namespace', 'jti'])
    .execute();
  // The purge deletes by expiry (repositories/purge.ts): indexed so a batch never scans.
  await db.schema.createIndex('used_jtis_by_expiry').on('used_jtis').column('expires_at').execute();
}

/**
 * SQLite cannot drop a constraint: the table is made again with the new one (SQLite's own procedure
 * for the schema changes ALTER TABLE cannot make: create, copy, drop, rename), from its own stored
 * definition, so every column any migration gave it comes along. Foreign keys are off meanwhile, or dropping the old table would
 * delete every grant, code and token by their ON DELETE CASCADE; one transaction, so a crash leaves
 * the old table whole. Kysely runs SQLite migrations outside a transaction, which is what lets the
 * pragma take effect.
 */
async function replaceSqliteCheck(db: Kysely<unknown>, from: string, to: string): Promise<void> {
  const { rows } = await sql<{
    sql: string;
  }>`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'clients'`.execute(db);
  const definition = rows[0]?.sql ?? '';
  if (!definition.startsWith('CREATE TABLE "clients" (') || !definition.includes(from)) {
    throw new Error(
      '0009-private-key-jwt: the clients table does not have the check this migration replaces',
    );
  }
  const rebuilt = definition
    .replace('CREATE TABLE "clients" (', 'CREATE TABLE "clients_0009" (')
    .replace(from, to);
  const { rows: indexes } = await sql<{
    sql: string;
  }>`SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'clients' AND sql IS NOT NULL`.execute(
    db,
  );
  await sql`PRAGMA foreign_keys = OFF`.execute(db);
  try {
    await sql`BEGIN IMMEDIATE`.execute(db);
    try {
      await sql.raw(rebuilt).execute(db);
      await sql`INSERT INTO clients_0009 SELECT * FROM clients`.execute(db);
      await sql`DROP TABLE clients`.execute(db);
      await sql`ALTER TABLE clients_0009 RENAME TO clients`.execute(db);
      for (const index of indexes) await sql.raw(index.sql).execute(db);
      const { rows: broken } = await sql`PRAGMA foreign_key_check`.execute(db);
      if (broken.length > 0) throw new Error('0009-private-key-jwt: foreign keys broken by the rebuild');
      await sql`COMMIT`.execute(db);
    } catch (error) {
      await sql`ROLLBACK`.execute(db);
      throw error;
    }
  } finally {
    await sql`PRAGMA foreign_keys = ON`.execute(db);
  }
}

/** The two checks as the SQLite table definition spells them. */
const newChecks = (db: Kysely<unknown>) =>
  `constraint "clients_secret_by_method" check (${SECRET_BY_METHOD.compile(db).sql}), ` +
  `constraint "clients_public_is_none" check (${PUBLIC_IS_NONE.compile(db).sql})`;

/** Back to 0007's schema; refused by 0001's check while a private_key_jwt client exists. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('used_jtis').execute();
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await db.schema.alterTable('clients').dropConstraint('clients_public_is_none').execute();
    await db.schema.alterTable('clients').dropConstraint('clients_secret_by_method').execute();
    await db.schema
      .alterTable('clients')
      .addCheckConstraint('clients_secret_unless_public', sql`(is_public = 1) = (secret_hash IS NULL)`)
      .execute();
  } else {
    await replaceSqliteCheck(db, newChecks(db), OLD_CHECK);
  }
  for (const column of ['jwks_uri', 'jwks', 'token_endpoint_auth_method']) {
    await db.schema.alterTable('clients').dropColumn(column).execute();
  }
}
