import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SecretMismatchError, StoreStateError } from '../compose/store-errors.js';
import { ConfigError } from '../config.js';
import { ConflictError, NotFoundError, ValidationError } from '../core/validation.js';
import { didYouMean } from '../shared/did-you-mean.js';
import { UsageError, isHelpFlag } from './args.js';
import {
  COMMANDS,
  COMMAND_NAMES,
  isCommandName,
  type CommandName,
  type CommandSpec,
} from './command-table.js';
import { createCli, type Cli, type CliIo } from './context.js';
import { MAIN_HELP } from './help.js';

// This module loads only what every command needs: the argument parser, the command table and the
// help texts. A command's module, and the store, engine or server it uses, are imported when that
// command runs, so `gatehouse --version` costs about a bare node start (docs/benchmarks.md, cli-start).

/** Runs one command on the arguments after its name; resolves to the exit code, -1 to keep running. */
type Runner = (argv: string[], cli: Cli) => Promise<number>;

const done = (run: Promise<void>) => run.then(() => 0);

const RUNNERS: Record<CommandName, Runner> = {
  serve: async (argv, cli) => (await import('./commands/serve.js')).runServeCommand(argv, cli),
  init: async (argv, cli) => (await import('./commands/store.js')).runInitCommand(argv, cli),
  migrate: async (argv, cli) => (await import('./commands/store.js')).runMigrateCommand(argv, cli),
  check: async (argv, cli) => (await import('./commands/check.js')).runCheckCommand(argv, cli),
  clients: async (argv, cli) => done((await import('./commands/clients.js')).runClientsCommand(argv, cli)),
  users: async (argv, cli) => done((await import('./commands/users.js')).runUsersCommand(argv, cli)),
  idps: async (argv, cli) => done((await import('./commands/idps.js')).runIdpsCommand(argv, cli)),
  scopes: async (argv, cli) => done((await import('./commands/scopes.js')).runScopesCommand(argv, cli)),
  keys: async (argv, cli) => done((await import('./commands/keys.js')).runKeysCommand(argv, cli)),
  'initial-access-tokens': async (argv, cli) =>
    done((await import('./commands/initial-access-tokens.js')).runInitialAccessTokensCommand(argv, cli)),
  resources: async (argv, cli) =>
    done((await import('./commands/resources.js')).runResourcesCommand(argv, cli)),
  grants: async (argv, cli) => done((await import('./commands/grants.js')).runGrantsCommand(argv, cli)),
  audit: async (argv, cli) => done((await import('./commands/audit.js')).runAuditCommand(argv, cli)),
  completion: async (argv, cli) => (await import('./commands/completion.js')).runCompletionCommand(argv, cli),
  version: async (_argv, cli) => {
    cli.io.stdout.write(
      cli.json ? JSON.stringify({ version: version() }) + '\n' : `gatehouse ${version()}\n`,
    );
    return 0;
  },
  help: async (_argv, cli) => {
    cli.io.stdout.write(MAIN_HELP);
    return 0;
  },
};

/** A mistyped action is refused before its module loads, with the nearest action named. */
function checkAction(command: CommandName, action: string | undefined): void {
  const spec: CommandSpec = COMMANDS[command];
  if (spec.actions === undefined || action === undefined || action.startsWith('-')) return;
  if (!Object.hasOwn(spec.actions, action)) {
    throw new UsageError(
      `unknown ${command} action "${action}"${didYouMean(action, Object.keys(spec.actions), 2)}`,
    );
  }
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
const BEFORE_COMMAND = ['--data-dir', '--database-url', '--json', '--help', '--version'];

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
        `unknown option ${name}${didYouMean(name, BEFORE_COMMAND, 2)} (options before the command: ` +
          '--data-dir, --database-url, --json)',
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

/**
 * Runs the command line on `argv` (the arguments after `gatehouse`), reading and writing `io` alone:
 * no `process.env`, no `process.exit`, nothing kept between runs. Resolves to the exit code, or -1
 * when the command keeps running (serve: the process is the server's from then on). main.ts runs it
 * on the process's own streams; tests run it in their process.
 */
export async function runCommandLine(argv: string[], io: CliIo): Promise<number> {
  const cli = createCli(io, argv.includes('--json'));
  try {
    const { command, rest } = splitGlobalOptions(argv);
    if (command === undefined) {
      io.stdout.write(MAIN_HELP);
      return 2;
    }
    if (!isCommandName(command)) {
      throw new UsageError(`unknown command "${command}"${didYouMean(command, COMMAND_NAMES, 2)}`);
    }
    if (!isHelpFlag(rest[0])) checkAction(command, rest[0]);
    return await RUNNERS[command](rest, cli);
  } catch (err) {
    const { code, error } = classify(err);
    const message = (err as Error).message;
    if (cli.json) io.stderr.write(JSON.stringify({ error, message }) + '\n');
    else if (err instanceof UsageError) {
      io.stderr.write(`gatehouse: ${message}\nRun "gatehouse --help" for usage.\n`);
    } else io.stderr.write(`gatehouse: ${message}\n`);
    return code;
  }
}
