import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { safeEqual, sha256 } from '../shared/crypto.js';
import { ENDPOINTS } from '../config/endpoints.js';
import { errorLabel } from './error-label.js';
import type { GatehouseMetrics } from './metrics.js';
import { wasRateLimited } from './rate-limit.js';

// A caller's X-Request-Id is kept (so a trace spans the load balancer and Gatehouse) only when it is a
// plain token of bounded length: it goes into every log line, where anything else could forge entries.
const ACCEPTABLE_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/** Fastify's genReqId: the caller's X-Request-Id when acceptable, else a fresh UUID. */
export function requestId(request: IncomingMessage): string {
  const header = request.headers['x-request-id'];
  return typeof header === 'string' && ACCEPTABLE_REQUEST_ID.test(header) ? header : randomUUID();
}

/** The metrics text, from this process or (with --workers) aggregated over the cluster. */
export type MetricsCollector = () => Promise<{ contentType: string; body: string }>;

export interface ObservabilityOptions {
  metrics: GatehouseMetrics;
  collect: MetricsCollector;
  /** When set, /metrics wants `Authorization: Bearer <token>`. */
  metricsToken: string | undefined;
  /** Behind a proxy every connection may come from loopback, so loopback means nothing there. */
  trustProxy: boolean;
  basePath: string;
  /** Headers every response carries (the security headers), set with the request id. */
  responseHeaders?: Readonly<Record<string, string>>;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

function metricsAccess(
  request: FastifyRequest,
  options: ObservabilityOptions,
): 'ok' | 'unauthorized' | 'hidden' {
  if (options.metricsToken !== undefined) {
    const match = /^bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    // Hashing first gives equal lengths, so the comparison time says nothing about the token.
    return match?.[1] !== undefined && safeEqual(sha256(match[1]), sha256(options.metricsToken))
      ? 'ok'
      : 'unauthorized';
  }
  // No token configured: only a scraper on this machine, talking to this process directly, is served.
  return !options.trustProxy && LOOPBACK.has(request.socket.remoteAddress ?? '') ? 'ok' : 'hidden';
}

/**
 * Request ids in responses, request metrics, OAuth error counts, and GET /metrics. Hooks are added to
 * the root instance so that they see every route, whichever plugin registered it.
 */
export function installObservability(app: FastifyInstance, options: ObservabilityOptions): void {
  const { metrics } = options;
  // The implicit grant issues its token in the redirect's fragment (RFC 6749 §4.2.2), not at /token.
  const countImplicitToken = (location: unknown) => {
    if (typeof location !== 'string') return;
    const hash = location.indexOf('#');
    if (hash === -1 || !location.includes('access_token=', hash)) return;
    const tokenType = new URLSearchParams(location.slice(hash + 1)).get('token_type')?.toLowerCase();
    metrics.tokenIssued('implicit', tokenType === 'mac' ? 'mac' : 'bearer');
  };
  const responseHeaders = Object.entries(options.responseHeaders ?? {});
  /** The error a request failed with, until its response is sent and counted. */
  const failures = new WeakMap<FastifyRequest, Error>();
  // Callback-style hooks, one per stage: they run on every request, and each hook (a promise all the
  // more) is measurable there.
  app.addHook('onRequest', function responseHeadersAndId(request, reply, done) {
    for (const [name, value] of responseHeaders) reply.header(name, value);
    reply.header('x-request-id', request.id);
    done();
  });
  app.addHook('onResponse', function countAndLog(request, reply, done) {
    // Route patterns, never raw URLs: label values must stay a small, fixed set.
    const route = request.routeOptions.url ?? 'unmatched';
    const elapsedMs = reply.elapsedTime;
    // The one access-log line per request (the request id is in request.log's bindings).
    request.log.info(
      {
        method: request.method,
        path: route,
        status: reply.statusCode,
        ms: Math.round(elapsedMs * 100) / 100,
      },
      'request',
    );
    metrics.request(route, request.method, reply.statusCode, elapsedMs / 1000);
    // Rate limits count themselves; any other 429 is a lockout after failed passwords.
    if (reply.statusCode === 429 && !wasRateLimited(request)) metrics.throttled(route, 'password_attempts');
    if (reply.statusCode === 302) countImplicitToken(reply.getHeader('location'));
    const error = failures.get(request);
    if (error !== undefined) metrics.oauthError(route, errorLabel(error, reply.statusCode));
    done();
  });
  // onError runs before the error handler decides the status, so the error is counted once the
  // response is sent, by what it was answered with: server_error only for a 5xx.
  app.addHook('onError', function noteError(request, _reply, error, done) {
    failures.set(request, error);
    done();
  });

  app.get(`${options.basePath}${ENDPOINTS.metrics.path}`, async function prometheusMetrics(request, reply) {
    const access = metricsAccess(request, options);
    if (access === 'hidden') {
      reply.code(404);
      return { error: 'not_found', error_description: 'no such endpoint' };
    }
    if (access === 'unauthorized') {
      reply.code(401).header('www-authenticate', 'Bearer realm="metrics"');
      return { error: 'invalid_token', error_description: 'metrics need the configured bearer token' };
    }
    const { contentType, body } = await options.collect();
    reply.header('content-type', contentType).header('cache-control', 'no-store');
    return body;
  });
}
