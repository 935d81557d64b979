import { httpsRequest } from './https.js';

/** Statements the store has run so far, by operation (select, insert, update, delete, raw). */
export type StatementCounts = Record<string, number>;

const COUNTER = /^gatehouse_store_query_duration_seconds_count\{([^}]*)\}\s+([0-9.e+]+)$/;

/**
 * Reads `gatehouse_store_query_duration_seconds_count` from GET /metrics: the store's query observer
 * counts every statement, Kysely's and the prepared ones on the hot path alike. /metrics answers a
 * loopback caller when no metrics token is set (src/http/observability.ts).
 */
export async function readStatementCounts(serverUrl: string, ca: string): Promise<StatementCounts> {
  const response = await httpsRequest(`${serverUrl}/metrics`, { ca });
  if (response.status !== 200) throw new Error(`/metrics answered ${response.status}`);
  const counts: StatementCounts = {};
  for (const line of response.body.split('\n')) {
    const match = COUNTER.exec(line);
    if (match === null) continue;
    const operation = /operation="([^"]*)"/.exec(match[1]!)?.[1] ?? 'other';
    counts[operation] = (counts[operation] ?? 0) + Number(match[2]);
  }
  return counts;
}

/** after - before, per operation, zeros left out. */
export function statementDelta(before: StatementCounts, after: StatementCounts): StatementCounts {
  const delta: StatementCounts = {};
  for (const [operation, count] of Object.entries(after)) {
    const difference = count - (before[operation] ?? 0);
    if (difference !== 0) delta[operation] = difference;
  }
  return delta;
}

export const totalStatements = (counts: StatementCounts): number =>
  Object.values(counts).reduce((sum, count) => sum + count, 0);
