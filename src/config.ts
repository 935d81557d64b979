import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SigningAlgorithm } from './core/keys/key-ring.js';
import { didYouMean } from './shared/did-you-mean.js';
import type { RegistrationPolicy } from './core/clients/dynamic-registration.js';

/** Endpoints with request rate limits (docs/limits.md). */
export const RATE_LIMITED_ENDPOINTS = [
  'token',
  'authorize',
  'introspect',
  'signIn',
  'revoke',
  'userinfo',
  'logout',
] as const;
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
  revoke: { perAddress: 600, perClient: 3000 },
  // An access token is presented, not a client's credentials: counted per address only. A client calls
  // /userinfo about once per token it gets, so the token endpoint's allowance per address.
  userinfo: { perAddress: 600, perClient: 0 },
  // A browser page, like /authorize: each sign-out checks an id_token_hint's signature.
  logout: { perAddress: 300, perClient: 0 },
};

const ENV_NAMES: Record<RateLimitedEndpoint, string> = {
  token: 'TOKEN',
  authorize: 'AUTHORIZE',
  introspect: 'INTROSPECT',
  signIn: 'SIGN_IN',
  revoke: 'REVOKE',
  userinfo: 'USERINFO',
  logout: 'LOGOUT',
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
  /** ID token lifetime, seconds (OpenID Connect Core §2 `exp`). */
  idTokenTtl: number;
  refreshTokenTtl: number;
  authorizationCodeTtl: number;
  /** Seconds during which a rotated refresh token presented again is refused without killing the grant. */
  refreshReuseGraceSeconds: number;
  allowPlainPkce: boolean;
  /** RFC 9126 §2.2 `expires_in` of a pushed authorization request, seconds (at most 90). */
  pushedAuthorizationRequestTtl: number;
  /** RFC 9126 §5: /authorize takes only pushed authorization requests, from every client. */
  requirePushedAuthorizationRequests: boolean;
  /**
   * RFC 9449 §8, §9: `required` makes every DPoP proof carry a server nonce (docs/decisions.md,
   * decision 25); `off` (the default) asks for none.
   */
  dpopNonce: 'required' | 'off';
  /** How far a DPoP proof's `iat` may be from the server's clock, either way, in seconds (plus 5 s). */
  dpopProofWindowSeconds: number;
  /** RFC 8628 §3.2 `expires_in` of a device code (and its user code), seconds. */
  deviceCodeTtl: number;
  /** RFC 8628 §3.2 `interval`: seconds a device waits between polls, until told to slow down. */
  deviceCodeInterval: number;
  /** Wrong user codes allowed per source address inside the lockout window (RFC 8628 §5.1), then 429. */
  userCodeFailuresPerSource: number;
  userCodeFailureWindowSeconds: number;
  bodyLimitBytes: number;
  /** Accept an access token in the `access_token` query parameter (RFC 6750 §2.3); off by default. */
  allowAccessTokenInQuery: boolean;
  /** How far a MAC request's timestamp may be from the server's clock, in seconds (either way). */
  macTimestampWindowSeconds: number;
  /** Failed passwords allowed per (user name, source address), and per source across user names, inside the window. */
  passwordFailuresPerUsername: number;
  passwordFailuresPerSource: number;
  passwordFailureWindowSeconds: number;
  /** Whether public clients (no secret) may use the password grant; off by default. */
  allowPublicPasswordGrant: boolean;
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
  /**
   * Fetch private_key_jwt clients' jwks_uri from loopback, private, link-local and unique-local
   * addresses too (docs/decisions.md, decision 21); off by default.
   */
  allowPrivateJwksUri: boolean;
  /** A jwks_uri fetch must be done within this many milliseconds. */
  jwksUriTimeoutMs: number;
  /** A jwks_uri answer longer than this many bytes is refused. */
  jwksUriMaxBytes: number;
  /**
   * RFC 7591 dynamic client registration at /register: off, with an initial access token, or open to
   * anyone (docs/decisions.md, decision 20).
   */
  dynamicRegistration: RegistrationPolicy;
  /** The scopes a client registering itself may have (an initial access token may set its own); never admin. */
  dynamicRegistrationScopes: string[];
  /** Registration requests per address per hour (counted in the store); 0 sets no limit. */
  dynamicRegistrationRateLimit: number;
  /** Days after which a client registered `open` that nobody granted anything is purged; 0 keeps them. */
  dynamicRegistrationUnusedDays: number;
}

export type ConfigInput = Partial<Omit<GatehouseConfig, 'secret' | 'rateLimits'>> & {
  secret?: Buffer | string;
  rateLimits?: Partial<Record<RateLimitedEndpoint, Partial<RateLimit>>>;
};

/** A setting that is missing or malformed: the message names the variable (or flag) and the form expected. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** How loadConfig may come by the server secret when none is configured. */
export interface SecretOptions {
  /**
   * Generate `<data-dir>/secret` when no secret is configured and the file is missing: only for a
   * command that may create a SQLite store (serve, init, migrate). Default true.
   */
  createSecret?: boolean;
}

const SET_SECRET = 'set GATEHOUSE_SECRET or GATEHOUSE_SECRET_FILE';

function readSecret(
  dataDir: string,
  databaseUrl: string | undefined,
  env: NodeJS.ProcessEnv,
  options: SecretOptions,
): Buffer {
  if (env.GATEHOUSE_SECRET) return decodeSecret(env.GATEHOUSE_SECRET, 'GATEHOUSE_SECRET');
  if (env.GATEHOUSE_SECRET_FILE) {
    let text: string;
    try {
      text = readFileSync(env.GATEHOUSE_SECRET_FILE, 'utf8');
    } catch (error) {
      throw new ConfigError(
        `GATEHOUSE_SECRET_FILE: cannot read ${env.GATEHOUSE_SECRET_FILE} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
    return decodeSecret(text.trim(), 'GATEHOUSE_SECRET_FILE');
  }
  // A shared PostgreSQL store outlives any one machine's data directory: a secret generated there
  // would seal keys that no other process (nor this one, elsewhere) can open.
  if (isPostgres(databaseUrl)) {
    throw new ConfigError(
      `no server secret for a PostgreSQL database: ${SET_SECRET} to the secret every process of the deployment shares (32+ random bytes, base64url)`,
    );
  }
  // Development start-up: generate the secret once into the data directory, readable by its owner only.
  const file = join(dataDir, 'secret');
  if (!existsSync(file)) {
    if (options.createSecret === false) {
      throw new ConfigError(`no server secret: ${SET_SECRET} (${file} does not exist)`);
    }
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(file, randomBytes(32).toString('base64url') + '\n', { mode: 0o600, flag: 'wx' });
  }
  chmodSync(file, 0o600);
  return decodeSecret(readFileSync(file, 'utf8').trim(), file);
}

function isPostgres(url: string | undefined): boolean {
  return url !== undefined && /^postgres(ql)?:\/\//.test(url);
}

function decodeSecret(value: string, source: string): Buffer {
  const bytes = Buffer.from(value, 'base64url');
  if (bytes.length < 32) {
    throw new ConfigError(`${source}: the secret must be at least 32 bytes, base64url-encoded`);
  }
  return bytes;
}

function rateLimits(
  input: ConfigInput['rateLimits'],
  env: NodeJS.ProcessEnv,
): Record<RateLimitedEndpoint, RateLimit> {
  // GATEHOUSE_RATE_LIMITS=off turns every request rate limit off (benchmarks, or limits kept in a proxy).
  const off = oneOf(env, 'GATEHOUSE_RATE_LIMITS', ['on', 'off']) === 'off';
  const limits = {} as Record<RateLimitedEndpoint, RateLimit>;
  for (const endpoint of RATE_LIMITED_ENDPOINTS) {
    const name = `GATEHOUSE_RATE_LIMIT_${ENV_NAMES[endpoint]}`;
    const fallback = off ? { perAddress: 0, perClient: 0 } : DEFAULT_RATE_LIMITS[endpoint];
    limits[endpoint] = {
      perAddress:
        input?.[endpoint]?.perAddress ??
        integer(env, `${name}_PER_ADDRESS`, 0, MAX_COUNT, 'requests per window') ??
        fallback.perAddress,
      perClient:
        input?.[endpoint]?.perClient ??
        integer(env, `${name}_PER_CLIENT`, 0, MAX_COUNT, 'requests per window') ??
        fallback.perClient,
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
    throw new ConfigError(
      `GATEHOUSE_SIGNING_ALG must be one of ${SIGNING_ALGORITHMS.join(', ')}, got ${JSON.stringify(value)}`,
    );
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

const MAX_COUNT = 1_000_000_000;
const DAY = 86_400;

/**
 * A whole number from the environment, or undefined when unset. Anything else (a fraction, a unit
 * suffix, a value out of range) is refused naming the variable: a typo must not start a server with a
 * setting other than the one the operator meant.
 */
function integer(
  env: NodeJS.ProcessEnv,
  name: string,
  min: number,
  max: number,
  unit: string,
): number | undefined {
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  const parsed = /^[0-9]+$/.test(value.trim()) ? Number(value.trim()) : NaN;
  if (!Number.isSafeInteger(parsed) || parsed < min || parsed > max) {
    throw new ConfigError(
      `${name} must be a whole number${unit === '' ? '' : ` of ${unit}`} between ${min} and ${max}, got ${JSON.stringify(value)}`,
    );
  }
  return parsed;
}

/** true or false, nothing else (no "1", "yes" or "on" that one reader takes and another does not). */
function boolean(env: NodeJS.ProcessEnv, name: string): boolean | undefined {
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new ConfigError(`${name} must be true or false, got ${JSON.stringify(value)}`);
}

/**
 * RFC 9126 §2.2 leaves a request_uri's lifetime to the server ("typically relatively short"): 60 seconds
 * unless set, and never over 90, which a client needs only to send the browser on.
 */
function pushedRequestTtl(value: number | undefined): number {
  if (value === undefined) return 60;
  if (!Number.isInteger(value) || value < 1 || value > 90) {
    throw new ConfigError('pushedAuthorizationRequestTtl must be a whole number of seconds from 1 to 90');
  }
  return value;
}

function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, values: readonly T[]): T | undefined {
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  const known = values.find((candidate) => candidate === value);
  if (known === undefined) {
    throw new ConfigError(`${name} must be one of ${values.join(', ')}, got ${JSON.stringify(value)}`);
  }
  return known;
}

function httpUrl(value: string | undefined, name: string): string | undefined {
  if (value === undefined || value === '') return undefined;
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    throw new ConfigError(
      `${name} must be an absolute https:// (or http://) URL, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

function databaseUrl(value: string | undefined, name: string): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (!isPostgres(value) && !value.startsWith('sqlite:')) {
    throw new ConfigError(`${name} must be a postgres://… URL or sqlite:PATH, got another scheme`);
  }
  return value;
}

const REGISTRATION_POLICIES: readonly RegistrationPolicy[] = ['off', 'token', 'open'];

/** The scopes open registration allows by default: signing in, and the user's own claims. */
export const DEFAULT_DYNAMIC_REGISTRATION_SCOPES: readonly string[] = [
  'openid',
  'profile',
  'email',
  'offline_access',
];

/**
 * GATEHOUSE_DYNAMIC_REGISTRATION_SCOPES: space-separated scope names (RFC 6749 §3.3), never `admin`,
 * which manages Gatehouse itself and is never given to a client that registered itself.
 */
function registrationScopes(value: string | string[] | undefined, name: string): string[] | undefined {
  // Unset or empty: the default, as for every variable; a list given in code is taken as it is.
  if (value === undefined || value === '') return undefined;
  const scopes = [...new Set(Array.isArray(value) ? value : value.split(/\s+/).filter(Boolean))];
  for (const scope of scopes) {
    if (!/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope)) {
      throw new ConfigError(`${name}: ${JSON.stringify(scope)} is not a scope name`);
    }
    if (scope === 'admin') {
      throw new ConfigError(`${name}: admin is never open to clients that register themselves`);
    }
  }
  return scopes;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * Every GATEHOUSE_* variable Gatehouse itself reads (the configuration, and the tools of this
 * repository: tests and benchmarks). Any other is most likely a misspelling, which would otherwise
 * leave its setting at the default without a word.
 */
const KNOWN_VARIABLES: readonly string[] = [
  'GATEHOUSE_DATA_DIR',
  'GATEHOUSE_SECRET',
  'GATEHOUSE_SECRET_FILE',
  'GATEHOUSE_ISSUER',
  'GATEHOUSE_BASE_PATH',
  'GATEHOUSE_TLS_CERT',
  'GATEHOUSE_TLS_KEY',
  'GATEHOUSE_TRUST_PROXY',
  'GATEHOUSE_SIGNING_ALG',
  'GATEHOUSE_ACCESS_TOKEN_TTL',
  'GATEHOUSE_ID_TOKEN_TTL',
  'GATEHOUSE_REFRESH_TOKEN_TTL',
  'GATEHOUSE_ALLOW_PLAIN_PKCE',
  'GATEHOUSE_REQUIRE_PAR',
  'GATEHOUSE_DPOP_NONCE',
  'GATEHOUSE_DPOP_PROOF_WINDOW',
  'GATEHOUSE_DEVICE_CODE_TTL',
  'GATEHOUSE_USER_CODE_ATTEMPTS',
  'GATEHOUSE_BODY_LIMIT_BYTES',
  'GATEHOUSE_ALLOW_ACCESS_TOKEN_IN_QUERY',
  'GATEHOUSE_MAC_TIMESTAMP_WINDOW',
  'GATEHOUSE_LOCKOUT_ATTEMPTS',
  'GATEHOUSE_LOCKOUT_SOURCE_ATTEMPTS',
  'GATEHOUSE_ALLOW_PUBLIC_PASSWORD_GRANT',
  'GATEHOUSE_LOCKOUT_WINDOW',
  'GATEHOUSE_LOG_LEVEL',
  'GATEHOUSE_SQLITE_SYNCHRONOUS',
  'GATEHOUSE_PRODUCT_NAME',
  'GATEHOUSE_LOGO_URL',
  'GATEHOUSE_PURGE_INTERVAL',
  'GATEHOUSE_PURGE_BATCH_SIZE',
  'GATEHOUSE_PURGE_MAX_ROWS_PER_SECOND',
  'GATEHOUSE_METRICS_TOKEN',
  'GATEHOUSE_METRICS_TOKEN_FILE',
  'GATEHOUSE_RATE_LIMITS',
  'GATEHOUSE_RATE_LIMIT_WINDOW',
  ...RATE_LIMITED_ENDPOINTS.flatMap((endpoint) => [
    `GATEHOUSE_RATE_LIMIT_${ENV_NAMES[endpoint]}_PER_ADDRESS`,
    `GATEHOUSE_RATE_LIMIT_${ENV_NAMES[endpoint]}_PER_CLIENT`,
  ]),
  'GATEHOUSE_MAX_HEADER_BYTES',
  'GATEHOUSE_MAX_PARAMETERS',
  'GATEHOUSE_MAX_PARAMETER_BYTES',
  'GATEHOUSE_REQUEST_TIMEOUT',
  'GATEHOUSE_MAX_CONNECTIONS',
  'GATEHOUSE_ALLOW_PRIVATE_JWKS_URI',
  'GATEHOUSE_DYNAMIC_REGISTRATION',
  'GATEHOUSE_DYNAMIC_REGISTRATION_SCOPES',
  'GATEHOUSE_DYNAMIC_REGISTRATION_RATE_LIMIT',
  'GATEHOUSE_DYNAMIC_REGISTRATION_UNUSED_DAYS',
  // The repository's own tools.
  'GATEHOUSE_TEST_DATABASE_URL',
  'GATEHOUSE_CHROMIUM',
  'GATEHOUSE_BENCH_DATABASE_URL',
  'GATEHOUSE_FUZZ_RUNS',
  'GATEHOUSE_SCREENSHOTS',
  // The examples' resource server (examples/README.md).
  'GATEHOUSE_CA_FILE',
];

/**
 * One warning per GATEHOUSE_* variable that nothing reads, with the closest known name when one is
 * near. `alsoKnown`: names read by code outside this list (loadConfig records what it reads).
 */
export function unknownVariableWarnings(
  env: NodeJS.ProcessEnv = process.env,
  alsoKnown: Iterable<string> = readVariables,
): string[] {
  const known = new Set([...KNOWN_VARIABLES, ...alsoKnown]);
  const warnings: string[] = [];
  for (const name of Object.keys(env).sort()) {
    if (!name.startsWith('GATEHOUSE_') || known.has(name)) continue;
    const hint = didYouMean(name, known);
    warnings.push(`unknown environment variable ${name} is ignored${hint}`);
  }
  return warnings;
}

/** GATEHOUSE_* names loadConfig has read, so a setting added to it is never reported as unknown. */
const readVariables = new Set<string>();

function recordingReads(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return new Proxy(env, {
    get(target, property, receiver) {
      if (typeof property === 'string' && property.startsWith('GATEHOUSE_')) readVariables.add(property);
      return Reflect.get(target, property, receiver) as unknown;
    },
  });
}

export function normaliseBasePath(value: string | undefined): string {
  if (value === undefined || value === '' || value === '/') return '';
  if (!/^(\/[a-z0-9-]+)+$/.test(value)) {
    throw new ConfigError(
      '--base-path (GATEHOUSE_BASE_PATH) must look like /api (lower-case segments, no trailing slash)',
    );
  }
  return value;
}

/** Where the store is (data directory, database URL), from the options over the environment. */
export function storeLocation(
  input: Pick<ConfigInput, 'dataDir' | 'databaseUrl'>,
  env: NodeJS.ProcessEnv = process.env,
): { dataDir: string; databaseUrl: string | undefined } {
  return {
    dataDir: input.dataDir ?? (env.GATEHOUSE_DATA_DIR || './data'),
    databaseUrl:
      databaseUrl(input.databaseUrl, '--database-url') ?? databaseUrl(env.DATABASE_URL, 'DATABASE_URL'),
  };
}

/** Merges explicit options over the environment over the defaults. */
export function loadConfig(
  input: ConfigInput = {},
  environment: NodeJS.ProcessEnv = process.env,
  options: SecretOptions = {},
): GatehouseConfig {
  const env = recordingReads(environment);
  const { dataDir, databaseUrl: database } = storeLocation(input, env);
  const port = input.port ?? integer(env, 'PORT', 1, 65535, '') ?? 8443;
  const basePath = normaliseBasePath(input.basePath ?? env.GATEHOUSE_BASE_PATH);
  const issuer = (
    input.issuer ??
    httpUrl(env.GATEHOUSE_ISSUER, 'GATEHOUSE_ISSUER') ??
    `https://localhost:${port}${basePath}`
  ).replace(/\/$/, '');
  const secret =
    input.secret === undefined
      ? readSecret(dataDir, database, env, options)
      : typeof input.secret === 'string'
        ? decodeSecret(input.secret, 'secret')
        : input.secret;
  return {
    dataDir,
    databaseUrl: database,
    port,
    host: input.host ?? (env.HOST || 'localhost'),
    issuer,
    basePath,
    tlsCert: input.tlsCert ?? (env.GATEHOUSE_TLS_CERT || undefined),
    tlsKey: input.tlsKey ?? (env.GATEHOUSE_TLS_KEY || undefined),
    trustProxy: input.trustProxy ?? boolean(env, 'GATEHOUSE_TRUST_PROXY') ?? false,
    secret,
    signingAlgorithm: input.signingAlgorithm ?? signingAlgorithm(env.GATEHOUSE_SIGNING_ALG),
    accessTokenTtl:
      input.accessTokenTtl ?? integer(env, 'GATEHOUSE_ACCESS_TOKEN_TTL', 1, DAY, 'seconds') ?? 3600,
    idTokenTtl: input.idTokenTtl ?? integer(env, 'GATEHOUSE_ID_TOKEN_TTL', 1, DAY, 'seconds') ?? 3600,
    refreshTokenTtl:
      input.refreshTokenTtl ??
      integer(env, 'GATEHOUSE_REFRESH_TOKEN_TTL', 1, 3650 * DAY, 'seconds') ??
      30 * DAY,
    authorizationCodeTtl: input.authorizationCodeTtl ?? 600,
    refreshReuseGraceSeconds: input.refreshReuseGraceSeconds ?? 5,
    allowPlainPkce: input.allowPlainPkce ?? boolean(env, 'GATEHOUSE_ALLOW_PLAIN_PKCE') ?? false,
    pushedAuthorizationRequestTtl: pushedRequestTtl(input.pushedAuthorizationRequestTtl),
    requirePushedAuthorizationRequests:
      input.requirePushedAuthorizationRequests ?? boolean(env, 'GATEHOUSE_REQUIRE_PAR') ?? false,
    dpopNonce: input.dpopNonce ?? oneOf(env, 'GATEHOUSE_DPOP_NONCE', ['required', 'off']) ?? 'off',
    dpopProofWindowSeconds:
      input.dpopProofWindowSeconds ?? integer(env, 'GATEHOUSE_DPOP_PROOF_WINDOW', 1, 600, 'seconds') ?? 60,
    // RFC 8628 §3.2 leaves both to the server: ten minutes to type a code, sign in and decide; a poll
    // every five seconds (the RFC's default when a response names none).
    deviceCodeTtl:
      input.deviceCodeTtl ?? integer(env, 'GATEHOUSE_DEVICE_CODE_TTL', 60, 3600, 'seconds') ?? 600,
    deviceCodeInterval: input.deviceCodeInterval ?? 5,
    userCodeFailuresPerSource:
      input.userCodeFailuresPerSource ??
      integer(env, 'GATEHOUSE_USER_CODE_ATTEMPTS', 1, 1000, 'attempts') ??
      10,
    userCodeFailureWindowSeconds: input.userCodeFailureWindowSeconds ?? 900,
    bodyLimitBytes:
      input.bodyLimitBytes ??
      integer(env, 'GATEHOUSE_BODY_LIMIT_BYTES', 1024, 16 * 1024 * 1024, 'bytes') ??
      16 * 1024,
    allowAccessTokenInQuery:
      input.allowAccessTokenInQuery ?? boolean(env, 'GATEHOUSE_ALLOW_ACCESS_TOKEN_IN_QUERY') ?? false,
    macTimestampWindowSeconds:
      input.macTimestampWindowSeconds ??
      integer(env, 'GATEHOUSE_MAC_TIMESTAMP_WINDOW', 1, 3600, 'seconds') ??
      300,
    passwordFailuresPerUsername:
      input.passwordFailuresPerUsername ??
      integer(env, 'GATEHOUSE_LOCKOUT_ATTEMPTS', 1, 1000, 'attempts') ??
      5,
    passwordFailuresPerSource:
      input.passwordFailuresPerSource ??
      integer(env, 'GATEHOUSE_LOCKOUT_SOURCE_ATTEMPTS', 1, MAX_COUNT, 'attempts') ??
      100,
    passwordFailureWindowSeconds:
      input.passwordFailureWindowSeconds ??
      integer(env, 'GATEHOUSE_LOCKOUT_WINDOW', 1, DAY, 'seconds') ??
      900,
    allowPublicPasswordGrant:
      input.allowPublicPasswordGrant ?? boolean(env, 'GATEHOUSE_ALLOW_PUBLIC_PASSWORD_GRANT') ?? false,
    retiredKeyRetentionSeconds: input.retiredKeyRetentionSeconds ?? 7 * DAY,
    // Every process signs with a rotated key, and stops trusting a revoked one, within this many seconds.
    keyRefreshIntervalSeconds: input.keyRefreshIntervalSeconds ?? 5,
    logLevel: input.logLevel ?? oneOf(env, 'GATEHOUSE_LOG_LEVEL', LOG_LEVELS) ?? 'info',
    sqliteSynchronous:
      input.sqliteSynchronous ?? oneOf(env, 'GATEHOUSE_SQLITE_SYNCHRONOUS', ['FULL', 'NORMAL']) ?? 'NORMAL',
    productName: input.productName ?? (env.GATEHOUSE_PRODUCT_NAME || 'Gatehouse'),
    logoUrl: input.logoUrl ?? (env.GATEHOUSE_LOGO_URL || undefined),
    purgeIntervalSeconds:
      input.purgeIntervalSeconds ?? integer(env, 'GATEHOUSE_PURGE_INTERVAL', 0, DAY, 'seconds') ?? 30,
    purgeBatchSize:
      input.purgeBatchSize ?? integer(env, 'GATEHOUSE_PURGE_BATCH_SIZE', 1, 100_000, 'rows') ?? 500,
    purgeMaxRowsPerSecond:
      input.purgeMaxRowsPerSecond ??
      integer(env, 'GATEHOUSE_PURGE_MAX_ROWS_PER_SECOND', 0, MAX_COUNT, 'rows') ??
      PURGE_MAX_ROWS_PER_SECOND,
    metricsToken: input.metricsToken ?? metricsToken(env),
    rateLimits: rateLimits(input.rateLimits, env),
    rateLimitWindowSeconds:
      input.rateLimitWindowSeconds ?? integer(env, 'GATEHOUSE_RATE_LIMIT_WINDOW', 1, DAY, 'seconds') ?? 60,
    maxHeaderBytes:
      input.maxHeaderBytes ??
      integer(env, 'GATEHOUSE_MAX_HEADER_BYTES', 1024, 1024 * 1024, 'bytes') ??
      16 * 1024,
    maxParameters:
      input.maxParameters ?? integer(env, 'GATEHOUSE_MAX_PARAMETERS', 1, 10_000, 'parameters') ?? 64,
    // A value may fill the body; the separate bound matters for query strings and smaller settings.
    maxParameterBytes:
      input.maxParameterBytes ??
      integer(env, 'GATEHOUSE_MAX_PARAMETER_BYTES', 1, 16 * 1024 * 1024, 'bytes') ??
      16 * 1024,
    requestTimeoutSeconds:
      input.requestTimeoutSeconds ?? integer(env, 'GATEHOUSE_REQUEST_TIMEOUT', 1, 3600, 'seconds') ?? 30,
    maxConnections:
      input.maxConnections ?? integer(env, 'GATEHOUSE_MAX_CONNECTIONS', 1, 1_000_000, 'connections') ?? 1000,
    allowPrivateJwksUri:
      input.allowPrivateJwksUri ?? boolean(env, 'GATEHOUSE_ALLOW_PRIVATE_JWKS_URI') ?? false,
    jwksUriTimeoutMs: input.jwksUriTimeoutMs ?? 5000,
    jwksUriMaxBytes: input.jwksUriMaxBytes ?? 64 * 1024,
    dynamicRegistration:
      input.dynamicRegistration ??
      oneOf(env, 'GATEHOUSE_DYNAMIC_REGISTRATION', REGISTRATION_POLICIES) ??
      'off',
    dynamicRegistrationScopes: registrationScopes(
      input.dynamicRegistrationScopes,
      'dynamicRegistrationScopes',
    ) ??
      registrationScopes(
        env.GATEHOUSE_DYNAMIC_REGISTRATION_SCOPES,
        'GATEHOUSE_DYNAMIC_REGISTRATION_SCOPES',
      ) ?? [...DEFAULT_DYNAMIC_REGISTRATION_SCOPES],
    dynamicRegistrationRateLimit:
      input.dynamicRegistrationRateLimit ??
      integer(env, 'GATEHOUSE_DYNAMIC_REGISTRATION_RATE_LIMIT', 0, MAX_COUNT, 'registrations per hour') ??
      // GATEHOUSE_RATE_LIMITS=off turns this request rate limit off too.
      (oneOf(env, 'GATEHOUSE_RATE_LIMITS', ['on', 'off']) === 'off' ? 0 : 20),
    dynamicRegistrationUnusedDays:
      input.dynamicRegistrationUnusedDays ??
      integer(env, 'GATEHOUSE_DYNAMIC_REGISTRATION_UNUSED_DAYS', 0, 3650, 'days') ??
      7,
  };
}

function metricsToken(env: NodeJS.ProcessEnv): string | undefined {
  if (env.GATEHOUSE_METRICS_TOKEN) return env.GATEHOUSE_METRICS_TOKEN;
  const file = env.GATEHOUSE_METRICS_TOKEN_FILE;
  if (!file) return undefined;
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new ConfigError(
      `GATEHOUSE_METRICS_TOKEN_FILE: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
}
