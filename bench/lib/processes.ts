import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { httpsRequest } from './https.js';

/** Compiled files, located relative to this module so any outDir works (dist/, .build/<name>/). */
export const GATEHOUSE_MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
export const PEER_SERVER = fileURLToPath(new URL('../peer-server.js', import.meta.url));
export const ARGON2_PEER = fileURLToPath(new URL('../argon2-peer.js', import.meta.url));
export const RS_JWT_PEER = fileURLToPath(new URL('../rs-jwt-peer.js', import.meta.url));
export const RS_DPOP_PEER = fileURLToPath(new URL('../rs-dpop-peer.js', import.meta.url));
export const OAUTH2_SERVER_PEER = fileURLToPath(new URL('../peers/oauth2-server.js', import.meta.url));
export const OIDC_PROVIDER_PEER = fileURLToPath(new URL('../peers/oidc-provider.js', import.meta.url));
export const OIDC_UPSTREAM_PEER = fileURLToPath(new URL('../peers/oidc-upstream.js', import.meta.url));
export const SIGN_COST = fileURLToPath(new URL('../sign-cost.js', import.meta.url));

let tasksetChecked: boolean | undefined;

/** taskset (util-linux) pins a process to given cores; without it the bench runs unpinned and says so. */
export function hasTaskset(): boolean {
  tasksetChecked ??= spawnSync('taskset', ['--version'], { stdio: 'ignore' }).status === 0;
  return tasksetChecked;
}

/** Pins every thread of this process (autocannon's included) to the given cores. */
export function pinSelf(cpus: string): boolean {
  if (!hasTaskset()) return false;
  return (
    spawnSync('taskset', ['-a', '-p', '-c', cpus, String(process.pid)], { stdio: 'ignore' }).status === 0
  );
}

/**
 * The command that runs `node args` on the given cores. A child inherits the driver's own affinity
 * (core 1), so "unpinned" children are explicitly given every core.
 */
export function nodeCommand(cpus: string | undefined, args: string[]): { file: string; args: string[] } {
  if (!hasTaskset()) return { file: process.execPath, args };
  return { file: 'taskset', args: ['-c', cpus ?? allCpus(), process.execPath, ...args] };
}

export function allCpus(): string {
  const text = readFileSync('/sys/devices/system/cpu/online', 'utf8').trim();
  return text === '' ? '0' : text;
}

export interface CliTarget {
  dataDir: string;
  databaseUrl?: string;
}

function targetArgs(target: CliTarget): string[] {
  return [
    '--data-dir',
    target.dataDir,
    ...(target.databaseUrl ? ['--database-url', target.databaseUrl] : []),
  ];
}

/** Runs one `gatehouse` command to completion and parses its `--json` output. */
export function runCli<T>(target: CliTarget, args: string[], stdin?: string, env?: NodeJS.ProcessEnv): T {
  const result = spawnSync(process.execPath, [GATEHOUSE_MAIN, ...args, ...targetArgs(target), '--json'], {
    input: stdin ?? '',
    encoding: 'utf8',
    env: { ...process.env, GATEHOUSE_LOG_LEVEL: 'warn', ...env },
  });
  if (result.status !== 0) {
    throw new Error(`gatehouse ${args[0]} ${args[1] ?? ''} failed (${result.status}): ${result.stderr}`);
  }
  return JSON.parse(result.stdout) as T;
}

/** Runs `node args` on the given cores to completion and parses the JSON line it prints. */
export function runNodeJson<T>(cpus: string | undefined, args: string[]): Promise<T> {
  const command = nodeCommand(cpus, args);
  return new Promise((resolve, reject) => {
    const child = spawn(command.file, command.args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code === 0) resolve(JSON.parse(out) as T);
      else reject(new Error(`node ${args[0] ?? ''} failed (${code}): ${err.slice(-2000)}`));
    });
  });
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** A child server process the bench started and will stop. */
export class ServerProcess {
  private stderrTail = '';
  private exited: Promise<number | null>;

  private constructor(
    readonly label: string,
    readonly child: ChildProcess,
    readonly url: string,
  ) {
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-4000);
    });
    child.stdout?.resume();
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** Starts `node args` on `cpus` and waits until GET /healthz answers over HTTPS. */
  static async start(options: {
    label: string;
    args: string[];
    port: number;
    cpus: string | undefined;
    ca: () => string;
    env?: NodeJS.ProcessEnv;
    nodeFlags?: string[];
  }): Promise<ServerProcess> {
    const command = nodeCommand(options.cpus, [...(options.nodeFlags ?? []), ...options.args]);
    const child = spawn(command.file, command.args, {
      env: { ...process.env, GATEHOUSE_LOG_LEVEL: 'warn', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const server = new ServerProcess(options.label, child, `https://127.0.0.1:${options.port}`);
    await server.waitReady(options.ca);
    return server;
  }

  private async waitReady(ca: () => string): Promise<void> {
    const deadline = Date.now() + 60_000;
    let exitCode: number | null | undefined;
    void this.exited.then((code) => (exitCode = code ?? -1));
    for (;;) {
      if (exitCode !== undefined) {
        throw new Error(`${this.label} exited (${exitCode}) before it was ready: ${this.stderrTail}`);
      }
      try {
        // The certificate may only exist once the server has generated it, hence the function.
        const response = await httpsRequest(`${this.url}/healthz`, { ca: ca() });
        if (response.status === 200) return;
      } catch {
        // Not listening yet.
      }
      if (Date.now() > deadline) throw new Error(`${this.label} not ready after 60 s: ${this.stderrTail}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Process-tree CPU seconds (user + system) so far: this process and its cluster workers. */
  cpuSeconds(): number {
    return treeCpuSeconds(this.pid);
  }

  /** CPU seconds of the main thread (the event loop) alone: what argon2's pool threads are not. */
  mainThreadCpuSeconds(): number {
    return processCpuSeconds(this.pid, `/proc/${this.pid}/task/${this.pid}/stat`);
  }

  /**
   * Resident memory (VmRSS) in bytes, of this process alone (with --workers, the primary's). NaN when
   * it has exited or /proc is missing.
   */
  rssBytes(): number {
    return residentBytes(this.pid);
  }

  /** SIGTERM (graceful drain, which also flushes a --cpu-prof profile), then SIGKILL after 20 s. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 20_000);
    await this.exited;
    clearTimeout(timer);
  }
}

/** VmRSS of /proc/<pid>/status (kB there, bytes here). */
export function residentBytes(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match?.[1] === undefined ? NaN : Number(match[1]) * 1024;
  } catch {
    return NaN;
  }
}

const CLOCK_TICKS = 100; // USER_HZ on Linux

function processCpuSeconds(pid: number, file = `/proc/${pid}/stat`): number {
  try {
    const stat = readFileSync(file, 'utf8');
    // Fields after the parenthesised command name: utime is the 14th field, stime the 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

function childPids(pid: number): number[] {
  const pids: number[] = [];
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
      if (text !== '') pids.push(...text.split(' ').map(Number));
    }
  } catch {
    // The process is gone.
  }
  return pids;
}

function treeCpuSeconds(pid: number): number {
  return processCpuSeconds(pid) + childPids(pid).reduce((sum, child) => sum + treeCpuSeconds(child), 0);
}
