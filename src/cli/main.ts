import cluster from 'node:cluster';
import { serveClusterMetrics } from '../compose/cluster-metrics.js';
import { createGatehouse, openStorage } from '../compose/gatehouse.js';
import { loadConfig, type ConfigInput } from '../config.js';
import { ConflictError, ValidationError } from '../core/validation.js';
import { UsageError, parseCommandArgs } from './args.js';
import { runClientsCommand } from './commands/clients.js';
import { runKeysCommand } from './commands/keys.js';
import { runScopesCommand } from './commands/scopes.js';
import { runUsersCommand } from './commands/users.js';
import { MAIN_HELP, MIGRATE_HELP, SERVE_HELP } from './help.js';
import type { CommandContext } from './context.js';

function globalConfigInput(values: Record<string, unknown>): ConfigInput {
  const input: ConfigInput = {};
  if (typeof values['data-dir'] === 'string') input.dataDir = values['data-dir'];
  if (typeof values['database-url'] === 'string') input.databaseUrl = values['database-url'];
  return input;
}

async function withStorage<T>(
  values: Record<string, unknown>,
  run: (context: CommandContext) => Promise<T>,
): Promise<T> {
  const config = loadConfig(globalConfigInput(values));
  const storage = openStorage(config);
  try {
    await storage.migrate();
    return await run({ config, storage, json: values.json === true, out: process.stdout });
  } finally {
    await storage.close();
  }
}

function positiveInteger(value: unknown, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0 || parsed > 65535) {
    throw new UsageError(`${flag} must be a whole number`);
  }
  return parsed;
}

async function serve(argv: string[]): Promise<void> {
  const { values } = parseCommandArgs(argv, {
    port: { type: 'string' },
    host: { type: 'string' },
    issuer: { type: 'string' },
    'base-path': { type: 'string' },
    'tls-cert': { type: 'string' },
    'tls-key': { type: 'string' },
    'trust-proxy': { type: 'boolean' },
    workers: { type: 'string' },
  });
  if (values.help) {
    process.stdout.write(SERVE_HELP);
    return;
  }
  const config = loadConfig({
    ...globalConfigInput(values),
    port: positiveInteger(values.port, '--port'),
    host: values.host,
    issuer: values.issuer,
    basePath: values['base-path'],
    tlsCert: values['tls-cert'],
    tlsKey: values['tls-key'],
    trustProxy: values['trust-proxy'],
  });
  const workers = positiveInteger(values.workers, '--workers') ?? 1;
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
  const { values } = parseCommandArgs(argv, {});
  if (values.help) {
    process.stdout.write(MIGRATE_HELP);
    return;
  }
  const config = loadConfig(globalConfigInput(values));
  const storage = openStorage(config);
  try {
    const applied = await storage.migrate();
    process.stdout.write(
      values.json
        ? JSON.stringify({ applied }) + '\n'
        : applied.length > 0
          ? `Applied: ${applied.join(', ')}\n`
          : 'Database schema is already current.\n',
    );
  } finally {
    await storage.close();
  }
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'serve':
        await serve(rest);
        return -1;
      case 'clients':
        await runClientsCommand(rest, withStorage);
        return 0;
      case 'users':
        await runUsersCommand(rest, withStorage);
        return 0;
      case 'scopes':
        await runScopesCommand(rest, withStorage);
        return 0;
      case 'keys':
        await runKeysCommand(rest, withStorage);
        return 0;
      case 'migrate':
        await migrate(rest);
        return 0;
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(MAIN_HELP);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`gatehouse: ${err.message}\nRun "gatehouse --help" for usage.\n`);
      return 2;
    }
    if (err instanceof ValidationError || err instanceof ConflictError) {
      process.stderr.write(`gatehouse: ${err.message}\n`);
      return 1;
    }
    process.stderr.write(`gatehouse: ${(err as Error).message}\n`);
    return 1;
  }
}

const code = await main(process.argv.slice(2));
if (code >= 0) process.exitCode = code;
