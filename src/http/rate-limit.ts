import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RateLimit, RateLimitedEndpoint } from '../config.js';
import { BatchedRateCounter } from '../core/ops/batched-rate-counter.js';
import { claimedClientId } from '../core/clients/client-assertion.js';
import { isDocumentClientId } from '../core/clients/metadata-documents.js';
import { requestSource } from '../core/users/account-lockout.js';
import { RATE_LIMITED } from '../core/errors.js';
import type { RateLimitStore } from '../core/ports.js';
import type { Clock } from '../shared/clock.js';
import { sha256 } from '../shared/crypto.js';
import { rateLimitedRoutes } from '../config/endpoints.js';
import type { GatehouseMetrics } from './metrics.js';

export interface RateLimitOptions {
  store: RateLimitStore;
  clock: Clock;
  limits: Record<RateLimitedEndpoint, RateLimit>;
  windowSeconds: number;
  basePath: string;
  metrics: GatehouseMetrics;
  flushIntervalMs?: number;
}

const BROWSER_ENDPOINTS: ReadonlySet<RateLimitedEndpoint> = new Set(['authorize', 'signIn', 'logout']);

/**
 * Endpoints counted per address only: no client authenticates there (a user's password, a user's access
 * token, a browser signing out).
 */
const ADDRESS_ONLY: ReadonlySet<RateLimitedEndpoint> = new Set(['signIn', 'userinfo', 'logout']);

const limited = new WeakSet<FastifyRequest>();

/** Whether this request was refused by a rate limit (rather than, say, an account lockout). */
export function wasRateLimited(request: FastifyRequest): boolean {
  return limited.has(request);
}

function field(source: unknown, name: string): string | undefined {
  if (typeof source !== 'object' || source === null) return undefined;
  const value = (source as Record<string, unknown>)[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * The client a request is counted under, as a counter key. A request that carries a client secret is
 * counted per client, and the secret is part of the key: a request naming a confidential client
 * without its secret counts against another key, so nobody who merely knows a client id can spend that
 * client's allowance. A request without a secret (a public client, and every /authorize request, which
 * has no client authentication) proves nothing about who sent it, so it is counted per client *and
 * address*: a few addresses naming an honest client's id use up only their own allowance, never the
 * one its users share. A client assertion (RFC 7523) is new on every request and proves nothing
 * before it is checked, so it counts like no secret, under the client it names. Hashed: the key holds
 * no secret and is short whatever the request sends.
 */
function clientIdentity(
  request: FastifyRequest,
  endpoint: RateLimitedEndpoint,
  address: string,
): string | undefined {
  // Decision 46: every id on one host is one client, so minting URLs on a host buys no allowance.
  const unauthenticated = (id: string | undefined) => id && `ca:${sha256(`${countedAs(id)}\n${address}`)}`;
  if (ADDRESS_ONLY.has(endpoint)) return undefined;
  if (endpoint === 'authorize') return unauthenticated(field(request.query, 'client_id'));
  const header = request.headers.authorization;
  if (header !== undefined && /^basic\s/i.test(header)) {
    // RFC 6749 §2.3.1: Basic with the client id and secret; the raw pair is enough to tell clients apart.
    const pair = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
    const colon = pair.indexOf(':');
    return colon > 0 ? `c:${sha256(`${pair.slice(0, colon)}\n${pair.slice(colon + 1)}`)}` : undefined;
  }
  const assertion = field(request.body, 'client_assertion');
  const id = field(request.body, 'client_id') ?? (assertion && claimedClientId(assertion));
  if (assertion !== undefined) return unauthenticated(id);
  const secret = field(request.body, 'client_secret');
  return secret === undefined ? unauthenticated(id) : id && `c:${sha256(`${id}\n${secret}`)}`;
}

/** A Client ID Metadata Document's id counts as its host (decision 46); any other id as itself. */
function countedAs(id: string): string {
  return isDocumentClientId(id) ? `host:${new URL(id).host}` : id;
}

function refuse(reply: FastifyReply, browser: boolean, retryAfter: number): FastifyReply {
  reply.code(429).header('retry-after', String(retryAfter)).header('cache-control', 'no-store');
  if (browser) {
    return reply
      .type('text/html; charset=utf-8')
      .send(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Too many requests</title></head>` +
          `<body><h1>Too many requests</h1><p>Please wait ${retryAfter} seconds and try again.</p></body></html>`,
      );
  }
  return reply
    .type('application/json;charset=UTF-8')
    .header('pragma', 'no-cache')
    .send(
      JSON.stringify({
        error: RATE_LIMITED,
        error_description: 'too many requests; retry after the delay in Retry-After',
      }),
    );
}

/**
 * Request rate limits per address and per client on /token (and /par, /device_authorization),
 * /authorize, /introspect, /revoke; per address on the sign-in page and the device verification page,
 * /userinfo and /logout (429 with Retry-After). The counters are fixed windows merged into the shared store, so the
 * limits hold across every process (see BatchedRateCounter for the precision across processes).
 */
export function installRateLimits(app: FastifyInstance, options: RateLimitOptions): void {
  const enabled = Object.values(options.limits).some((l) => l.perAddress > 0 || l.perClient > 0);
  if (!enabled) return;
  // Counted locally and merged into the shared store in the background: no store round-trip per request.
  const windowCounter = new BatchedRateCounter({
    store: options.store,
    windowSeconds: options.windowSeconds,
    flushIntervalMs: options.flushIntervalMs ?? 250,
    onError: (error) => app.log.warn({ err: error }, 'rate-limit counters not merged; retrying'),
  });
  app.addHook('onClose', async function flushRateLimits() {
    windowCounter.stop();
    await windowCounter.flush().catch(() => undefined);
  });
  // Which routes count, and in which bucket: the endpoint table's decisions (endpoints.ts).
  const routes = rateLimitedRoutes(options.basePath);

  // requestSource of the last address seen: a keep-alive connection sends the same one every time.
  let lastIp: string | undefined;
  let lastSource = '';

  // preHandler: the body is parsed by now (a form's client_id), and nothing has been done yet.
  // Callback style, without arrays per request: it runs on every limited request.
  app.addHook('preHandler', function rateLimit(request, reply, done) {
    const route = request.routeOptions.url;
    const endpoint = route === undefined ? undefined : routes.get(`${request.method} ${route}`);
    if (endpoint === undefined) return done();
    const limit = options.limits[endpoint];
    // An IPv6 address counts by its /64, and no key grows with a forwarded value (requestSource).
    const ip = request.ip;
    if (ip !== lastIp) {
      lastSource = requestSource(ip);
      lastIp = ip;
    }
    const address = lastSource;
    const client = limit.perClient > 0 ? clientIdentity(request, endpoint, address) : undefined;
    if (limit.perAddress <= 0 && client === undefined) return done();

    // Both counters count, the address's first; the first over its limit refuses.
    const now = options.clock.now();
    const byAddress =
      limit.perAddress > 0 ? windowCounter.hit(`rl:${endpoint}:a:${address}`, now) : undefined;
    const byClient = client === undefined ? undefined : windowCounter.hit(`rl:${endpoint}:${client}`, now);
    const kind =
      byAddress !== undefined && byAddress.count > limit.perAddress
        ? 'address'
        : byClient !== undefined && byClient.count > limit.perClient
          ? 'client'
          : undefined;
    if (kind === undefined) return done();
    const resetAt = (kind === 'address' ? byAddress : byClient)?.resetAt ?? now + options.windowSeconds;
    limited.add(request);
    options.metrics.throttled(route ?? endpoint, kind);
    refuse(reply, BROWSER_ENDPOINTS.has(endpoint), Math.max(1, resetAt - now));
  });
}

export interface AddressRateLimitOptions {
  store: RateLimitStore;
  clock: Clock;
  /** Requests allowed per address in each window. */
  perAddress: number;
  windowSeconds: number;
  /** Names the counters and the metric's route label (e.g. `register`). */
  name: string;
  metrics: GatehouseMetrics;
  flushIntervalMs?: number;
}

/**
 * A limit of requests per source address with a window of its own (the registration endpoint's is an
 * hour), counted and merged into the shared store as the other limits are, so it holds across every
 * process. Returns the preHandler for the routes it limits; `app`'s close flushes the counts.
 */
export function addressRateLimit(
  app: FastifyInstance,
  options: AddressRateLimitOptions,
): (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply | undefined> {
  const windowCounter = new BatchedRateCounter({
    store: options.store,
    windowSeconds: options.windowSeconds,
    flushIntervalMs: options.flushIntervalMs ?? 250,
    onError: (error) => app.log.warn({ err: error }, 'rate-limit counters not merged; retrying'),
  });
  app.addHook('onClose', async function flushAddressRateLimit() {
    windowCounter.stop();
    await windowCounter.flush().catch(() => undefined);
  });
  return async function limitByAddress(request, reply) {
    if (options.perAddress <= 0) return undefined;
    const now = options.clock.now();
    // An IPv6 address counts by its /64 (requestSource), as in every other limit.
    const { count, resetAt } = windowCounter.hit(`rl:${options.name}:a:${requestSource(request.ip)}`, now);
    if (count <= options.perAddress) return undefined;
    limited.add(request);
    options.metrics.throttled(request.routeOptions.url ?? options.name, 'address');
    return refuse(reply, false, Math.max(1, resetAt - now));
  };
}
