import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
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

/**
 * The rooms of src/core, each with the rooms it may import (docs/architecture.md, "Rooms of core").
 * `ground` is the files at core's top level but engine.ts: the records, the ports, the errors.
 */
const CORE_ROOMS: Readonly<Record<string, readonly string[]>> = {
  ground: [],
  // The audit log (decision 41): every room that changes something records it here.
  audit: ['ground'],
  ops: ['ground'],
  keys: ['ground', 'audit'],
  grants: ['ground', 'audit'],
  users: ['ground', 'audit'],
  scopes: ['ground', 'audit'],
  'sign-in': ['ground', 'audit', 'keys', 'users'],
  // Upstream identity providers and the broker's rules (decisions 38-40): a way of signing in, above it.
  federation: ['ground', 'audit', 'keys', 'users', 'sign-in'],
  tokens: ['ground', 'audit', 'keys', 'grants', 'scopes'],
  clients: ['ground', 'audit', 'tokens', 'scopes'],
  authorize: ['ground', 'audit', 'grants', 'scopes', 'sign-in', 'tokens', 'clients'],
  oidc: ['ground', 'scopes', 'tokens', 'clients'],
  device: ['ground', 'audit', 'users', 'scopes', 'sign-in', 'authorize'],
  'token-endpoint': [
    'ground',
    'audit',
    'grants',
    'users',
    'scopes',
    'tokens',
    'clients',
    'authorize',
    'device',
  ],
  // engine.ts builds everything below it once (createEngine).
  engine: [
    'ground',
    'audit',
    'ops',
    'keys',
    'grants',
    'users',
    'scopes',
    'sign-in',
    'federation',
    'tokens',
    'clients',
    'authorize',
    'oidc',
    'device',
    'token-endpoint',
  ],
};

const CORE = join('src', 'core');

/** The room of a file of src/core: its folder, `engine` for engine.ts, `ground` for the other top-level files. */
function roomOf(path: string): string {
  const parts = relative(CORE, path).split(sep);
  if (parts.length > 1) return parts[0]!;
  return parts[0] === 'engine.ts' ? 'engine' : 'ground';
}

/** The files of src/core that `path` imports (relative imports, `.js` written for the `.ts`). */
function coreImports(path: string): string[] {
  const text = readFileSync(path, 'utf8');
  const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((m) => m[1]!);
  return specifiers
    .map((specifier) => relative(resolve('.'), resolve(dirname(path), specifier)).replace(/\.js$/, '.ts'))
    .filter((target) => target.startsWith(CORE + sep));
}

describe('the rooms of core (docs/architecture.md)', () => {
  const files = sources(CORE);

  it('every folder of core is a room with its imports declared', () => {
    const rooms = [...new Set(files.map(roomOf))].sort();
    assert.deepEqual(rooms, Object.keys(CORE_ROOMS).sort());
  });

  it('no import runs back up: a room imports only itself and the rooms it declares', () => {
    const upward = files.flatMap((path) => {
      const room = roomOf(path);
      const allowed = [room, ...(CORE_ROOMS[room] ?? [])];
      return coreImports(path)
        .filter((target) => !allowed.includes(roomOf(target)))
        .map((target) => `${path} -> ${target}`);
    });
    assert.deepEqual(upward, []);
  });

  it('the declared rooms have no circle', () => {
    const placed = new Set<string>();
    let progress = true;
    while (progress) {
      progress = false;
      for (const [room, below] of Object.entries(CORE_ROOMS)) {
        if (!placed.has(room) && below.every((other) => placed.has(other))) {
          placed.add(room);
          progress = true;
        }
      }
    }
    assert.deepEqual(
      Object.keys(CORE_ROOMS).filter((room) => !placed.has(room)),
      [],
    );
  });
});
