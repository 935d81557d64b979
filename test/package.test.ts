import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = process.cwd();
const SERVER = 'gatehouse-oauth';
const LIBRARY = 'gatehouse-oauth-resource-server';
const LIBRARY_DIR = join(ROOT, 'packages', 'resource-server');

interface PackageJson {
  name: string;
  version: string;
  engines?: { node?: string };
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as PackageJson;

// The npm that runs `npm test` passes its own settings down as npm_* variables (its prefix among
// them); the npm commands below must act on the directory they are given, as a user's would.
const npmEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
const npm = (args: string[], cwd: string) =>
  run('npm', args, { cwd, env: npmEnv, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });

describe('the npm packages', () => {
  it('import by their own names: the server factory, the library, and the library under the server', async () => {
    // Package self-reference and the workspace link resolve through "exports", as installed packages would.
    const main = (await import(SERVER as string)) as Record<string, unknown>;
    assert.equal(typeof main.createGatehouse, 'function');
    assert.equal(typeof main.loadConfig, 'function');
    const library = (await import(LIBRARY as string)) as Record<string, unknown>;
    assert.equal(typeof library.ResourceServer, 'function');
    const short = (await import(`${SERVER}/resource-server` as string)) as Record<string, unknown>;
    assert.equal(short.ResourceServer, library.ResourceServer, 'the subpath re-exports the library');
    // Each framework's adapter is a subpath of its own; the main entry names no framework (decision 16).
    for (const [framework, adapter] of [
      ['express', 'expressResourceServer'],
      ['fastify', 'gatehouseResourceServer'],
    ] as const) {
      assert.equal(library[adapter], undefined, `${adapter} is not on the main entry`);
      const own = (await import(`${LIBRARY}/${framework}` as string)) as Record<string, unknown>;
      assert.equal(typeof own[adapter], 'function');
      const underServer = (await import(`${SERVER}/resource-server/${framework}` as string)) as Record<
        string,
        unknown
      >;
      assert.equal(underServer[adapter], own[adapter], `the server re-exports ${LIBRARY}/${framework}`);
    }
  });

  it('declare Node.js versions that every installed package supports (docs/decisions.md, decision 16)', () => {
    const server = readJson(join(ROOT, 'package.json'));
    const library = readJson(join(LIBRARY_DIR, 'package.json'));
    assert.equal(library.engines?.node, server.engines?.node, 'both packages declare the same range');
    assert.equal(
      server.dependencies?.[LIBRARY],
      library.version,
      'the server depends on this library version',
    );
    const semver = createRequire(import.meta.url)('semver') as {
      minVersion(range: string): { version: string } | null;
      satisfies(version: string, range: string): boolean;
    };
    // The lowest version of each line the range admits (20.19.0, 22.13.0, 24.0.0), and the one running.
    const floors = (server.engines?.node ?? '').split('||').map((part) => semver.minVersion(part)?.version);
    const versions = [...new Set([...floors, process.versions.node])].filter((v): v is string => !!v);
    assert.ok(floors.length >= 1 && versions.length >= 2, `engines.node is a range: ${server.engines?.node}`);
    const refused: string[] = [];
    const visit = (dir: string) => {
      if (!existsSync(dir)) return;
      for (const name of readdirSync(dir)) {
        if (name.startsWith('.')) continue;
        const path = join(dir, name);
        if (name.startsWith('@')) {
          visit(path);
          continue;
        }
        const manifest = join(path, 'package.json');
        if (existsSync(manifest)) {
          const pkg = readJson(manifest);
          const wanted = pkg.engines?.node;
          if (typeof wanted === 'string') {
            for (const version of versions) {
              if (!semver.satisfies(version, wanted))
                refused.push(`${pkg.name}@${pkg.version} (${wanted}) refuses ${version}`);
            }
          }
        }
        visit(join(path, 'node_modules'));
      }
    };
    visit(join(ROOT, 'node_modules'));
    assert.deepEqual(refused, []);
  });
});

describe('the published tarballs', { timeout: 240_000 }, () => {
  let dir: string;
  const packed = new Map<string, { filename: string; files: string[] }>();
  const tarball = (name: string) => join(dir, packed.get(name)?.filename ?? `missing-${name}`);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-pack-'));
    // Built already (`npm test` builds first), so the prepare scripts are skipped.
    const { stdout } = await npm(
      [
        'pack',
        '--json',
        '--ignore-scripts',
        '--workspaces',
        '--include-workspace-root',
        '--pack-destination',
        dir,
      ],
      ROOT,
    );
    for (const entry of JSON.parse(stdout) as {
      name: string;
      filename: string;
      files: { path: string }[];
    }[]) {
      packed.set(entry.name, { filename: entry.filename, files: entry.files.map((file) => file.path) });
    }
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the server ships the command, the built code, its types and the library inside it, not the tests or benchmarks', () => {
    const paths = packed.get(SERVER)?.files ?? [];
    for (const needed of [
      'bin/gatehouse.js',
      'dist/src/index.js',
      'dist/src/index.d.ts',
      'dist/src/resource-server.js',
      'dist/src/resource-server.d.ts',
      'dist/src/resource-server-express.js',
      'dist/src/resource-server-fastify.js',
      'dist/src/cli/main.js',
      'package.json',
      'LICENSE',
      // Bundled (decision 16): the library is not on the registry, so the server carries it.
      `node_modules/${LIBRARY}/package.json`,
      `node_modules/${LIBRARY}/dist/index.js`,
      `node_modules/${LIBRARY}/dist/express.d.ts`,
    ]) {
      assert.ok(paths.includes(needed), `${needed} is packed`);
    }
    const stray = paths.filter(
      (path) =>
        /^(dist\/)?(test|bench|packages)\//.test(path) ||
        path.startsWith('src/') ||
        path.startsWith(`node_modules/${LIBRARY}/src/`) ||
        path.endsWith('.tsbuildinfo'),
    );
    assert.deepEqual(stray, [], "no tests, benchmarks, TypeScript sources or the library's workspace");
    // The library's own dependency comes with it; nothing else of node_modules does.
    const bundled = new Set(paths.filter((p) => p.startsWith('node_modules/')).map((p) => p.split('/')[1]));
    assert.deepEqual([...bundled].sort(), [LIBRARY, 'jose']);
  });

  it('the library ships its built code and types, and depends on jose alone', () => {
    const paths = packed.get(LIBRARY)?.files ?? [];
    for (const needed of [
      'dist/index.js',
      'dist/index.d.ts',
      'dist/mac.d.ts',
      'dist/rfc6750.d.ts',
      'README.md',
      'LICENSE',
    ]) {
      assert.ok(paths.includes(needed), `${needed} is packed`);
    }
    const stray = paths.filter(
      (path) =>
        !['package.json', 'README.md', 'LICENSE'].includes(path) &&
        !(path.startsWith('dist/') && /\.(js|d\.ts|js\.map)$/.test(path)),
    );
    assert.deepEqual(stray, [], 'only dist, the manifest, the README and the licence');
    const manifest = readJson(join(LIBRARY_DIR, 'package.json'));
    assert.deepEqual(Object.keys(manifest.dependencies ?? {}), ['jose']);
    // Fastify's types only, for the plugin: never installed on the library's account.
    assert.deepEqual(manifest.peerDependenciesMeta, { fastify: { optional: true } });
  });

  it('the library installs alone with jose and nothing of the server', async () => {
    const app = join(dir, 'library-only');
    mkdirSync(app);
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({ name: 'rs-app', private: true, type: 'module' }),
    );
    await npm(['install', '--no-audit', '--no-fund', '--prefer-offline', tarball(LIBRARY)], app);
    const installed = readdirSync(join(app, 'node_modules')).filter((name) => !name.startsWith('.'));
    assert.deepEqual(installed.sort(), [LIBRARY, 'jose']);
    writeFileSync(
      join(app, 'check.mjs'),
      `import { ResourceServer } from '${LIBRARY}';
       import { expressResourceServer } from '${LIBRARY}/express';
       import { gatehouseResourceServer } from '${LIBRARY}/fastify';
       import { TokenError } from '${LIBRARY}/rfc6750';
       import { parseMacHeader } from '${LIBRARY}/mac';
       console.log([ResourceServer, expressResourceServer, gatehouseResourceServer, TokenError, parseMacHeader].map((f) => typeof f).join());`,
    );
    const { stdout } = await run(process.execPath, ['check.mjs'], { cwd: app, encoding: 'utf8' });
    assert.equal(stdout.trim(), 'function,function,function,function,function');
  });

  it("an Express service's types compile against the library's with skipLibCheck off, without Fastify", async () => {
    const app = join(dir, 'express-types');
    mkdirSync(app);
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({ name: 'express-app', private: true, type: 'module' }),
    );
    // Express's types at the version this repository uses; Fastify (an optional peer) is not installed.
    const expressTypes = readJson(join(ROOT, 'node_modules', '@types', 'express', 'package.json')).version;
    await npm(
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--prefer-offline',
        tarball(LIBRARY),
        `@types/express@${expressTypes}`,
      ],
      app,
    );
    assert.ok(!existsSync(join(app, 'node_modules', 'fastify')), 'Fastify is not installed');
    writeFileSync(
      join(app, 'check.ts'),
      `import type { RequestHandler } from 'express';
       import { ResourceServer, TokenError, type VerifiedToken } from '${LIBRARY}';
       import { expressResourceServer } from '${LIBRARY}/express';
       const tokens = expressResourceServer({ issuer: 'https://auth.example.com' });
       const handler: RequestHandler = tokens.requireToken(['notes:read']);
       const token: VerifiedToken | undefined = undefined;
       export const used = [handler, token, ResourceServer, TokenError, tokens.resourceServer];`,
    );
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          target: 'ES2022',
          strict: true,
          // Every .d.ts the program reaches is checked: the library's entry must not reach Fastify's.
          skipLibCheck: false,
          noEmit: true,
        },
        files: ['check.ts'],
      }),
    );
    const compile = run(
      process.execPath,
      [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'],
      {
        cwd: app,
        encoding: 'utf8',
      },
    );
    // tsc prints its diagnostics on stdout; a failure shows them.
    await compile.catch((error: { stdout?: string }) =>
      assert.fail(`tsc failed:\n${error.stdout ?? String(error)}`),
    );
  });

  it('the server installs alone from its tarball, with the library inside it, and runs its command', async () => {
    const app = join(dir, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    // The server's tarball alone: its dependency on the library, which is not on the registry, is met
    // by the copy bundled inside it (decision 16). --ignore-scripts: better-sqlite3 would compile its
    // native addon here (minutes on this machine); it is loaded only when a SQLite store opens, which
    // neither importing nor --version does.
    await npm(
      ['install', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts', tarball(SERVER)],
      app,
    );
    assert.ok(
      existsSync(join(app, 'node_modules', SERVER, 'node_modules', LIBRARY, 'dist', 'index.js')),
      'the library is inside the server',
    );
    writeFileSync(
      join(app, 'check.ts'),
      `import { createGatehouse, loadConfig, type GatehouseConfig } from '${SERVER}';
       import { ResourceServer, type VerifiedToken } from '${SERVER}/resource-server';
       import { expressResourceServer } from '${SERVER}/resource-server/express';
       import { gatehouseResourceServer } from '${SERVER}/resource-server/fastify';
       const config: (input: Parameters<typeof loadConfig>[0]) => GatehouseConfig = loadConfig;
       const token: VerifiedToken | undefined = undefined;
       console.log([createGatehouse, config, ResourceServer, expressResourceServer, gatehouseResourceServer].map((f) => typeof f).join(), token);`,
    );
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          target: 'ES2022',
          strict: true,
          skipLibCheck: true,
          types: ['node'],
        },
        files: ['check.ts'],
      }),
    );
    // Type-checked against the packed .d.ts files, with the repository's compiler and Node types.
    await run(
      process.execPath,
      [
        join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
        '-p',
        '.',
        '--typeRoots',
        join(ROOT, 'node_modules', '@types'),
      ],
      {
        cwd: app,
        encoding: 'utf8',
      },
    );
    const { stdout } = await run(process.execPath, ['check.js'], { cwd: app, encoding: 'utf8' });
    assert.equal(stdout.trim(), 'function,function,function,function,function undefined');
    // The installed command, as npm linked it, finds its own package's version (by name).
    const version = await run(join(app, 'node_modules', '.bin', 'gatehouse'), ['--version'], {
      cwd: app,
      encoding: 'utf8',
    });
    assert.equal(version.stdout, `gatehouse ${readJson(join(ROOT, 'package.json')).version}\n`);
  });
});
