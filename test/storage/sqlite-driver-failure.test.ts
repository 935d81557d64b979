import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { sqliteDriverFailure } from '../../src/storage/sql/dialects/sqlite-connection.js';

// The loaders better-sqlite3 itself uses: `bindings` (its dependency) and Node's addon loader.
const driverRequire = createRequire(createRequire(import.meta.url).resolve('better-sqlite3'));
const bindings = driverRequire('bindings') as (name: string) => unknown;

/** What a loader threw, for a real failure of the kind an operator meets. */
function thrownBy(load: () => unknown): unknown {
  try {
    load();
  } catch (error) {
    return error;
  }
  throw new Error('the load did not fail');
}

describe("SQLite's driver without a usable addon", () => {
  it('an addon that was never built: says to rebuild it and to allow its install script', () => {
    const error = thrownBy(() => bindings('gatehouse_no_such_addon.node'));
    const refusal = sqliteDriverFailure(error);
    assert.ok(refusal, 'the loader error is recognised');
    assert.match(refusal.message, /has no compiled addon/);
    assert.match(refusal.message, /npm rebuild better-sqlite3/);
    assert.match(refusal.message, /npm install-scripts approve better-sqlite3/);
    assert.equal(refusal.cause, error);
  });

  it('a file that is no addon for this platform: says to rebuild it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-addon-'));
    try {
      const addon = join(dir, 'better_sqlite3.node');
      writeFileSync(addon, 'not a shared object\n'.repeat(200));
      const error = thrownBy(() => process.dlopen({ exports: {} }, addon));
      const refusal = sqliteDriverFailure(error);
      if (process.platform === 'linux') {
        assert.ok(refusal, `recognised: ${(error as Error).message}`);
        assert.match(refusal.message, /compiled for another Node\.js or platform/);
        assert.match(refusal.message, /npm rebuild better-sqlite3/);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('any other failure is left as it was', () => {
    for (const error of [
      new Error('unable to open database file'),
      new TypeError('Expected first argument to be a string'),
      'a string',
      undefined,
    ]) {
      assert.equal(sqliteDriverFailure(error), undefined);
    }
  });
});
