import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { runCommandLine } from '../../src/cli/command-line.js';
import { HttpsClient } from './https-client.js';

/** The compiled CLI next to this compiled test, whatever the output folder. */
export const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

/** One server secret for every process of a test: processes sharing a store must share it. */
export const TEST_SECRET = randomBytes(32).toString('base64url');

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface SpawnOptions {
  dataDir: string;
  databaseUrl?: string;
  port?: number;
  workers?: number;
  logLevel?: string;
  env?: Record<string, string>;
  args?: string[];
}

export interface SpawnedServer {
  url: string;
  port: number;
  /** The development certificate the server made in its data directory. */
  ca: string;
  http: HttpsClient;
  child: ChildProcess;
  /** Everything the process wrote so far, stdout then stderr interleaved. */
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL, then waits for the exit. */
  kill(): Promise<void>;
}

/** The environment of a spawned server: nothing inherited that could point it elsewhere. */
export function serverEnv(options: SpawnOptions): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    GATEHOUSE_SECRET: TEST_SECRET,
    GATEHOUSE_DATA_DIR: options.dataDir,
    GATEHOUSE_LOG_LEVEL: options.logLevel ?? 'warn',
    ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}),
    ...options.env,
  };
}

/**
 * Runs `gatehouse <args>` to completion (migrate, keys rotate, …) with a spawned server's environment.
 * In this process (runCommandLine): a command beside the servers, which learn of it through the store,
 * as of an operator's command; the servers are the processes under test.
 */
export async function runCli(
  args: string[],
  options: SpawnOptions,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCommandLine(args, {
    env: serverEnv(options),
    stdin: Readable.from([]),
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  if (code < 0) throw new Error(`gatehouse ${args.join(' ')} kept running: use spawnServer`);
  return { code, stdout, stderr };
}

/** Starts `gatehouse serve` as a real process and waits until /readyz answers 200. */
export async function spawnServer(options: SpawnOptions): Promise<SpawnedServer> {
  const port = options.port ?? (await freePort());
  const args = [CLI, 'serve', '--port', String(port), '--host', '127.0.0.1', ...(options.args ?? [])];
  if (options.workers !== undefined) args.push('--workers', String(options.workers));
  const child = spawn(process.execPath, args, { env: serverEnv(options), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  let gone = false;
  void exited.then(() => (gone = true));

  const url = `https://127.0.0.1:${port}`;
  const certPath = join(options.dataDir, 'tls', 'cert.pem');
  // A guard against a hang only, not a measure of speed: start-up on a busy machine takes what it takes.
  const deadline = Date.now() + 180_000;
  let http: HttpsClient | undefined;
  let ready = false;
  while (!ready && Date.now() < deadline) {
    if (gone) throw new Error(`server exited during start-up:\n${output}`);
    // The certificate is read once the server says it listens, so never while it is being written;
    // a client whose request failed is made again, so one bad read cannot outlast the loop.
    if (output.includes('listening on')) {
      try {
        http ??= new HttpsClient(url, readFileSync(certPath, 'utf8'));
        ready = (await http.request('/readyz')).status === 200;
      } catch {
        http?.close();
        http = undefined;
      }
    }
    if (!ready) await sleep(50);
  }
  if (http === undefined || !ready) {
    child.kill('SIGKILL');
    throw new Error(`server did not become ready:\n${output}`);
  }
  const client = http;
  return {
    url,
    port,
    ca: readFileSync(certPath, 'utf8'),
    http: client,
    child,
    output: () => output,
    exited,
    async stop() {
      client.close();
      if (!gone) child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      client.close();
      if (!gone) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** A fresh PostgreSQL database for process tests (the CLI has no --schema): created, then dropped. */
export async function createDatabase(adminUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `gh_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}
