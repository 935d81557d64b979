import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { createGatehouse } from '../../src/compose/gatehouse.js';
import {
  recordServerSecretCheck,
  SecretMismatchError,
  verifyServerSecret,
} from '../../src/compose/secret-check.js';
import { loadConfig } from '../../src/config.js';
import { ManualClock } from '../../src/shared/clock.js';
import type { SqlStorage } from '../../src/storage/sql/index.js';
import { backends, createTestStore } from '../helpers/backends.js';
import { runSql } from '../helpers/store-sql.js';
import { assertOk, assertRefused, cliStore, newSecret, freePort } from '../helpers/cli.js';

const MISMATCH =
  /the secret does not open this database's signing keys: set GATEHOUSE_SECRET or GATEHOUSE_SECRET_FILE/;

/** The keys a first start makes: the access tokens' (ES256) and the ID tokens' RS256 key. */
const FIRST_KEYS = 2;

async function keyCount(storage: SqlStorage): Promise<number> {
  return (await storage.signingKeys.list()).length;
}

async function checkRows(storage: SqlStorage): Promise<{ check_value: string }[]> {
  return runSql(storage, sql<{ check_value: string }>`SELECT check_value FROM server_secret_check`);
}

for (const backend of backends()) {
  describe(`server secret check (${backend})`, () => {
    it('a start records a check value (not the secret); another secret is refused before anything is written', async (t) => {
      const store = await createTestStore(backend);
      t.after(() => store.cleanup());
      const secretA = Buffer.alloc(32, 1);
      const secretB = Buffer.alloc(32, 2);
      const clock = new ManualClock();
      const config = (secret: Buffer) =>
        loadConfig(
          { dataDir: store.dataDir, databaseUrl: store.databaseUrl, secret, logLevel: 'silent', port: 0 },
          {},
        );
      const first = await createGatehouse(config(secretA), { storage: store.storage, clock, logger: false });
      await first.app.close();
      const rows = await checkRows(store.storage);
      assert.equal(rows.length, 1);
      const stored = rows[0]?.check_value ?? '';
      for (const encoding of ['base64url', 'base64', 'hex'] as const) {
        assert.ok(!stored.includes(secretA.toString(encoding)), 'the secret itself is never stored');
      }
      assert.equal(await keyCount(store.storage), FIRST_KEYS);
      const scopesBefore = await store.storage.scopes.list();

      await assert.rejects(
        createGatehouse(config(secretB), { storage: store.storage, clock, logger: false }),
        (error: unknown) => error instanceof SecretMismatchError && MISMATCH.test(error.message),
      );
      assert.equal(await keyCount(store.storage), FIRST_KEYS, 'no key was added');
      assert.deepEqual(await checkRows(store.storage), rows, 'the check value is unchanged');
      assert.deepEqual(await store.storage.scopes.list(), scopesBefore);
      assert.equal(await verifyServerSecret(store.storage, secretA), 'check-value');
    });

    it('a store without a check value is checked by unsealing its active key, then gets one', async (t) => {
      const store = await createTestStore(backend);
      t.after(() => store.cleanup());
      const secretA = Buffer.alloc(32, 3);
      const clock = new ManualClock();
      const config = loadConfig(
        {
          dataDir: store.dataDir,
          databaseUrl: store.databaseUrl,
          secret: secretA,
          logLevel: 'silent',
          port: 0,
        },
        {},
      );
      const gatehouse = await createGatehouse(config, { storage: store.storage, clock, logger: false });
      await gatehouse.app.close();
      // As a store made before the check value existed.
      await runSql(store.storage, sql`DELETE FROM server_secret_check`);

      await assert.rejects(verifyServerSecret(store.storage, Buffer.alloc(32, 4)), SecretMismatchError);
      assert.deepEqual(await checkRows(store.storage), [], 'a refusal writes nothing');
      assert.equal(await verifyServerSecret(store.storage, secretA), 'signing-key');
      await recordServerSecretCheck(store.storage, secretA, clock);
      assert.equal(await verifyServerSecret(store.storage, secretA), 'check-value');
    });

    it('of two first starts with different secrets on an empty store, the second is refused', async (t) => {
      const store = await createTestStore(backend);
      t.after(() => store.cleanup());
      const clock = new ManualClock();
      assert.equal(await verifyServerSecret(store.storage, Buffer.alloc(32, 5)), 'new-store');
      assert.equal(await verifyServerSecret(store.storage, Buffer.alloc(32, 6)), 'new-store');
      await recordServerSecretCheck(store.storage, Buffer.alloc(32, 5), clock);
      await assert.rejects(
        recordServerSecretCheck(store.storage, Buffer.alloc(32, 6), clock),
        SecretMismatchError,
      );
    });

    it('the CLI: serve, keys rotate and clients list with the wrong secret are refused, naming GATEHOUSE_SECRET; nothing is written', async (t) => {
      const store = await cliStore(backend);
      t.after(() => store.cleanup());
      const secretA = newSecret();
      const secretB = newSecret();
      assertOk(await store.cli(['init'], { secret: secretA }));
      const storage = store.open();
      assert.equal(await keyCount(storage), FIRST_KEYS);
      const rowsBefore = await checkRows(storage);

      const port = await freePort();
      const [serve, rotate, list] = await Promise.all([
        store.cli(['serve', '--port', String(port), '--host', '127.0.0.1'], { secret: secretB }),
        store.cli(['keys', 'rotate'], { secret: secretB }),
        store.cli(['clients', 'list', '--json'], { secret: secretB }),
      ]);
      assertRefused(serve, 1, MISMATCH);
      assertRefused(rotate, 1, MISMATCH);
      assert.equal(list.code, 1);
      assert.deepEqual(JSON.parse(list.stderr.trim()), {
        error: 'secret_mismatch',
        message:
          "the secret does not open this database's signing keys: set GATEHOUSE_SECRET or " +
          'GATEHOUSE_SECRET_FILE to the secret the deployment was created with',
      });
      assert.ok(!/Unsupported state/.test(serve.stderr + rotate.stderr));
      assert.equal(await keyCount(storage), FIRST_KEYS, 'keys rotate with the wrong secret added no key');
      assert.deepEqual(await checkRows(storage), rowsBefore);

      // A store made before the check value: the wrong secret is found out by unsealing the key.
      await runSql(storage, sql`DELETE FROM server_secret_check`);
      assertRefused(await store.cli(['keys', 'rotate'], { secret: secretB }), 1, MISMATCH);
      assert.equal(await keyCount(storage), FIRST_KEYS);
      assert.deepEqual(await checkRows(storage), [], 'nothing recorded for the wrong secret');

      // The right secret still works, and records the check value again.
      assertOk(await store.cli(['keys', 'rotate'], { secret: secretA }));
      assert.equal(await keyCount(storage), 2 * FIRST_KEYS);
      assert.equal((await checkRows(storage)).length, 1);
    });
  });
}

describe('no secret generated for a store that does not ask for one', () => {
  it(
    'PostgreSQL without GATEHOUSE_SECRET(_FILE): serve and init refuse, saying to set one; no secret file, no tables',
    {
      skip: !backends().includes('postgres'),
    },
    async (t) => {
      const store = await cliStore('postgres');
      t.after(() => store.cleanup());
      const port = await freePort();
      const [serve, init] = await Promise.all([
        store.cli(['serve', '--port', String(port), '--host', '127.0.0.1']),
        store.cli(['init']),
      ]);
      for (const result of [serve, init])
        assertRefused(result, 1, /PostgreSQL.*set GATEHOUSE_SECRET or GATEHOUSE_SECRET_FILE/);
      assert.ok(!existsSync(join(store.dataDir, 'secret')), 'no local secret was generated');
      const rows = await runSql(
        store.open(),
        sql<{
          n: number;
        }>`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = current_schema()`,
      );
      assert.equal(rows[0]?.n, 0, 'nothing was created in the database');
    },
  );

  it('SQLite: a command on an existing store whose secret file is gone refuses, and generates none', async (t) => {
    const store = await cliStore('sqlite');
    t.after(() => store.cleanup());
    assertOk(await store.cli(['init']));
    const secretFile = join(store.dataDir, 'secret');
    assert.equal(
      readFileSync(secretFile, 'utf8').trim().length >= 43,
      true,
      'init generated a development secret',
    );
    rmSync(secretFile);
    const [list, serve] = await Promise.all([
      store.cli(['clients', 'list']),
      store.cli(['serve', '--port', String(await freePort()), '--host', '127.0.0.1']),
    ]);
    assertRefused(list, 1, /no server secret: set GATEHOUSE_SECRET or GATEHOUSE_SECRET_FILE/);
    assertRefused(serve, 1, /no server secret: set GATEHOUSE_SECRET or GATEHOUSE_SECRET_FILE/);
    assert.ok(!existsSync(secretFile), 'no new secret was generated beside the existing store');
  });
});
