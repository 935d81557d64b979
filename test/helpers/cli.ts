import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { runCommandLine } from '../../src/cli/command-line.js';
import { createSqlStorage, type SqlStorage } from '../../src/storage/sql/index.js';
import { dropTestSchema, TEST_DATABASE_URL, withSchemaLock, type Backend } from './backends.js';

/** The compiled CLI beside this compiled helper, whatever the output folder. */
export const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  stdin?: string;
}

/** The environment without anything that would point the CLI at another store or secret. */
export function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (name === 'DATABASE_URL' || name === 'PORT' || name === 'HOST') continue;
    if (name.startsWith('GATEHOUSE_') && name !== 'GATEHOUSE_TEST_DATABASE_URL') continue;
    env[name] = value;
  }
  return env;
}

/**
 * Runs `gatehouse <args>` in this process (runCommandLine, as main.ts runs it on the process's own
 * streams): the same parsing, configuration, store and output, without a Node.js start per command.
 * It reads only the environment and standard input given here, and closes everything it opened.
 * A command that keeps running (serve that starts) owns the process it runs in: use spawnCli.
 */
export async function runCli(args: string[], options: RunOptions = {}): Promise<RunResult> {
  let stdout = '';
  let stderr = '';
  const code = await runCommandLine(args, {
    env: { ...cleanEnv(), ...options.env },
    stdin: Readable.from([Buffer.from(options.stdin ?? '')]),
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  if (code < 0) throw new Error(`gatehouse ${args.join(' ')} kept running: spawn it (spawnCli)`);
  return { code, stdout, stderr };
}

/**
 * Runs `script` (the compiled CLI by default) as a process of its own, to its exit. For what only a
 * real process shows (bin/gatehouse.js, an exit code set by main.ts, a terminal, the modules a cold
 * start loads); everything else runs in process (runCli).
 */
export function spawnCli(args: string[], options: RunOptions = {}, script = CLI): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
      env: { ...cleanEnv(), ...options.env },
      stdio: 'pipe',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    // A failure bound only: a CLI run on a busy machine can take many seconds.
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.stdin ?? '');
  });
}

export function assertOk(result: RunResult): void {
  assert.equal(result.code, 0, `exit ${result.code}; stderr: ${result.stderr}`);
}

export function assertRefused(result: RunResult, code: number, stderrPattern: RegExp): void {
  assert.equal(
    result.code,
    code,
    `expected exit ${code}; stdout: ${result.stdout}; stderr: ${result.stderr}`,
  );
  assert.match(result.stderr, stderrPattern);
}

export const newSecret = (): string => randomBytes(32).toString('base64url');

/**
 * A place for one test's store, on either backend, with the CLI bound to it: a temp data directory
 * (SQLite), or a fresh PostgreSQL schema chosen through the URL's search_path (the CLI has no schema
 * option). Nothing is created in it until a command does so.
 */
export interface CliStore {
  backend: Backend;
  dataDir: string;
  /** The arguments naming the store. */
  args: string[];
  /** Runs the CLI on this store (in process), with `secret` as GATEHOUSE_SECRET when given. */
  cli(args: string[], options?: RunOptions & { secret?: string }): Promise<RunResult>;
  /** A storage handle on the same store (closed by cleanup). */
  open(): SqlStorage;
  cleanup(): Promise<void>;
}

export async function cliStore(backend: Backend): Promise<CliStore> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-cli-'));
  let schema: string | undefined;
  let args = ['--data-dir', dataDir];
  if (backend === 'postgres') {
    if (!TEST_DATABASE_URL) throw new Error('GATEHOUSE_TEST_DATABASE_URL is not set');
    schema = `cli_${randomBytes(6).toString('hex')}`;
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    await client.query(`CREATE SCHEMA ${schema}`);
    await client.end();
    const separator = TEST_DATABASE_URL.includes('?') ? '&' : '?';
    const url = `${TEST_DATABASE_URL}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    args = [...args, '--database-url', url];
  }
  const handles: SqlStorage[] = [];
  return {
    backend,
    dataDir,
    args,
    cli(cliArgs, options = {}) {
      const env = { ...options.env, ...(options.secret ? { GATEHOUSE_SECRET: options.secret } : {}) };
      const run = () => runCli([...cliArgs, ...args], { env, stdin: options.stdin });
      // A command on a store without a migration table scans every schema's catalog: it holds the
      // lock schema drops take (test/helpers/backends.ts).
      return backend === 'postgres' ? withSchemaLock('shared', run) : run();
    },
    open() {
      const storage = createSqlStorage({
        dataDir,
        databaseUrl: backend === 'postgres' ? TEST_DATABASE_URL : undefined,
        schema,
      });
      handles.push(storage);
      return storage;
    },
    async cleanup() {
      for (const handle of handles.splice(0)) await handle.close().catch(() => undefined);
      if (schema !== undefined) await dropTestSchema(schema);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
