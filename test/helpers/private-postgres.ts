import { execFile, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const BIN = '/usr/lib/postgresql/15/bin';

/**
 * Why a private PostgreSQL instance cannot be run here, or undefined when it can: Debian's
 * postgresql binaries, and root to run them as the `postgres` user (PostgreSQL refuses root).
 */
export function privatePostgresUnavailable(): string | undefined {
  if (!existsSync(join(BIN, 'initdb')) || !existsSync(join(BIN, 'pg_ctl'))) {
    return `${BIN}/initdb not found (apt-get install postgresql)`;
  }
  if (process.getuid?.() !== 0) return 'not root: cannot run PostgreSQL as the postgres user';
  if (spawnSync('id', ['-u', 'postgres'], { stdio: 'ignore' }).status !== 0) return 'no postgres user';
  return undefined;
}

export interface PrivatePostgres {
  /** postgres://postgres@127.0.0.1:PORT/postgres */
  url: string;
  port: number;
  start(): Promise<void>;
  /** pg_ctl stop -m fast: ends the sessions and shuts down. */
  stop(): Promise<void>;
  /** Stops it (immediately) and removes its directory. */
  destroy(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

const run = promisify(execFile);
const asPostgres = (command: string, args: string[]) =>
  run('runuser', ['-u', 'postgres', '--', join(BIN, command), ...args], { timeout: 120_000 });

/** initdb in a temp directory owned by postgres, on a free port, started; the caller destroys it. */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-pg-'));
  const { uid, gid } = (() => {
    const id = (flag: string) =>
      Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
    return { uid: id('-u'), gid: id('-g') };
  })();
  chownSync(dir, uid, gid);
  const data = join(dir, 'data');
  const port = await freePort();
  await asPostgres('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const pgCtl = (...args: string[]) =>
    asPostgres('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-o', options, '-w', '-t', '120', ...args]);
  const instance: PrivatePostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start: async () => void (await pgCtl('start')),
    stop: async () => void (await pgCtl('stop', '-m', 'fast')),
    async destroy() {
      await pgCtl('stop', '-m', 'immediate').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await instance.start();
  } catch (error) {
    await instance.destroy();
    throw error;
  }
  return instance;
}
