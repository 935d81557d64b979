import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { Migrator, sql } from 'kysely';
import pg from 'pg';
import type { Client } from '../../src/core/model.js';
import { sha256 } from '../../src/shared/crypto.js';
import { createSqlStorage, type SqlStorage } from '../../src/storage/sql/index.js';
import { migrationProvider } from '../../src/storage/sql/migrations/index.js';
import {
  backends,
  createTestStore,
  dropTestSchema,
  TEST_DATABASE_URL,
  withSchemaLock,
  type Backend,
  type TestStore,
} from '../helpers/backends.js';
import { runSql } from '../helpers/store-sql.js';

/**
 * The store's side of private_key_jwt: the used_jtis replay store (UsedJtiStore in core/ports.ts) and
 * migration 0009, which gives clients their method and keys and replaces 0001's check that a client
 * has a secret exactly when it is not public.
 */

const NOW = 1_800_000_000;

for (const backend of backends()) {
  describe(`used_jtis store (${backend})`, () => {
    let store: TestStore;
    beforeEach(async () => {
      store = await createTestStore(backend);
    });
    afterEach(async () => {
      await store.cleanup();
    });

    it('lets exactly one of many concurrent writers, on two handles, use a jti', async () => {
      const other = store.reopen();
      const attempts = Array.from({ length: 20 }, (_, i) =>
        (i % 2 === 0 ? store.storage : other).usedJtis.use('client-assertion:a', 'jti-1', NOW + 60, NOW),
      );
      assert.equal((await Promise.all(attempts)).filter(Boolean).length, 1);
      // The same jti in another namespace (another client, or DPoP) is another key.
      assert.equal(await other.usedJtis.use('client-assertion:b', 'jti-1', NOW + 60, NOW), true);
    });

    it('keeps a jti until it expires, then takes it again, and lets the purge delete it', async () => {
      const { usedJtis, purge } = store.storage;
      assert.equal(await usedJtis.use('n', 'j', NOW + 10, NOW), true);
      assert.equal(await usedJtis.use('n', 'j', NOW + 20, NOW + 9), false);
      assert.equal(await usedJtis.use('n', 'j', NOW + 20, NOW + 10), true);
      for (let i = 0; i < 50; i++) await usedJtis.use('n', `old-${i}`, NOW + 5, NOW);
      const cutoffs = { now: NOW + 21, revokedAccessTokensExpiredBefore: 0, grantsRevokedBefore: 0 };
      assert.equal(await purge.purgeBatch('used_jtis', cutoffs, 1000), 51);
      assert.equal(await usedJtis.use('n', 'j', NOW + 60, NOW + 21), true, 'a purged jti is new again');
    });
  });

  describe(`migration 0009-private-key-jwt on a store with clients and grants (${backend})`, () => {
    let storage: SqlStorage;
    let cleanup: () => Promise<void>;
    beforeEach(async () => {
      ({ storage, cleanup } = await storeBefore0009(backend));
    });
    afterEach(async () => {
      await cleanup();
    });

    it('keeps every client, grant and code; sets the method from public; and the new checks hold', async () => {
      const secretHash = sha256('s');
      await runSql(
        storage,
        sql`INSERT INTO clients (id, name, secret_hash, redirect_uris, grant_types, scopes, token_type, is_public,
          created_at, updated_at) VALUES
          ('conf', 'confidential', ${secretHash}, '["https://a.example/cb"]', '["authorization_code"]', '', 'bearer', 0, ${NOW}, ${NOW}),
          ('pub', 'public', NULL, '["https://a.example/cb"]', '["authorization_code"]', '', 'bearer', 1, ${NOW}, ${NOW})`,
      );
      await runSql(
        storage,
        sql`INSERT INTO users (id, username, password_hash, created_at, updated_at) VALUES ('u', 'alice', 'h', ${NOW}, ${NOW})`,
      );
      await runSql(
        storage,
        sql`INSERT INTO grants (id, client_id, user_id, scope, created_at) VALUES ('g1', 'conf', 'u', '', ${NOW}), ('g2', 'pub', 'u', '', ${NOW})`,
      );
      await runSql(
        storage,
        sql`INSERT INTO authorization_codes (hash, client_id, user_id, grant_id, redirect_uri, scope, created_at, expires_at)
          VALUES ('c1', 'conf', 'u', 'g1', 'https://a.example/cb', '', ${NOW}, ${NOW + 600})`,
      );

      const applied = await storage.migrate();
      assert.equal(applied[0], '0009-private-key-jwt', `applied ${applied.join(', ')}`);

      const conf = await storage.clients.get('conf');
      const pub = await storage.clients.get('pub');
      assert.deepEqual(
        [conf?.tokenEndpointAuthMethod, conf?.secretHash, conf?.jwks, conf?.jwksUri],
        ['client_secret_basic', secretHash, null, null],
      );
      assert.deepEqual([pub?.tokenEndpointAuthMethod, pub?.isPublic], ['none', true]);
      // Rebuilding SQLite's table cascaded nothing: the grants and the code are all there.
      assert.equal((await storage.grants.listByUser('u')).length, 2);
      assert.ok(await storage.codes.get('c1'));

      // A private_key_jwt client: no secret, not public.
      const keyed: Client = {
        ...(conf as Client),
        id: 'keyed',
        secretHash: null,
        tokenEndpointAuthMethod: 'private_key_jwt',
        jwksUri: 'https://keys.example/jwks',
      };
      await storage.clients.insert(keyed);
      assert.deepEqual(await storage.clients.get('keyed'), keyed);
      // What the checks refuse: a secret for it, a method at odds with public, no secret for a secret method.
      for (const bad of [
        { ...keyed, id: 'b1', secretHash },
        { ...keyed, id: 'b2', tokenEndpointAuthMethod: 'none' as const },
        { ...keyed, id: 'b3', tokenEndpointAuthMethod: 'client_secret_basic' as const },
        { ...(pub as Client), id: 'b4', tokenEndpointAuthMethod: 'client_secret_post' as const },
      ]) {
        await assert.rejects(storage.clients.insert(bad), `${bad.id} was stored`);
      }
      // Foreign keys are enforced again after the rebuild.
      await assert.rejects(
        runSql(
          storage,
          sql`INSERT INTO grants (id, client_id, user_id, scope, created_at) VALUES ('g3', 'ghost', 'u', '', ${NOW})`,
        ),
      );
      // And deleting a client still takes its grants with it.
      assert.equal(await storage.clients.delete('conf'), true);
      assert.equal((await storage.grants.listByUser('u')).length, 1);
    });
  });
}

/** A store migrated up to the migration before 0009, as a release before private_key_jwt left it. */
async function storeBefore0009(
  backend: Backend,
): Promise<{ storage: SqlStorage; cleanup: () => Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-0009-'));
  let schema: string | undefined;
  if (backend === 'postgres') {
    schema = `t_${randomBytes(6).toString('hex')}`;
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    await client.query(`CREATE SCHEMA ${schema}`);
    await client.end();
  }
  const storage = createSqlStorage({
    databaseUrl: backend === 'postgres' ? TEST_DATABASE_URL : undefined,
    dataDir,
    schema,
  });
  const cleanup = async () => {
    await storage.close();
    if (schema !== undefined) await dropTestSchema(schema);
    rmSync(dataDir, { recursive: true, force: true });
  };
  const all = await migrationProvider.getMigrations();
  const before = Object.fromEntries(Object.entries(all).filter(([name]) => name < '0009'));
  const migrate = async () => {
    const migrationTableSchema = schema;
    const { error } = await new Migrator({
      db: storage.db,
      provider: { getMigrations: async () => before },
      migrationTableSchema,
    }).migrateToLatest();
    if (error) throw error;
  };
  try {
    // The schema lock: see test/helpers/backends.ts (Kysely scans every schema's catalog).
    if (backend === 'postgres') await withSchemaLock('shared', migrate);
    else await migrate();
  } catch (error) {
    await cleanup();
    throw error;
  }
  // storage.migrate() scans the catalog too.
  if (backend === 'postgres') {
    const { migrate: latest } = storage;
    storage.migrate = () => withSchemaLock('shared', () => latest());
  }
  return { storage, cleanup };
}
