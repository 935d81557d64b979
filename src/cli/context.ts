import cluster from 'node:cluster';
import { existsSync } from 'node:fs';
import { StoreStateError } from '../compose/store-errors.js';
import {
  flagOf,
  loadConfig,
  SETTINGS,
  storeLocation,
  unknownVariableWarnings,
  variableOf,
  type ConfigInput,
  type GatehouseConfig,
  type SettingName,
} from '../config.js';
import type { Engine } from '../core/engine.js';
import { NotFoundError } from '../core/validation.js';
import { integerFlag } from './args.js';
import { GLOBAL_FLAGS, type Flags } from './command-table.js';

/** Text written to standard output or error: the process's streams, or a test's buffers. */
export interface TextSink {
  write(text: string): unknown;
}

/** Standard input: a pipe, a file, or a terminal (the password prompt turns raw mode on there). */
export type TextSource = NodeJS.ReadableStream & {
  isTTY?: boolean;
  setRawMode?(raw: boolean): unknown;
};

/**
 * What one run of the command line reads and writes, given to it rather than taken from `process`:
 * main.ts gives the process's own; a test gives its buffers and an environment of its own, and runs
 * the command in its process (docs/architecture.md, "The CLI runs in process").
 */
export interface CliIo {
  /** The environment the configuration is read from (never `process.env` directly). */
  env: NodeJS.ProcessEnv;
  stdin: TextSource;
  stdout: TextSink;
  stderr: TextSink;
}

/** One run of the command line: its streams and environment, and what it was asked for. */
export interface Cli {
  io: CliIo;
  /** --json anywhere on the command line: warnings and errors on stderr are JSON too. */
  json: boolean;
  warn(message: string): void;
  /** Runs a command on an engine over the existing store (compose's openEngine), closed after it. */
  withEngine: WithEngine;
}

export interface CommandContext {
  config: GatehouseConfig;
  /** Every operation a command performs; every time it stamps comes from the engine's clock. */
  engine: Engine;
  json: boolean;
  out: TextSink;
}

/** Runs a command on an engine over the existing store (compose's openEngine), closed after it. */
export type WithEngine = <T>(
  values: Record<string, unknown>,
  run: (context: CommandContext) => Promise<T>,
) => Promise<T>;

export function printJson(context: CommandContext, value: unknown): void {
  context.out.write(JSON.stringify(value, null, 2) + '\n');
}

/** The thing a command names is not there (exit 1, error "not_found" under --json). */
export function notFound(what: string): NotFoundError {
  return new NotFoundError(what, `no ${what}`);
}

/** A run of the command line on `io`; `json` when --json is anywhere on it. Holds no state between runs. */
export function createCli(io: CliIo, json: boolean): Cli {
  const cli: Cli = {
    io,
    json,
    warn(message) {
      io.stderr.write(
        json ? JSON.stringify({ warning: message }) + '\n' : `gatehouse: warning: ${message}\n`,
      );
    },
    withEngine: (values, run) => withEngine(cli, values, run),
  };
  return cli;
}

/**
 * The settings a command's flags set: each flag of `flags` that a row of the settings table names
 * (config/settings.ts), a number read within the row's range. serve and check read theirs here, so
 * that what check checks is what serve would run with.
 */
export function settingsFromFlags(values: Readonly<Record<string, unknown>>, flags: Flags): ConfigInput {
  const input: Partial<Record<SettingName, unknown>> = {};
  for (const [name, row] of Object.entries(SETTINGS) as [SettingName, (typeof SETTINGS)[SettingName]][]) {
    if (row.flag === undefined || !(row.flag in flags)) continue;
    const value = values[row.flag];
    if (value === undefined) continue;
    const range = row.type?.range;
    input[name] =
      range !== undefined && typeof value === 'string'
        ? integerFlag(value, `--${row.flag}`, range.min, range.max)
        : value;
  }
  // The command table declares each of these flags from its row: a string, or a boolean for a
  // boolean setting (command-table.ts), which is what the row's input takes.
  return input as ConfigInput;
}

/** --data-dir and --database-url, which every command takes. */
export function globalConfigInput(values: Readonly<Record<string, unknown>>): ConfigInput {
  return settingsFromFlags(values, GLOBAL_FLAGS);
}

/**
 * The configuration of a command. `mayCreate`: serve, init and migrate, which may create a SQLite
 * store and, with it, its development secret; every other command needs both to exist already.
 */
export async function cliConfig(cli: Cli, input: ConfigInput, mayCreate: boolean): Promise<GatehouseConfig> {
  const { sqliteFileOf } = await import('../compose/store-admin.js');
  const file = sqliteFileOf(storeLocation(input, cli.io.env));
  if (!mayCreate && file !== undefined && !existsSync(file)) {
    throw new StoreStateError(
      'store_missing',
      `no Gatehouse store at ${file}: run "gatehouse init" to create one, or point ${flagOf('dataDir')} ` +
        `(${variableOf('dataDir')}) or ${flagOf('databaseUrl')} (${variableOf('databaseUrl')}) at the existing one`,
    );
  }
  const config = loadConfig(input, cli.io.env, {
    // A secret is generated only with the store it will seal, never beside an existing one.
    createSecret: mayCreate && file !== undefined && !existsSync(file),
  });
  // Once per start: cluster workers run this again with the same environment.
  if (cluster.isPrimary) for (const warning of unknownVariableWarnings(cli.io.env)) cli.warn(warning);
  return config;
}

/**
 * Runs a command on an engine over an existing, current store whose secret is the configured one
 * (compose's openEngine); never creates or migrates one (only serve, init and migrate do). The
 * store and the engine are loaded only here, when a command needs them (a cold start pays for what
 * it uses: docs/benchmarks.md, cli-start).
 */
async function withEngine<T>(
  cli: Cli,
  values: Record<string, unknown>,
  run: (context: CommandContext) => Promise<T>,
): Promise<T> {
  const config = await cliConfig(cli, globalConfigInput(values), false);
  const { openEngine } = await import('../compose/gatehouse.js');
  // Decision 41: each audit event the command records, one JSON line on stderr (stdout is the
  // command's own output, which --json makes machine-read).
  const opened = await openEngine(config, {
    auditSink: { emit: (event) => cli.io.stderr.write(JSON.stringify({ audit: event }) + '\n') },
  });
  try {
    return await run({ config, engine: opened.engine, json: values.json === true, out: cli.io.stdout });
  } finally {
    await opened.close();
  }
}
