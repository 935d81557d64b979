import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';

describe('the npm package', () => {
  it('imports by its own name: the server factory and the resource-server library', async () => {
    // Package self-reference resolves through package.json "exports", as an installed package would.
    const main = (await import('gatehouse' as string)) as Record<string, unknown>;
    assert.equal(typeof main.createGatehouse, 'function');
    assert.equal(typeof main.loadConfig, 'function');
    const library = (await import('gatehouse/resource-server' as string)) as Record<string, unknown>;
    assert.equal(typeof library.ResourceServer, 'function');
  });

  it('packs the built code, its types and the command, not the tests or benchmarks', () => {
    const output = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const [pack] = JSON.parse(output) as [{ files: { path: string }[] }];
    const paths = pack.files.map((file) => file.path);
    for (const needed of [
      'bin/gatehouse.js',
      'dist/src/index.js',
      'dist/src/index.d.ts',
      'dist/src/resource-server/index.js',
      'dist/src/cli/main.js',
      'package.json',
    ]) {
      assert.ok(paths.includes(needed), `${needed} is packed`);
    }
    const stray = paths.filter((path) => /^(dist\/)?(test|bench)\//.test(path) || path.startsWith('src/'));
    assert.deepEqual(stray, [], 'no tests, benchmarks or TypeScript sources');
  });
});
