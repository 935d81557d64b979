import type { LogEvent, RootOperationNode } from 'kysely';

/** One statement the store ran: what kind, how long it took, whether it failed. */
export interface QueryEvent {
  /** select, insert, update, delete, or raw (statements written with `sql`, such as the purge). */
  operation: string;
  durationMs: number;
  failed: boolean;
}

export type QueryListener = (event: QueryEvent) => void;

const OPERATIONS: Record<string, string> = {
  SelectQueryNode: 'select',
  InsertQueryNode: 'insert',
  UpdateQueryNode: 'update',
  DeleteQueryNode: 'delete',
  RawNode: 'raw',
};

/** The kind of statement a compiled query is, as metrics name it. */
export function operationOf(query: RootOperationNode): string {
  return OPERATIONS[query.kind] ?? 'other';
}

/**
 * Kysely's log hook, fanned out to listeners (metrics). It sees every statement with its duration, so
 * store latency and statements per request are measured where they happen, not guessed.
 */
export function createQueryObserver(): {
  log: (event: LogEvent) => void;
  /** Reports a statement run outside Kysely (a prepared query, prepared-query.ts). */
  emit: (event: QueryEvent) => void;
  observe: (listener: QueryListener) => () => void;
} {
  const listeners = new Set<QueryListener>();
  return {
    emit(event) {
      for (const listener of listeners) listener(event);
    },
    log(event) {
      if (listeners.size === 0) return;
      const observed: QueryEvent = {
        operation: operationOf(event.query.query),
        durationMs: event.queryDurationMillis,
        failed: event.level === 'error',
      };
      for (const listener of listeners) listener(observed);
    },
    observe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
