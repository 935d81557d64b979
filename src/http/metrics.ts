import { collectDefaultMetrics, Counter, Registry } from 'prom-client';
import { SeriesHistogram } from './series-histogram.js';

/**
 * The Prometheus metrics of one Gatehouse process, in a registry of its own (tests run several apps
 * in one process; the global registry would clash). Labels are bounded sets only: route patterns,
 * never raw URLs; error codes from RFC 6749; table names.
 */
export interface GatehouseMetrics {
  readonly registry: Registry;
  request(route: string, method: string, status: number, seconds: number): void;
  tokenIssued(grantType: string, tokenType: string): void;
  oauthError(route: string, error: string): void;
  throttled(route: string, limit: string): void;
  purged(table: string, rows: number): void;
  storeQuery(operation: string, seconds: number, failed: boolean): void;
}

/** The dashboard's figures (core/ops/figures.ts, decision 43): told of the same events, in memory. */
export interface FigureCounts {
  request(seconds: number): void;
  count(series: 'token_responses' | 'errors', label: string): void;
}

export interface MetricsOptions {
  /** Process metrics (CPU, memory, event-loop lag, GC): on in servers, off in tests. */
  processMetrics?: boolean;
  /** Where the dashboard's figures are counted beside the Prometheus metrics (decision 43). */
  figures?: FigureCounts;
}

export function createMetrics(options: MetricsOptions = {}): GatehouseMetrics {
  const registry = new Registry();
  if (options.processMetrics) collectDefaultMetrics({ register: registry, prefix: 'gatehouse_' });

  // The two counters every request (and every token) moves count in plain numbers, handed to
  // prom-client when it is read (collect): its inc() hashes the labels on every call, child or not.
  const pending: PendingCount[] = [];
  const flushPending = () => {
    for (const entry of pending) {
      if (entry.count === 0) continue;
      entry.child.inc(entry.count);
      entry.count = 0;
    }
  };
  const requests = new Counter({
    name: 'gatehouse_http_requests_total',
    help: 'HTTP requests answered, by route pattern, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
    collect: flushPending,
  });
  const latency = new SeriesHistogram(
    'gatehouse_http_request_duration_seconds',
    'Time from request received to response sent, by route pattern and method',
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registry,
  );
  const tokens = new Counter({
    name: 'gatehouse_tokens_issued_total',
    help: 'Tokens issued, by grant type and token type (bearer, mac, refresh)',
    labelNames: ['grant_type', 'token_type'] as const,
    registers: [registry],
    collect: flushPending,
  });
  const pendingCount = (child: { inc(value: number): void }): PendingCount => {
    const entry = { child, count: 0 };
    pending.push(entry);
    return entry;
  };
  const errors = new Counter({
    name: 'gatehouse_oauth_errors_total',
    help: 'OAuth error responses, by route pattern and RFC 6749 error code',
    labelNames: ['route', 'error'] as const,
    registers: [registry],
  });
  const throttled = new Counter({
    name: 'gatehouse_throttled_total',
    help: 'Requests refused with 429, by route pattern and the limit that refused them',
    labelNames: ['route', 'limit'] as const,
    registers: [registry],
  });
  const purged = new Counter({
    name: 'gatehouse_purged_rows_total',
    help: 'Dead rows deleted by the automatic purge, by table',
    labelNames: ['table'] as const,
    registers: [registry],
  });
  // A SeriesHistogram like the request latency: most requests run a statement or two, and
  // prom-client's observe() hashed the labels each time (1-2% of an introspection's CPU profile).
  const store = new SeriesHistogram(
    'gatehouse_store_query_duration_seconds',
    'Duration of each store statement, by operation; _count is the number of statements',
    [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registry,
  );

  // Label sets are few and fixed (route patterns, methods, statuses); resolving each one's child metric
  // once keeps prom-client's per-call label hashing off the request path.
  const requestChild = memoByKey((route: string, method: string, status: number) => ({
    count: pendingCount(requests.labels({ route, method, status: String(status) })),
    observe: latency.series({ route, method }),
  }));
  const tokenChild = memoByKey((grantType: string, tokenType: string) =>
    pendingCount(tokens.labels({ grant_type: grantType, token_type: tokenType })),
  );
  const storeChild = memoByKey((operation: string, outcome: string) => store.series({ operation, outcome }));

  const { figures } = options;
  return {
    registry,
    request(route, method, status, seconds) {
      const child = requestChild(route, method, status);
      child.count.count += 1;
      child.observe(seconds);
      figures?.request(seconds);
    },
    tokenIssued(grantType, tokenType) {
      tokenChild(grantType, tokenType).count += 1;
      // One token response per access token; its refresh token is no other response.
      if (tokenType !== 'refresh') figures?.count('token_responses', grantType);
    },
    oauthError(route, error) {
      errors.inc({ route, error });
      figures?.count('errors', error);
    },
    throttled(route, limit) {
      throttled.inc({ route, limit });
    },
    purged(table, rows) {
      purged.inc({ table }, rows);
    },
    storeQuery(operation, seconds, failed) {
      storeChild(operation, failed ? 'error' : 'ok')(seconds);
    },
  };
}

/** Increments not yet handed to a prom-client counter's child. */
interface PendingCount {
  child: { inc(value: number): void };
  count: number;
}

/** Caches `make`'s result per distinct argument list (label values never contain a NUL). */
function memoByKey<A extends (string | number)[], R>(make: (...args: A) => R): (...args: A) => R {
  const cache = new Map<string, R>();
  return (...args: A) => {
    const key = args.join('\u0000');
    let value = cache.get(key);
    if (value === undefined) {
      value = make(...args);
      cache.set(key, value);
    }
    return value;
  };
}
