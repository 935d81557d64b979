import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** A relative import of one of `folders` of src/, from any depth (`../core/x.js`, `../../storage/…`). */
function srcFolders(folders) {
  return `^(\\.\\./)+(${folders.join('|')})(/|\\.js$)`;
}

const LIBRARY = ['gatehouse-oauth-resource-server', 'gatehouse-oauth-resource-server/*'];
const WEB = ['fastify', 'fastify/*', '@fastify/*', 'express', 'express/*'];
const DATABASES = ['kysely', 'kysely/*', 'pg', 'pg/*', 'better-sqlite3'];

/**
 * One no-restricted-imports rule per folder: a later config object replaces an earlier one's options
 * for the same rule, so each folder's list is whole.
 */
function layer(files, why, { folders = [], packages = [], regex }) {
  const patterns = [];
  if (folders.length > 0) patterns.push({ regex: srcFolders(folders), message: why });
  // A package pattern with an exception (a group's "!" cannot re-include a package's subpath).
  if (regex !== undefined) patterns.push({ regex, message: why });
  if (packages.length > 0) patterns.push({ group: packages, message: why });
  return { files, rules: { 'no-restricted-imports': ['error', { patterns }] } };
}

function layers() {
  return [
    layer(['src/shared/**/*.ts'], 'src/shared is the bottom layer: Node built-ins and nothing of ours', {
      folders: ['core', 'storage', 'http', 'cli', 'compose', 'config', 'outbound'],
      packages: [...LIBRARY, ...WEB, ...DATABASES],
    }),
    layer(
      ['src/core/**/*.ts'],
      'src/core is the engine: ports, rules and a clock; no web framework, database, front end or configuration (docs/architecture.md)',
      {
        folders: ['storage', 'http', 'cli', 'compose', 'config', 'outbound'],
        // The library's rules reach /v1 through http/ (docs/decisions.md, decision 16); the
        // exceptions are its storage-free rules core shares, by name (decision 26): the DPoP proof
        // check, the JWT verifier, the token-presentation rule and the URI syntax.
        packages: [...WEB, ...DATABASES, '**/packages/resource-server/**'],
        regex:
          '^gatehouse-oauth-resource-server(?!/(?:dpop-proof|jwt-verifier|token-presentation|uri-syntax)$)(/.*)?$',
      },
    ),
    layer(['src/storage/**/*.ts'], 'src/storage implements the ports of core; it knows no front end', {
      folders: ['http', 'cli', 'compose', 'outbound'],
      packages: [...LIBRARY, ...WEB],
    }),
    layer(
      ['src/http/**/*.ts'],
      'src/http calls the engine; only compose/ opens a store (docs/architecture.md)',
      {
        folders: ['storage', 'cli', 'compose', 'outbound'],
        packages: DATABASES,
      },
    ),
    // The three HTTP surfaces share only the modules at src/http's top level.
    layer(
      ['src/http/api/**/*.ts'],
      'http/api calls the engine; it imports neither a store, compose, cli nor another HTTP surface (share through src/http/*.ts)',
      {
        folders: ['storage', 'cli', 'compose', 'outbound', 'oauth', 'ui'],
        packages: DATABASES,
      },
    ),
    layer(
      ['src/http/oauth/**/*.ts'],
      'http/oauth calls the engine; it imports neither a store, compose, cli nor another HTTP surface (share through src/http/*.ts)',
      {
        folders: ['storage', 'cli', 'compose', 'outbound', 'api', 'ui'],
        packages: DATABASES,
      },
    ),
    layer(
      ['src/http/ui/**/*.ts'],
      'http/ui calls the engine; it imports neither a store, compose, cli nor another HTTP surface (share through src/http/*.ts)',
      {
        folders: ['storage', 'cli', 'compose', 'outbound', 'api', 'oauth'],
        packages: DATABASES,
      },
    ),
    layer(
      ['src/cli/**/*.ts'],
      'src/cli calls the engine that compose/ opens; it never opens a store or a server itself',
      {
        folders: ['storage', 'http', 'outbound'],
        packages: [...WEB, ...DATABASES],
      },
    ),
    layer(
      ['src/compose/**/*.ts'],
      'src/compose opens a store by its URL (storage/open-store.ts) and speaks to it through the ports of core; no database of its own (docs/architecture.md, "Stores")',
      {
        packages: DATABASES,
        regex: '^(\\.\\./)+storage/(?!open-store\\.js$)',
      },
    ),
    layer(
      ['src/outbound/**/*.ts'],
      'src/outbound implements the ports of core that reach other servers (jwks_uri); it knows no store or front end',
      {
        folders: ['storage', 'http', 'cli', 'compose', 'config'],
        packages: [...LIBRARY, ...WEB, ...DATABASES],
      },
    ),
    layer(
      ['packages/resource-server/src/**/*.ts'],
      'the resource-server library depends on jose and Node only (docs/decisions.md, decision 16)',
      {
        folders: ['src', 'core', 'storage', 'http', 'cli', 'compose', 'shared', 'outbound'],
        packages: ['gatehouse-oauth', 'gatehouse-oauth/*', ...DATABASES],
      },
    ),
  ];
}

export default tseslint.config(
  { ignores: ['dist/', 'packages/*/dist/', 'node_modules/', 'data/', 'coverage/', '.build/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  // The layers (docs/architecture.md): each folder lists the folders and packages it must not import.
  ...layers(),
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', URL: 'readonly', Buffer: 'readonly' },
    },
  },
);
