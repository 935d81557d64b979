import { chmodSync, closeSync, openSync, statSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';

/** How a Gatehouse connection commits: see SqliteOptions.synchronous. */
export type SqliteSynchronous = 'FULL' | 'NORMAL';

/**
 * Opens a connection with the settings every Gatehouse connection to the store shares: the request
 * connection and the purge process's alike, so a cascade or a lock wait behaves the same on both.
 */
export function openSqliteConnection(
  filename: string,
  synchronous: SqliteSynchronous,
): BetterSqlite3.Database {
  if (filename !== ':memory:') ownerOnly(filename, true);
  let raw: BetterSqlite3.Database;
  try {
    raw = new BetterSqlite3(filename);
  } catch (error) {
    throw sqliteDriverFailure(error) ?? error;
  }
  raw.pragma('journal_mode = WAL');
  // SQLite gives the -wal and -shm files the database file's mode when it creates them; these may
  // predate it (a store from an older version).
  if (filename !== ':memory:') for (const suffix of ['-wal', '-shm']) ownerOnly(filename + suffix, false);
  raw.pragma(`synchronous = ${synchronous}`);
  raw.pragma('foreign_keys = ON');
  // Another process (the CLI next to a running server, the purge process) may hold the write lock briefly.
  raw.pragma('busy_timeout = 5000');
  return raw;
}

/**
 * better-sqlite3 loads its compiled addon when the first database opens. An install that skipped the
 * build (npm 12 runs a dependency's install script only when `allowScripts` allows it), or one built
 * for another Node.js, fails there with the loader's own words, which say nothing of the fix: this
 * says what to run. Undefined for any other failure (a path that cannot be opened, say).
 */
export function sqliteDriverFailure(error: unknown): Error | undefined {
  const message = error instanceof Error ? error.message : '';
  const missing = message.includes('Could not locate the bindings file');
  const foreign = /NODE_MODULE_VERSION|invalid ELF header|wrong ELF class|not a valid Win32 application/.test(
    message,
  );
  if (!missing && !foreign) return undefined;
  return new Error(
    `SQLite's driver (better-sqlite3) ${missing ? 'has no compiled addon' : 'was compiled for another Node.js or platform'}: ` +
      'run `npm rebuild better-sqlite3` where Gatehouse is installed (it needs Python, make and a C++ compiler ' +
      'where no prebuilt binary fits). npm 12 skips that build unless package.json allows it: run ' +
      '`npm install-scripts approve better-sqlite3` first (docs/deployment.md)',
    { cause: error },
  );
}

/**
 * Makes `file` readable and writable by its owner only (0600, like the server secret): the store holds
 * password and token hashes and the user names people tried to sign in with. Created so when `create`
 * and it is missing (before SQLite creates it with the umask's 0644); an existing file's mode is fixed.
 */
function ownerOnly(file: string, create: boolean): void {
  let mode: number;
  try {
    mode = statSync(file).mode & 0o777;
  } catch {
    if (create) closeSync(openSync(file, 'a', 0o600));
    return;
  }
  if (mode !== 0o600) chmodSync(file, 0o600);
}
