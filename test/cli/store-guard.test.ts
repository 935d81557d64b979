import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { migrationProvider } from '../../src/storage/sql/migrations/index.js';
import { backends } from '../helpers/backends.js';
import { runSql, undoMigration } from '../helpers/store-sql.js';
import { assertOk, assertRefused, cliStore, newSecret, runCli } from '../helpers/cli.js';

// The newest migration, whichever it is: undone below to leave a store one migration behind.
const MIGRATIONS = await migrationProvider.getMigrations();
const LAST_MIGRATION = Object.keys(MIGRATIONS).sort().at(-1)!;
const undoLastMigration = MIGRATIONS[LAST_MIGRATION]!.down!;

describe('only serve, init and migrate create or migrate a store', () => {
  it('every other command refuses a missing SQLite store, exit 1, and creates nothing', async (t) => {
    const base = mkdtempSync(join(tmpdir(), 'gatehouse-guard-'));
    t.after(() => rmSync(base, { recursive: true, force: true }));
    const missing = join(base, 'nonexistent', 'x');
    const commands = [
      ['clients', 'list'],
      ['users', 'list'],
      ['scopes', 'list'],
      ['keys', 'rotate'],
      ['grants', 'list', '--client', 'c1'],
    ];
    const results = await Promise.all([
      ...commands.map((command) => runCli([...command, '--data-dir', missing])),
      // The literal path of the report, and the global option before the command.
      runCli(['--data-dir', '/nonexistent/x', 'clients', 'list']),
    ]);
    for (const result of results) {
      assertRefused(result, 1, /no Gatehouse store at .*gatehouse\.db: run "gatehouse init"/);
      assert.equal(result.stdout, '', 'no "No clients." or other output');
    }
    assert.deepEqual(readdirSync(base), [], 'no directory, store or secret was created');
    assert.ok(!existsSync('/nonexistent/x'));
  });

  for (const backend of backends()) {
    it(`${backend}: a store with pending migrations is refused ("run gatehouse migrate") and left as it is`, async (t) => {
      const store = await cliStore(backend);
      t.after(() => store.cleanup());
      const secret = newSecret();
      assertOk(await store.cli(['init'], { secret }));
      const storage = store.open();
      // As a store last migrated by an older Gatehouse.
      await undoMigration(storage, undoLastMigration);
      await runSql(storage, sql`DELETE FROM kysely_migration WHERE name = ${LAST_MIGRATION}`);
      const applied = async () =>
        (await runSql(storage, sql<{ name: string }>`SELECT name FROM kysely_migration`)).map((r) => r.name);

      const [list, rotate] = await Promise.all([
        store.cli(['clients', 'list'], { secret }),
        store.cli(['keys', 'rotate', '--json'], { secret }),
      ]);
      assertRefused(list, 1, new RegExp(`pending: ${LAST_MIGRATION}\\): run "gatehouse migrate"`));
      assert.equal(JSON.parse(rotate.stderr.trim()).error, 'migrations_pending');
      assert.ok(!(await applied()).includes(LAST_MIGRATION), 'the command did not migrate the store');
      // The first start's keys: ES256 for access tokens, RS256 for ID tokens; rotate added none.
      assert.equal((await storage.signingKeys.list()).length, 2);

      const migrated = await store.cli(['migrate', '--json'], { secret });
      assertOk(migrated);
      assert.deepEqual(JSON.parse(migrated.stdout), { applied: [LAST_MIGRATION] });
      assertOk(await store.cli(['clients', 'list'], { secret }));
    });
  }

  it(
    'PostgreSQL: a database without a Gatehouse schema is refused, and nothing is created in it',
    {
      skip: !backends().includes('postgres'),
    },
    async (t) => {
      const store = await cliStore('postgres');
      t.after(() => store.cleanup());
      const result = await store.cli(['users', 'list', '--json'], { secret: newSecret() });
      assert.equal(result.code, 1);
      const error = JSON.parse(result.stderr.trim()) as { error: string; message: string };
      assert.equal(error.error, 'store_missing');
      assert.match(error.message, /run "gatehouse init"/);
      const rows = await runSql(
        store.open(),
        sql<{
          n: number;
        }>`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = current_schema()`,
      );
      assert.equal(rows[0]?.n, 0);
    },
  );
});
