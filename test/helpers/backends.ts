import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import {
  createSqlStorage,
  sqliteFilename,
  type SqlStorage,
  type SqlStorageOptions,
} from '../../src/storage/sql/index.js';

export type Backend = 'sqlite' | 'postgres';

/** PostgreSQL runs only where this is set; CI always sets it (see .ci/run). */
export const TEST_DATABASE_URL = process.env.GATEHOUSE_TEST_DATABASE_URL || undefined;

/** The backends a suite runs on: SQLite always, PostgreSQL when configured. */
export function backends(): Backend[] {
  return TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];
}

/**
 * Every PostgreSQL suite shares one database, and the test files run in parallel processes. Kysely's
 * Migrator (storage.migrate(), pendingMigrations()) scans the catalog of every schema in the database,
 * resolving each schema by name as it goes, so a schema another process drops meanwhile fails that scan
 * with 'schema "t_…" does not exist' (seen as a suite whose set-up failed under load). Migrations hold
 * this lock shared, schema drops exclusively: drops wait for scans in progress, scans for drops.
 */
const SCHEMA_LOCK = 'gatehouse test schemas';

/** Runs `run` holding the cross-process schema lock; the lock goes with the session at the end. */
export async function withSchemaLock<T>(
  mode: 'shared' | 'exclusive',
  run: (client: pg.Client) => Promise<T>,
): Promise<T> {
  if (!TEST_DATABASE_URL) throw new Error('GATEHOUSE_TEST_DATABASE_URL is not set');
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    const lock = mode === 'shared' ? 'pg_advisory_lock_shared' : 'pg_advisory_lock';
    await client.query(`SELECT ${lock}(hashtext($1))`, [SCHEMA_LOCK]);
    return await run(client);
  } finally {
    await client.end();
  }
}

/** Drops a test schema (and everything in it) once no migration anywhere is scanning the catalog. */
export async function dropTestSchema(schema: string): Promise<void> {
  await withSchemaLock('exclusive', async (client) => {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  });
}

/** A PostgreSQL store whose catalog scans (migrations) hold the schema lock; see SCHEMA_LOCK. */
function lockingMigrations(storage: SqlStorage): SqlStorage {
  const { migrate, pendingMigrations } = storage;
  storage.migrate = () => withSchemaLock('shared', () => migrate());
  storage.pendingMigrations = () => withSchemaLock('shared', () => pendingMigrations());
  return storage;
}

/**
 * A migrated, empty SQLite store made once per test process (by the store's own migrate()), closed, and
 * copied for each new SQLite test store: a copy is a file write, where migrating anew is a few hundred
 * statements and a commit per migration. The copy is what migrate() would have made; createTestStore
 * still runs migrate() on it, which finds nothing to do.
 */
let sqliteTemplate: Promise<string> | undefined;

function migratedSqliteTemplate(): Promise<string> {
  sqliteTemplate ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-test-template-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    const storage = createSqlStorage({ databaseUrl: undefined, dataDir: dir });
    try {
      await storage.migrate();
    } finally {
      // Closing the last connection checkpoints the write-ahead log into the file and removes it.
      await storage.close();
    }
    const file = sqliteFilename(undefined, dir);
    if (existsSync(`${file}-wal`)) throw new Error('the SQLite template kept a write-ahead log');
    return file;
  })();
  return sqliteTemplate;
}

export interface TestStore {
  backend: Backend;
  dataDir: string;
  databaseUrl: string | undefined;
  schema: string | undefined;
  storage: SqlStorage;
  /** Opens another storage handle on the same database (a second process's view). */
  reopen(): SqlStorage;
  cleanup(): Promise<void>;
}

/** A fresh, migrated store: a temp SQLite file, or a new PostgreSQL schema dropped afterwards. */
export async function createTestStore(
  backend: Backend,
  options: Pick<SqlStorageOptions, 'nowMs'> = {},
): Promise<TestStore> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-test-'));
  let schema: string | undefined;
  let databaseUrl: string | undefined;
  if (backend === 'postgres') {
    if (!TEST_DATABASE_URL) throw new Error('GATEHOUSE_TEST_DATABASE_URL is not set');
    databaseUrl = TEST_DATABASE_URL;
    schema = `t_${randomBytes(6).toString('hex')}`;
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query(`CREATE SCHEMA ${schema}`);
    await client.end();
  } else {
    // Keeps the file's mode (0600, as the store makes it).
    copyFileSync(await migratedSqliteTemplate(), sqliteFilename(undefined, dataDir));
  }
  const open = () => {
    const storage = createSqlStorage({ databaseUrl, dataDir, schema, ...options });
    return backend === 'postgres' ? lockingMigrations(storage) : storage;
  };
  const storage = open();
  const opened: SqlStorage[] = [storage];
  const store: TestStore = {
    backend,
    dataDir,
    databaseUrl,
    schema,
    storage,
    reopen() {
      const another = open();
      opened.push(another);
      return another;
    },
    /** Closes every handle (each waits for its statements in flight), then drops the schema. */
    async cleanup() {
      for (const handle of opened.splice(0)) await handle.close().catch(() => undefined);
      if (schema !== undefined) await dropTestSchema(schema);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  try {
    await storage.migrate();
  } catch (error) {
    // A half-made store is not left behind in the shared database.
    await store.cleanup();
    throw error;
  }
  return store;
}
