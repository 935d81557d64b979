import autocannon from 'autocannon';
import { runProbe } from './probe.js';

/** What one load run sends. */
export interface LoadSpec {
  /** Base URL, e.g. https://127.0.0.1:8443 */
  url: string;
  path: string;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  /** Seconds. */
  duration: number;
  /**
   * Requests per second over all connections, sent evenly (a latency probe, see open-loop.ts); unset
   * means as fast as the server answers (autocannon).
   */
  overallRate?: number;
  /**
   * Fixed-rate probe only: seconds of the same load sent before the measured `duration`, on the same
   * connections and without a break; their answers count in the status codes and errors, their
   * latencies nowhere. Measured after a warm-up probe of its own instead, each run began with 20 new
   * TLS connections and half a second of 50-190 ms episodes, with and without a purge alike (the
   * purge bench, 5 s runs).
   */
  leadInSeconds?: number;
  /** The server's certificate, trusted for this run only (no rejectUnauthorized: false). */
  ca: string;
  /** One body per connection (round robin), e.g. one user per connection; overrides `body`. */
  bodies?: string[];
  /** Called with the first 2xx response body of the run (e.g. to verify a token afterwards). */
  onFirstSuccess?: (body: string) => void;
  /**
   * Headers made afresh for every request (a DPoP proof, single use: RFC 9449 §11.1), over `headers`;
   * synchronous, as autocannon builds each request. Not for the fixed-rate probe.
   */
  headersFor?: () => Record<string, string>;
}

export interface LoadResult {
  rps: number;
  /** Milliseconds. */
  p50: number;
  p90: number;
  p99: number;
  max: number;
  requests: number;
  non2xx: number;
  /** Connection errors, timeouts included. */
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  seconds: number;
  /** Fixed-rate probe only: the p99 of each whole second's requests (by when they were due). */
  secondP99s?: number[];
}

/**
 * One load run in this process over keep-alive HTTPS connections: a fixed-rate probe when the spec has
 * a rate, otherwise autocannon as fast as the server answers.
 */
export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  if (spec.overallRate !== undefined) return runProbe({ ...spec, overallRate: spec.overallRate });
  let sampled = false;
  const onResponse = spec.onFirstSuccess
    ? (status: number, body: string) => {
        if (!sampled && status >= 200 && status < 300) {
          sampled = true;
          spec.onFirstSuccess?.(body);
        }
      }
    : undefined;
  const request = {
    method: spec.method,
    path: spec.path,
    headers: spec.headers ?? {},
    ...(spec.body !== undefined ? { body: spec.body } : {}),
    ...(onResponse ? { onResponse } : {}),
    ...(spec.headersFor
      ? {
          setupRequest: (request: autocannon.Request) => ({
            ...request,
            headers: { ...request.headers, ...spec.headersFor?.() },
          }),
        }
      : {}),
  };
  const bodies = spec.bodies;
  let next = 0;
  // autocannon shares the request objects between connections, so each connection gets its own copy.
  const setupClient = bodies
    ? (client: autocannon.Client) =>
        client.setRequests([{ ...request, body: bodies[next++ % bodies.length] }])
    : undefined;
  const result = await autocannon({
    url: spec.url,
    ...(setupClient ? { setupClient } : {}),
    connections: spec.connections,
    duration: spec.duration,
    pipelining: 1,
    tlsOptions: { ca: spec.ca, servername: 'localhost' },
    requests: [request],
  });
  const statusCodes: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) {
    statusCodes[code] = stat.count ?? 0;
  }
  return {
    rps: result.requests.total / result.duration,
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    max: result.latency.max,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    seconds: result.duration,
  };
}
