/**
 * Whether a request failed because the store cannot be reached right now (PostgreSQL down, restarting
 * or refusing connections; SQLite locked past its busy timeout) rather than because of a fault in
 * Gatehouse. Such a request is answered 503 with Retry-After (RFC 9110 §15.6.4, §10.2.3): the client
 * may repeat it once the store is back, and nothing was changed, since every change is one
 * transaction that did not commit.
 */
export function isStoreUnavailable(error: unknown): boolean {
  let cause: unknown = error;
  for (let depth = 0; cause instanceof Error && depth < 5; depth++) {
    const { code, message } = cause as Error & { code?: unknown };
    if (typeof code === 'string') {
      if (NETWORK_CODES.has(code) || code === 'SQLITE_BUSY') return true;
      // SQLSTATE class 08 (connection exception), 57P01-57P03 (server shutting down, crashed,
      // starting up), 53300 (too many connections).
      if (/^08[0-9A-Z]{3}$/.test(code) || /^57P0[1-3]$/.test(code) || code === '53300') return true;
    }
    // node-postgres reports a connection lost mid-statement, or a pool that cannot connect, by message.
    if (PG_CONNECTION_MESSAGES.some((pattern) => pattern.test(message))) return true;
    cause = (cause as Error & { cause?: unknown }).cause;
  }
  return false;
}

/** How long a client is asked to wait before repeating a request the store could not serve. */
export const STORE_RETRY_AFTER_SECONDS = 5;

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

const PG_CONNECTION_MESSAGES = [
  /^Connection terminated/,
  /^Client has encountered a connection error and is not queryable$/,
  /^timeout exceeded when trying to connect$/,
  /^Client was closed and is not queryable$/,
];
