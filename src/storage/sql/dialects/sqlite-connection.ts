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
  const raw = new BetterSqlite3(filename);
  raw.pragma('journal_mode = WAL');
  raw.pragma(`synchronous = ${synchronous}`);
  raw.pragma('foreign_keys = ON');
  // Another process (the CLI next to a running server, the purge process) may hold the write lock briefly.
  raw.pragma('busy_timeout = 5000');
  return raw;
}
