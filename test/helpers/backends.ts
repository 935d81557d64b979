import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createSqlStorage, type SqlStorage } from '../../src/storage/sql/index.js';

export type Backend = 'sqlite' | 'postgres';

/** PostgreSQL runs only where this is set; CI always sets it (see .ci/run). */
export const TEST_DATABASE_URL = process.env.GATEHOUSE_TEST_DATABASE_URL || undefined;

/** The backends a suite runs on: SQLite always, PostgreSQL when configured. */
export function backends(): Backend[] {
  return TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];
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
export async function createTestStore(backend: Backend): Promise<TestStore> {
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
  }
  const open = () => createSqlStorage({ databaseUrl, dataDir, schema });
  const storage = open();
  await storage.migrate();
  const opened: SqlStorage[] = [storage];
  return {
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
    async cleanup() {
      for (const handle of opened) await handle.close().catch(() => undefined);
      if (schema !== undefined) {
        const client = new pg.Client({ connectionString: databaseUrl });
        await client.connect();
        await client.query(`DROP SCHEMA ${schema} CASCADE`);
        await client.end();
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
