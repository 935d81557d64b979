import cluster from 'node:cluster';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveClusterMetrics } from '../compose/cluster-metrics.js';
import { createGatehouse, initStore, openEngine } from '../compose/gatehouse.js';
import { SecretMismatchError, StoreStateError } from '../compose/secret-check.js';
import { describeStore, migrateStore, sqliteFileOf } from '../compose/store-admin.js';
import {
  ConfigError,
  loadConfig,
  storeLocation,
  unknownVariableWarnings,
  type ConfigInput,
  type GatehouseConfig,
} from '../config.js';
import { ConflictError, NotFoundError, ValidationError } from '../core/validation.js';
import { UsageError, integerFlag, parseCommandArgs } from './args.js';
import { runCheckCommand } from './commands/check.js';
import { runClientsCommand } from './commands/clients.js';
import { runGrantsCommand } from './commands/grants.js';
import { runInitialAccessTokensCommand } from './commands/initial-access-tokens.js';
import { runKeysCommand } from './commands/keys.js';
import { runResourcesCommand } from './commands/resources.js';
import { runScopesCommand } from './commands/scopes.js';
import { runUsersCommand } from './commands/users.js';
import { INIT_HELP, MAIN_HELP, MIGRATE_HELP, SERVE_HELP } from './help.js';
import type { CommandContext } from './context.js';

let jsonErrors = false;

function globalConfigInput(values: Record<string, unknown>): ConfigInput {
  const input: ConfigInput = {};
  if (typeof values['data-dir'] === 'string') input.dataDir = values['data-dir'];
  if (typeof values['database-url'] === 'string') input.databaseUrl = values['database-url'];
  return input;
}

function warn(message: string): void {
  process.stderr.write(
    jsonErrors ? JSON.stringify({ warning: message }) + '\n' : `gatehouse: warning: ${message}\n`,
  );
}

/**
 * The configuration of a command. `mayCreate`: serve, init and migrate, which may create a SQLite
 * store and, with it, its development secret; every other command needs both to exist already.
 */
function cliConfig(input: ConfigInput, mayCreate: boolean): GatehouseConfig {
  const file = sqliteFileOf(storeLocation(input));
  if (!mayCreate && file !== undefined && !existsSync(file)) {
    throw new StoreStateError(
      'store_missing',
      `no Gatehouse store at ${file}: run "gatehouse init" to create one, or point --data-dir ` +
        '(GATEHOUSE_DATA_DIR) or --database-url (DATABASE_URL) at the existing one',
    );
  }
  const config = loadConfig(input, process.env, {
    // A secret is generated only with the store it will seal, never beside an existing one.
    createSecret: mayCreate && file !== undefined && !existsSync(file),
  });
  // Once per start: cluster workers run this again with the same environment.
  if (cluster.isPrimary) for (const warning of unknownVariableWarnings()) warn(warning);
  return config;
}

/**
 * Runs a command on an engine over an existing, current store whose secret is the configured one
 * (compose's openEngine); never creates or migrates one (only serve, init and migrate do).
 */
async function withEngine<T>(
  values: Record<string, unknown>,
  run: (context: CommandContext) => Promise<T>,
): Promise<T> {
  const config = cliConfig(globalConfigInput(values), false);
  const opened = await openEngine(config);
  try {
    return await run({ config, engine: opened.engine, json: values.json === true, out: process.stdout });
  } finally {
    await opened.close();
  }
}

async function serve(argv: string[]): Promise<void> {
  const { values } = parseCommandArgs(
    argv,
    {
      port: { type: 'string' },
      host: { type: 'string' },
      issuer: { type: 'string' },
      'base-path': { type: 'string' },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      'trust-proxy': { type: 'boolean' },
      workers: { type: 'string' },
    },
    'serve',
    0,
  );
  if (values.help) {
    process.stdout.write(SERVE_HELP);
    return;
  }
  const port = integerFlag(values.port, '--port', 1, 65535);
  const workers = integerFlag(values.workers, '--workers', 1, 256) ?? 1;
  const config = cliConfig(
    {
      ...globalConfigInput(values),
      port,
      host: values.host,
      issuer: values.issuer,
      basePath: values['base-path'],
      tlsCert: values['tls-cert'],
      tlsKey: values['tls-key'],
      trustProxy: values['trust-proxy'],
    },
    true,
  );
  if (workers > 1 && cluster.isPrimary) {
    // Migrations, the first signing key and the dev certificate are made once, before the fork.
    const gatehouse = await createGatehouse(config);
    await gatehouse.close();
    serveClusterMetrics();
    for (let i = 0; i < workers; i++) cluster.fork();
    process.stdout.write(
      `Gatehouse (${workers} workers) on https://localhost:${config.port}${config.basePath}\n`,
    );
    const stop = () => {
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    return;
  }
  const gatehouse = await createGatehouse(config, { processMetrics: true });
  const url = await gatehouse.listen();
  if (cluster.isPrimary) {
    const certNote = gatehouse.tls ? `; TLS certificate: ${gatehouse.tls.certPath}` : '';
    process.stdout.write(`Gatehouse listening on ${url} (issuer ${config.issuer})${certNote}\n`);
  }
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    gatehouse.app.log.info({ signal }, 'shutting down: finishing requests in flight');
    // A bounded drain: whatever is still open after 10 s is cut.
    const timer = setTimeout(() => process.exit(1), 10_000);
    timer.unref();
    gatehouse.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

async function migrate(argv: string[]): Promise<void> {
  const { values } = parseCommandArgs(argv, {}, 'migrate', 0);
  if (values.help) {
    process.stdout.write(MIGRATE_HELP);
    return;
  }
  const config = cliConfig(globalConfigInput(values), true);
  const applied = await migrateStore(config);
  process.stdout.write(
    values.json
      ? JSON.stringify({ applied }) + '\n'
      : applied.length > 0
        ? `Applied: ${applied.join(', ')}\n`
        : 'Database schema is already current.\n',
  );
}

/** Creates a store: schema, secret check, built-in scopes, first signing key. Says so when it exists. */
async function init(argv: string[]): Promise<void> {
  const { values } = parseCommandArgs(argv, {}, 'init', 0);
  if (values.help) {
    process.stdout.write(INIT_HELP);
    return;
  }
  const config = cliConfig(globalConfigInput(values), true);
  const { created, applied, kid } = await initStore(config);
  const where = describeStore(config);
  process.stdout.write(
    values.json
      ? JSON.stringify({ created, store: where, applied, kid }) + '\n'
      : created
        ? `Created a Gatehouse store in ${where} (signing key ${kid}).\n`
        : `A Gatehouse store already exists in ${where}; nothing to do.\n`,
  );
}

/** The version in package.json: the nearest one upward named gatehouse-oauth (the npm package). */
function version(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      const parsed = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version?: string };
      if (parsed.name === 'gatehouse-oauth' && parsed.version !== undefined) return parsed.version;
    }
    const parent = dirname(dir);
    if (parent === dir) return 'unknown';
    dir = parent;
  }
}

const VALUE_GLOBALS = new Set(['--data-dir', '--database-url']);

/**
 * `gatehouse --data-dir X clients list`: options every command takes may stand before the command;
 * they are moved after it, where the command's own parser reads them.
 */
function splitGlobalOptions(argv: string[]): { command: string | undefined; rest: string[] } {
  const globals: string[] = [];
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (!arg.startsWith('-')) break;
    const name = arg.includes('=') ? arg.slice(0, arg.indexOf('=')) : arg;
    if (arg === '--help' || arg === '-h') return { command: 'help', rest: [] };
    if (arg === '--version' || arg === '-V') return { command: 'version', rest: [] };
    if (arg === '--json') globals.push(arg);
    else if (VALUE_GLOBALS.has(name)) {
      if (name !== arg) globals.push(arg);
      else {
        const value = argv[i + 1];
        if (value === undefined) throw new UsageError(`${arg} needs a value`);
        globals.push(arg, value);
        i++;
      }
    } else
      throw new UsageError(
        `unknown option ${name} (options before the command: --data-dir, --database-url, --json)`,
      );
  }
  return { command: argv[i], rest: [...hoistGlobalOptions(argv.slice(i + 1)), ...globals] };
}

/** `gatehouse clients --json list`: global options between a command and its action go after it too. */
function hoistGlobalOptions(argv: string[]): string[] {
  const globals: string[] = [];
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i] as string;
    const name = arg.includes('=') ? arg.slice(0, arg.indexOf('=')) : arg;
    if (arg === '--json' || (VALUE_GLOBALS.has(name) && name !== arg)) globals.push(arg);
    else if (VALUE_GLOBALS.has(arg) && argv[i + 1] !== undefined) {
      globals.push(arg, argv[i + 1] as string);
      i++;
    } else break;
  }
  return [...argv.slice(i), ...globals];
}

/** Each refusal's exit code and its name under --json. */
function classify(err: unknown): { code: number; error: string } {
  if (err instanceof UsageError) return { code: 2, error: 'usage' };
  if (err instanceof ValidationError) return { code: 1, error: 'invalid_input' };
  if (err instanceof ConflictError) return { code: 1, error: 'conflict' };
  if (err instanceof NotFoundError) return { code: 1, error: 'not_found' };
  if (err instanceof ConfigError) return { code: 1, error: 'configuration' };
  if (err instanceof SecretMismatchError || err instanceof StoreStateError)
    return { code: 1, error: err.code };
  return { code: 1, error: 'failed' };
}

export async function main(argv: string[]): Promise<number> {
  jsonErrors = argv.includes('--json');
  try {
    const { command, rest } = splitGlobalOptions(argv);
    switch (command) {
      case 'serve':
        await serve(rest);
        return -1;
      case 'init':
        await init(rest);
        return 0;
      case 'migrate':
        await migrate(rest);
        return 0;
      case 'check':
        return await runCheckCommand(rest);
      case 'clients':
        await runClientsCommand(rest, withEngine);
        return 0;
      case 'users':
        await runUsersCommand(rest, withEngine);
        return 0;
      case 'scopes':
        await runScopesCommand(rest, withEngine);
        return 0;
      case 'keys':
        await runKeysCommand(rest, withEngine);
        return 0;
      case 'initial-access-tokens':
        await runInitialAccessTokensCommand(rest, withEngine);
        return 0;
      case 'resources':
        await runResourcesCommand(rest, withEngine);
        return 0;
      case 'grants':
        await runGrantsCommand(rest, withEngine);
        return 0;
      case 'version':
        process.stdout.write(
          jsonErrors ? JSON.stringify({ version: version() }) + '\n' : `gatehouse ${version()}\n`,
        );
        return 0;
      case undefined:
      case 'help':
        process.stdout.write(MAIN_HELP);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (err) {
    const { code, error } = classify(err);
    const message = (err as Error).message;
    if (jsonErrors) process.stderr.write(JSON.stringify({ error, message }) + '\n');
    else if (err instanceof UsageError) {
      process.stderr.write(`gatehouse: ${message}\nRun "gatehouse --help" for usage.\n`);
    } else process.stderr.write(`gatehouse: ${message}\n`);
    return code;
  }
}

const code = await main(process.argv.slice(2));
if (code >= 0) process.exitCode = code;
