import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SigningAlgorithm } from './core/key-ring.js';

/** Endpoints with request rate limits (docs/limits.md). */
export const RATE_LIMITED_ENDPOINTS = ['token', 'authorize', 'introspect', 'signIn'] as const;
export type RateLimitedEndpoint = (typeof RATE_LIMITED_ENDPOINTS)[number];
/** Requests allowed per window; 0 means no limit of that kind. */
export interface RateLimit {
  perAddress: number;
  perClient: number;
}

/** Defaults per 60-second window: far above what one honest address or client sends (docs/limits.md). */
export const DEFAULT_RATE_LIMITS: Readonly<Record<RateLimitedEndpoint, RateLimit>> = {
  token: { perAddress: 600, perClient: 3000 },
  authorize: { perAddress: 300, perClient: 3000 },
  introspect: { perAddress: 3000, perClient: 12000 },
  signIn: { perAddress: 60, perClient: 0 },
};

const ENV_NAMES: Record<RateLimitedEndpoint, string> = {
  token: 'TOKEN',
  authorize: 'AUTHORIZE',
  introspect: 'INTROSPECT',
  signIn: 'SIGN_IN',
};

/** Everything a running Gatehouse is configured by. Documented option by option in the README. */
export interface GatehouseConfig {
  dataDir: string;
  databaseUrl: string | undefined;
  port: number;
  host: string;
  /** Public base URL, including any base path; tokens carry it as `iss`. */
  issuer: string;
  /** Mount prefix for every route (`serve --base-path /api`). */
  basePath: string;
  tlsCert: string | undefined;
  tlsKey: string | undefined;
  /** Listen on plain HTTP behind a TLS-terminating proxy that sets X-Forwarded-*. */
  trustProxy: boolean;
  /** Server secret (32+ bytes): seals signing keys, signs cookies, derives MAC keys. */
  secret: Buffer;
  signingAlgorithm: SigningAlgorithm;
  accessTokenTtl: number;
  refreshTokenTtl: number;
  authorizationCodeTtl: number;
  /** Seconds during which a rotated refresh token presented again is refused without killing the grant. */
  refreshReuseGraceSeconds: number;
  allowPlainPkce: boolean;
  bodyLimitBytes: number;
  /** Accept an access token in the `access_token` query parameter (RFC 6750 §2.3); off by default. */
  allowAccessTokenInQuery: boolean;
  /** How far a MAC request's timestamp may be from the server's clock, in seconds (either way). */
  macTimestampWindowSeconds: number;
  /** Failed password attempts allowed per user name, and per client, inside the window. */
  passwordFailuresPerUsername: number;
  passwordFailuresPerClient: number;
  passwordFailureWindowSeconds: number;
  retiredKeyRetentionSeconds: number;
  keyRefreshIntervalSeconds: number;
  logLevel: string;
  /** SQLite only: NORMAL survives a process crash; FULL also a power loss, at an fsync per commit. */
  sqliteSynchronous: 'FULL' | 'NORMAL';
  /** Shown on the browser pages. */
  productName: string;
  /** URL or path of a logo shown on the browser pages; none by default. */
  logoUrl: string | undefined;
  /** Seconds between automatic purges of dead rows (plus jitter); 0 turns the purge off. */
  purgeIntervalSeconds: number;
  /** Rows deleted per purge statement. */
  purgeBatchSize: number;
  /** The most rows a second each process's purge deletes; 0 sets no cap. */
  purgeMaxRowsPerSecond: number;
  /**
   * Bearer token a scraper must send to GET /metrics. Without one, /metrics answers only direct
   * loopback connections (and nobody behind a trusted proxy): see docs/deployment.md.
   */
  metricsToken: string | undefined;
  /** Request rate limits per address and per client, by endpoint, counted in the store. */
  rateLimits: Record<RateLimitedEndpoint, RateLimit>;
  rateLimitWindowSeconds: number;
  /** Request line plus headers (node's maxHeaderSize); larger requests get 431. */
  maxHeaderBytes: number;
  /** Form or query parameters per request, and bytes per parameter value; more is a 400. */
  maxParameters: number;
  maxParameterBytes: number;
  /** A request (headers and body) must arrive within this many seconds (slow-client protection). */
  requestTimeoutSeconds: number;
  /** Open connections per process; more are closed on arrival (server.maxConnections). */
  maxConnections: number;
}

export type ConfigInput = Partial<Omit<GatehouseConfig, 'secret' | 'rateLimits'>> & {
  secret?: Buffer | string;
  rateLimits?: Partial<Record<RateLimitedEndpoint, Partial<RateLimit>>>;
};

function readSecret(dataDir: string, env: NodeJS.ProcessEnv): Buffer {
  if (env.GATEHOUSE_SECRET) return decodeSecret(env.GATEHOUSE_SECRET, 'GATEHOUSE_SECRET');
  if (env.GATEHOUSE_SECRET_FILE) {
    return decodeSecret(readFileSync(env.GATEHOUSE_SECRET_FILE, 'utf8').trim(), 'GATEHOUSE_SECRET_FILE');
  }
  // Development start-up: generate the secret once into the data directory, readable by its owner only.
  const file = join(dataDir, 'secret');
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(file, randomBytes(32).toString('base64url') + '\n', { mode: 0o600, flag: 'wx' });
  }
  chmodSync(file, 0o600);
  return decodeSecret(readFileSync(file, 'utf8').trim(), file);
}

function decodeSecret(value: string, source: string): Buffer {
  const bytes = Buffer.from(value, 'base64url');
  if (bytes.length < 32) {
    throw new Error(`${source}: the secret must be at least 32 bytes, base64url-encoded`);
  }
  return bytes;
}

function rateLimits(
  input: ConfigInput['rateLimits'],
  env: NodeJS.ProcessEnv,
): Record<RateLimitedEndpoint, RateLimit> {
  // GATEHOUSE_RATE_LIMITS=off turns every request rate limit off (benchmarks, or limits kept in a proxy).
  const off = env.GATEHOUSE_RATE_LIMITS === 'off';
  const limits = {} as Record<RateLimitedEndpoint, RateLimit>;
  for (const endpoint of RATE_LIMITED_ENDPOINTS) {
    const name = `GATEHOUSE_RATE_LIMIT_${ENV_NAMES[endpoint]}`;
    const fallback = off ? { perAddress: 0, perClient: 0 } : DEFAULT_RATE_LIMITS[endpoint];
    limits[endpoint] = {
      perAddress: input?.[endpoint]?.perAddress ?? integer(env[`${name}_PER_ADDRESS`]) ?? fallback.perAddress,
      perClient: input?.[endpoint]?.perClient ?? integer(env[`${name}_PER_CLIENT`]) ?? fallback.perClient,
    };
  }
  return limits;
}

const SIGNING_ALGORITHMS: readonly SigningAlgorithm[] = ['ES256', 'EdDSA', 'RS256'];

/** ES256 by default: it signs ~10x faster than RS256, and signing is on every token response. */
function signingAlgorithm(value: string | undefined): SigningAlgorithm {
  if (value === undefined || value === '') return 'ES256';
  const known = SIGNING_ALGORITHMS.find((alg) => alg === value);
  // A typo must not quietly fall back to another algorithm than the operator asked for.
  if (known === undefined) {
    throw new Error(`GATEHOUSE_SIGNING_ALG must be one of ${SIGNING_ALGORITHMS.join(', ')}`);
  }
  return known;
}

/**
 * The purge's default cap, per process. It keeps up with what one process can make to purge: the code
 * flow at its measured peak (1,438 flows/s on SQLite) leaves about three rows a flow to expire. Uncapped,
 * a backlog went at 14,000-38,000 rows/s and the token endpoint's p99 rose 1.22-1.29 x; at 5,000,
 * 1.09-1.14 x (the purge bench, docs/benchmarks.md). A million-row backlog goes in under four minutes.
 */
const PURGE_MAX_ROWS_PER_SECOND = 5000;

function integer(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed)) throw new Error(`not an integer: ${value}`);
  return parsed;
}

export function normaliseBasePath(value: string | undefined): string {
  if (value === undefined || value === '' || value === '/') return '';
  if (!/^(\/[a-z0-9-]+)+$/.test(value)) {
    throw new Error('--base-path must look like /api (lower-case segments, no trailing slash)');
  }
  return value;
}

/** Merges explicit options over the environment over the defaults. */
export function loadConfig(input: ConfigInput = {}, env: NodeJS.ProcessEnv = process.env): GatehouseConfig {
  const dataDir = input.dataDir ?? env.GATEHOUSE_DATA_DIR ?? './data';
  const port = input.port ?? integer(env.PORT) ?? 8443;
  const basePath = normaliseBasePath(input.basePath ?? env.GATEHOUSE_BASE_PATH);
  const issuer = (input.issuer ?? env.GATEHOUSE_ISSUER ?? `https://localhost:${port}${basePath}`).replace(
    /\/$/,
    '',
  );
  const secret =
    input.secret === undefined
      ? readSecret(dataDir, env)
      : typeof input.secret === 'string'
        ? decodeSecret(input.secret, 'secret')
        : input.secret;
  return {
    dataDir,
    databaseUrl: input.databaseUrl ?? (env.DATABASE_URL || undefined),
    port,
    host: input.host ?? env.HOST ?? 'localhost',
    issuer,
    basePath,
    tlsCert: input.tlsCert ?? env.GATEHOUSE_TLS_CERT,
    tlsKey: input.tlsKey ?? env.GATEHOUSE_TLS_KEY,
    trustProxy: input.trustProxy ?? env.GATEHOUSE_TRUST_PROXY === 'true',
    secret,
    signingAlgorithm: input.signingAlgorithm ?? signingAlgorithm(env.GATEHOUSE_SIGNING_ALG),
    accessTokenTtl: input.accessTokenTtl ?? integer(env.GATEHOUSE_ACCESS_TOKEN_TTL) ?? 3600,
    refreshTokenTtl: input.refreshTokenTtl ?? integer(env.GATEHOUSE_REFRESH_TOKEN_TTL) ?? 30 * 86400,
    authorizationCodeTtl: input.authorizationCodeTtl ?? 600,
    refreshReuseGraceSeconds: input.refreshReuseGraceSeconds ?? 5,
    allowPlainPkce: input.allowPlainPkce ?? env.GATEHOUSE_ALLOW_PLAIN_PKCE === 'true',
    bodyLimitBytes: input.bodyLimitBytes ?? integer(env.GATEHOUSE_BODY_LIMIT_BYTES) ?? 16 * 1024,
    allowAccessTokenInQuery:
      input.allowAccessTokenInQuery ?? env.GATEHOUSE_ALLOW_ACCESS_TOKEN_IN_QUERY === 'true',
    macTimestampWindowSeconds:
      input.macTimestampWindowSeconds ?? integer(env.GATEHOUSE_MAC_TIMESTAMP_WINDOW) ?? 300,
    passwordFailuresPerUsername:
      input.passwordFailuresPerUsername ?? integer(env.GATEHOUSE_LOCKOUT_ATTEMPTS) ?? 5,
    passwordFailuresPerClient: input.passwordFailuresPerClient ?? 100,
    passwordFailureWindowSeconds:
      input.passwordFailureWindowSeconds ?? integer(env.GATEHOUSE_LOCKOUT_WINDOW) ?? 900,
    retiredKeyRetentionSeconds: input.retiredKeyRetentionSeconds ?? 7 * 86400,
    keyRefreshIntervalSeconds: input.keyRefreshIntervalSeconds ?? 10,
    logLevel: input.logLevel ?? env.GATEHOUSE_LOG_LEVEL ?? 'info',
    sqliteSynchronous:
      input.sqliteSynchronous ?? (env.GATEHOUSE_SQLITE_SYNCHRONOUS === 'FULL' ? 'FULL' : 'NORMAL'),
    productName: input.productName ?? env.GATEHOUSE_PRODUCT_NAME ?? 'Gatehouse',
    logoUrl: input.logoUrl ?? env.GATEHOUSE_LOGO_URL,
    purgeIntervalSeconds: input.purgeIntervalSeconds ?? integer(env.GATEHOUSE_PURGE_INTERVAL) ?? 30,
    purgeBatchSize: input.purgeBatchSize ?? integer(env.GATEHOUSE_PURGE_BATCH_SIZE) ?? 500,
    purgeMaxRowsPerSecond:
      input.purgeMaxRowsPerSecond ??
      integer(env.GATEHOUSE_PURGE_MAX_ROWS_PER_SECOND) ??
      PURGE_MAX_ROWS_PER_SECOND,
    metricsToken:
      input.metricsToken ??
      (env.GATEHOUSE_METRICS_TOKEN ||
        (env.GATEHOUSE_METRICS_TOKEN_FILE
          ? readFileSync(env.GATEHOUSE_METRICS_TOKEN_FILE, 'utf8').trim()
          : undefined)),
    rateLimits: rateLimits(input.rateLimits, env),
    rateLimitWindowSeconds: input.rateLimitWindowSeconds ?? integer(env.GATEHOUSE_RATE_LIMIT_WINDOW) ?? 60,
    maxHeaderBytes: input.maxHeaderBytes ?? integer(env.GATEHOUSE_MAX_HEADER_BYTES) ?? 16 * 1024,
    maxParameters: input.maxParameters ?? 64,
    // A value may fill the body; the separate bound matters for query strings and smaller settings.
    maxParameterBytes: input.maxParameterBytes ?? 16 * 1024,
    requestTimeoutSeconds: input.requestTimeoutSeconds ?? integer(env.GATEHOUSE_REQUEST_TIMEOUT) ?? 30,
    maxConnections: input.maxConnections ?? integer(env.GATEHOUSE_MAX_CONNECTIONS) ?? 1000,
  };
}
