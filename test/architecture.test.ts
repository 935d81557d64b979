import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

/** The TypeScript sources under `dir` (tests run from the repository root). */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

// The pages' own browser script runs in the browser, not on the server: Date.now() is its clock.
const frontEnds = [...sources('src/http'), ...sources('src/cli')].filter(
  (path) => !path.startsWith(join('src', 'http', 'ui', 'browser')),
);

function offenders(files: string[], pattern: RegExp): string[] {
  return files.filter((path) => pattern.test(readFileSync(path, 'utf8')));
}

describe('the layers (docs/architecture.md)', () => {
  it('http and cli reach the store only through the engine', () => {
    assert.deepEqual(offenders(frontEnds, /from '[./]*storage\/sql\//), [], 'no import of storage/sql');
    assert.deepEqual(
      offenders(frontEnds, /import[^;]*\bStorage\b[^;]*from '[./]*core\/ports\.js'/),
      [],
      'no import of the Storage aggregate',
    );
    assert.deepEqual(offenders(frontEnds, /\bstorage\.\w+\.\w+\(/), [], 'no store called directly');
  });

  it('the engine is built in one place, the composition root', () => {
    const builders = offenders(sources('src'), /\bcreateEngine\(/).sort();
    assert.deepEqual(builders, [join('src', 'compose', 'gatehouse.ts'), join('src', 'core', 'engine.ts')]);
  });

  it('http and cli take the time from the engine’s clock', () => {
    assert.deepEqual(offenders(frontEnds, /\bDate\.now\(\)/), []);
  });
});
