import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { COMMANDS, GLOBAL_FLAGS } from '../src/cli/command-table.js';
import { settingsFromFlags } from '../src/cli/context.js';
import { ConfigError, loadConfig, SETTINGS, unknownVariableWarnings } from '../src/config.js';
import { testEngine } from './helpers/fakes/test-engine.js';
import { currentSettingsDoc, REGENERATE, SETTINGS_DOC, withSettingsTable } from './helpers/settings-doc.js';

const SECRET = Buffer.alloc(32, 1).toString('base64url');
const rows = Object.entries(SETTINGS);

describe('the settings table (src/config/settings.ts)', () => {
  it('docs/configuration.md shows the table as it is', async () => {
    const page = await currentSettingsDoc();
    assert.ok(
      (await withSettingsTable(page)) === page,
      `${SETTINGS_DOC} does not show the settings table of src/config/settings.ts: run "${REGENERATE}"`,
    );
  });

  it('declares each variable and flag once, and every variable it declares is known', () => {
    const variables = rows.flatMap(([, row]) => row.variables);
    assert.deepEqual(
      variables.filter((name, i) => variables.indexOf(name) !== i),
      [],
    );
    const flags = rows.flatMap(([, row]) => (row.flag === undefined ? [] : [row.flag]));
    assert.deepEqual(
      flags.filter((name, i) => flags.indexOf(name) !== i),
      [],
    );
    assert.deepEqual(unknownVariableWarnings(Object.fromEntries(variables.map((name) => [name, '']))), []);
  });

  it("serve's and check's flags are the table's, and set the settings their rows name", () => {
    const settingFlags = rows.flatMap(([, row]) => (row.flag === undefined ? [] : [row.flag])).sort();
    const serve = Object.keys({ ...GLOBAL_FLAGS, ...COMMANDS.serve.flags });
    const check = Object.keys({ ...GLOBAL_FLAGS, ...COMMANDS.check.flags });
    const notSettings = ['help', 'json', 'workers'];
    assert.deepEqual(serve.filter((flag) => !notSettings.includes(flag)).sort(), settingFlags);
    assert.deepEqual(check.filter((flag) => !notSettings.includes(flag)).sort(), settingFlags);
    assert.deepEqual(
      settingsFromFlags(
        {
          'data-dir': '/srv/gatehouse',
          port: '8080',
          'base-path': '/auth',
          'trust-proxy': true,
          workers: '4',
          json: true,
        },
        { ...GLOBAL_FLAGS, ...COMMANDS.serve.flags },
      ),
      { dataDir: '/srv/gatehouse', port: 8080, basePath: '/auth', trustProxy: true },
    );
    // Every other command takes only the store's two.
    assert.deepEqual(settingsFromFlags({ 'data-dir': '/d', port: '1' }, GLOBAL_FLAGS), { dataDir: '/d' });
  });

  it('a malformed secret is refused without repeating it', () => {
    const attempts: NodeJS.ProcessEnv[] = [
      { GATEHOUSE_SECRET: 'too-short-to-be-a-secret' },
      { GATEHOUSE_SECRET: SECRET, DATABASE_URL: 'mysql://admin:hunter2@db.example/gatehouse' },
    ];
    for (const env of attempts) {
      assert.throws(
        () => loadConfig({ dataDir: '/nonexistent' }, env),
        (error: unknown) =>
          error instanceof ConfigError &&
          !error.message.includes('too-short') &&
          !error.message.includes('hunter2'),
      );
    }
  });

  it('the rules http advertises from them are asked of the engine, which holds them', async (t) => {
    for (const [overrides, expected] of [
      [{}, [false, false, 'off']],
      [
        { allowPlainPkce: true, requirePushedAuthorizationRequests: true, dynamicRegistration: 'open' },
        [true, true, 'open'],
      ],
    ] as const) {
      const { engine, close } = await testEngine(overrides);
      t.after(close);
      assert.deepEqual(
        [
          engine.authorization.allowsPlainPkce,
          engine.authorization.requiresPushedRequests,
          engine.registration.policy,
        ],
        expected,
      );
    }
  });
});
