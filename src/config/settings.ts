import type { RegistrationPolicy } from '../core/clients/dynamic-registration.js';
import { parseHostRule, type HostRule } from '../core/clients/metadata-document-hosts.js';
import type { SigningAlgorithm } from '../core/keys/key-ring.js';
import type { MfaPolicy } from '../core/users/second-factor-policy.js';
import {
  DEFAULT_RATE_LIMITS,
  RATE_LIMIT_VARIABLES,
  RATE_LIMITED_ENDPOINTS,
  RATE_LIMITS_SWITCH,
  REQUESTS_PER_WINDOW,
  rateLimitVariables,
  type RateLimit,
  type RateLimitedEndpoint,
} from './rate-limits.js';
import { decodeSecret, generatedSecret, readSettingFile, type SecretOptions } from './server-secret.js';
import { ConfigError } from './config-error.js';
import {
  basePath,
  boolean,
  databaseUrl,
  httpUrl,
  integer,
  mailFrom,
  oneOf,
  scopeList,
  smtpUrl,
  text,
  type ValueType,
} from './value-types.js';

/**
 * Everything a running Gatehouse is configured by. What each setting means, the variable and flag
 * that set it, its values and its default are in SETTINGS below, the one place they are declared;
 * SettingsTable holds this interface and the table to each other at compile time.
 */
export interface GatehouseConfig {
  dataDir: string;
  databaseUrl: string | undefined;
  port: number;
  host: string;
  basePath: string;
  issuer: string;
  tlsCert: string | undefined;
  tlsKey: string | undefined;
  trustProxy: boolean;
  secret: Buffer;
  signingAlgorithm: SigningAlgorithm;
  accessTokenTtl: number;
  idTokenTtl: number;
  refreshTokenTtl: number;
  authorizationCodeTtl: number;
  refreshReuseGraceSeconds: number;
  allowPlainPkce: boolean;
  pushedAuthorizationRequestTtl: number;
  requirePushedAuthorizationRequests: boolean;
  dpopNonce: 'required' | 'off';
  dpopProofWindowSeconds: number;
  deviceCodeTtl: number;
  deviceCodeInterval: number;
  userCodeFailuresPerSource: number;
  userCodeFailureWindowSeconds: number;
  bodyLimitBytes: number;
  allowAccessTokenInQuery: boolean;
  macTimestampWindowSeconds: number;
  passwordFailuresPerUsername: number;
  passwordFailuresPerSource: number;
  passwordFailureWindowSeconds: number;
  allowPublicPasswordGrant: boolean;
  requireMfa: MfaPolicy;
  adminRequireMfa: boolean;
  retiredKeyRetentionSeconds: number;
  keyRefreshIntervalSeconds: number;
  logLevel: string;
  sqliteSynchronous: 'FULL' | 'NORMAL';
  productName: string;
  logoUrl: string | undefined;
  purgeIntervalSeconds: number;
  purgeBatchSize: number;
  purgeMaxRowsPerSecond: number;
  metricsToken: string | undefined;
  rateLimits: Record<RateLimitedEndpoint, RateLimit>;
  rateLimitWindowSeconds: number;
  maxHeaderBytes: number;
  maxParameters: number;
  maxParameterBytes: number;
  requestTimeoutSeconds: number;
  maxConnections: number;
  allowPrivateJwksUri: boolean;
  /** Decision 46: Client ID Metadata Documents, their private addresses, and the hosts they come from. */
  clientIdMetadataDocuments: 'on' | 'off';
  allowPrivateClientMetadata: boolean;
  clientIdMetadataHosts: HostRule;
  jwksUriTimeoutMs: number;
  jwksUriMaxBytes: number;
  dynamicRegistration: RegistrationPolicy;
  dynamicRegistrationScopes: string[];
  dynamicRegistrationRateLimit: number;
  dynamicRegistrationUnusedDays: number;
  auditRetentionDays: number;
  smtpUrl: string | undefined;
  mailFrom: string;
}

/** Settings given in code or by flags: they win over the environment, which wins over the defaults. */
export type ConfigInput = Partial<Omit<GatehouseConfig, 'secret' | 'rateLimits'>> & {
  secret?: Buffer | string;
  rateLimits?: Partial<Record<RateLimitedEndpoint, Partial<RateLimit>>>;
};

/** The variables of the settings table, read as its rows declare them. */
export interface Variables {
  /** The variable's text; undefined when it is unset or empty (empty is unset, for every variable). */
  text(name: string): string | undefined;
  /** The variable's value as `type` reads it; undefined when unset or empty. */
  read<T>(name: string, type: ValueType<T>): T | undefined;
}

/** What a default that depends on more than itself may read. */
export interface SettingContext {
  /** The settings above this one in the table (loadConfig reads the rows in order). */
  settings: Readonly<GatehouseConfig>;
  variables: Variables;
  options: SecretOptions;
}

interface SettingRow<T, I> {
  /** What it does, in Markdown: the meaning column of docs/configuration.md. */
  description: string;
  /** The environment variables that set it, its own first; none for a setting only code sets. */
  variables: readonly string[];
  /** The `serve` and `check` flag that sets it, without its dashes (GLOBAL_FLAGS: every command). */
  flag?: string;
  /** How its variable's text is read, and the values allowed (absent: `read` or `load` does it). */
  type?: ValueType<T>;
  /** A secret: marked in the docs, and never repeated in a message. */
  secret?: true;
  /** The docs table's words where the row's own values would not do. */
  documented?: { variables?: string; values?: string; default?: string };
  /**
   * A value given in code or by a flag (`name`: the flag, or the setting's name), checked where a
   * mistake there is as likely as in a variable; taken as it is without this. Undefined: not given.
   */
  fromInput?: (value: I, name: string) => T | undefined;
  /** Reads a setting that more than one variable may set (a value, or a file holding it). */
  read?: (variables: Variables) => T | undefined;
}

/**
 * Where the value comes from when neither the input nor a variable gives it: a default of its own,
 * or one derived from the settings above it and other variables; or, for a setting made of parts,
 * `load` merges each part (from the input, over its variable, over its default) itself.
 */
type Sourced<T, I> =
  | { default: T }
  | { derive: (context: SettingContext) => T }
  | { load: (input: I | undefined, context: SettingContext) => T };

/** A row of the settings table: the setting that a GatehouseConfig field holds. */
export type Setting<T, I = T> = SettingRow<T, I> & Sourced<T, I>;

/** One row per GatehouseConfig field, none missing and none extra, each of the field's type. */
export type SettingsTable = {
  readonly [K in keyof GatehouseConfig]: Setting<GatehouseConfig[K], Exclude<ConfigInput[K], undefined>>;
};

const DAY = 86_400;
const MAX_COUNT = 1_000_000_000;
const SECONDS = 'seconds';

/**
 * The purge's default cap, per process. It keeps up with what one process can make to purge: the code
 * flow at its measured peak (1,438 flows/s on SQLite) leaves about three rows a flow to expire. Uncapped,
 * a backlog went at 14,000-38,000 rows/s and the token endpoint's p99 rose 1.22-1.29 x; at 5,000,
 * 1.09-1.14 x (the purge bench, docs/benchmarks.md). A million-row backlog goes in under four minutes.
 */
const PURGE_MAX_ROWS_PER_SECOND = 5000;

/** The scopes open registration allows by default: signing in, and the user's own claims. */
export const DEFAULT_DYNAMIC_REGISTRATION_SCOPES: readonly string[] = [
  'openid',
  'profile',
  'email',
  'offline_access',
];

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const REGISTRATION_POLICIES = ['off', 'token', 'open'] as const satisfies readonly RegistrationPolicy[];
const MFA_POLICIES = ['off', 'admins', 'all'] as const satisfies readonly MfaPolicy[];

/** The issuer is compared as a string (RFC 8414 §3.3): one form, without a trailing slash. */
const issuerUrl: ValueType<string> = {
  parse: (value, name) => httpUrl.parse(value, name).replace(/\/$/, ''),
  values: httpUrl.values,
};

const secretValue: ValueType<Buffer> = {
  parse: (value, name) => decodeSecret(value, name),
  values: '32+ random bytes, base64url (`…_FILE`: a file holding them)',
};

/** GATEHOUSE_CLIENT_ID_METADATA_HOSTS: host patterns, `!` before one that is never taken (decision 46). */
const HOST_RULE: ValueType<HostRule> = {
  parse(value, name) {
    try {
      return parseHostRule(value);
    } catch (error) {
      throw new ConfigError(`${name}: ${(error as Error).message}`);
    }
  },
  values: 'comma-separated host names and `*.name`; `!` before one refuses it',
};

/**
 * RFC 9126 §2.2 leaves a request_uri's lifetime to the server ("typically relatively short"): never
 * over 90 seconds, which a client needs only to send the browser on.
 */
const PUSHED_REQUEST_TTL = integer(1, 90, SECONDS);

/**
 * GATEHOUSE_DYNAMIC_REGISTRATION_SCOPES: never `admin`, which manages Gatehouse itself and is never
 * given to a client that registered itself.
 */
const REGISTRATION_SCOPES = scopeList(['admin'], 'is never open to clients that register themselves');

function rateLimits(
  input: ConfigInput['rateLimits'],
  { variables }: SettingContext,
): Record<RateLimitedEndpoint, RateLimit> {
  const off = variables.read(RATE_LIMITS_SWITCH.name, RATE_LIMITS_SWITCH.type) === 'off';
  const limits = {} as Record<RateLimitedEndpoint, RateLimit>;
  for (const endpoint of RATE_LIMITED_ENDPOINTS) {
    const names = rateLimitVariables(endpoint);
    const fallback = off ? { perAddress: 0, perClient: 0 } : DEFAULT_RATE_LIMITS[endpoint];
    limits[endpoint] = {
      perAddress:
        input?.[endpoint]?.perAddress ??
        variables.read(names.perAddress, REQUESTS_PER_WINDOW) ??
        fallback.perAddress,
      perClient:
        input?.[endpoint]?.perClient ??
        variables.read(names.perClient, REQUESTS_PER_WINDOW) ??
        fallback.perClient,
    };
  }
  return limits;
}

/**
 * Every setting, declared once: its variable and flag, the values it takes, its default and what it
 * does. loadConfig reads the rows in this order (a derived default reads only rows above it); the
 * unknown-variable warning, `gatehouse check` and the table in docs/configuration.md (written by
 * `npm run docs:settings`) are made from it.
 */
export const SETTINGS: SettingsTable = {
  dataDir: {
    description: 'SQLite database, development certificate, generated secret',
    variables: ['GATEHOUSE_DATA_DIR'],
    flag: 'data-dir',
    type: text('a directory'),
    default: './data',
  },
  databaseUrl: {
    description: 'the store: PostgreSQL, or a SQLite file elsewhere than the data directory',
    variables: ['DATABASE_URL'],
    flag: 'database-url',
    type: databaseUrl,
    secret: true,
    documented: { default: 'SQLite in the data dir' },
    // An empty flag is no flag: the variable, then the default, as for a variable.
    fromInput: (value, name) => (value === '' ? undefined : databaseUrl.parse(value, name)),
    default: undefined,
  },
  port: {
    description: 'the port to listen on',
    variables: ['PORT'],
    flag: 'port',
    type: integer(1, 65535, ''),
    default: 8443,
  },
  host: {
    description: 'the address to listen on; `0.0.0.0` for every interface',
    variables: ['HOST'],
    flag: 'host',
    type: text('a host name or address'),
    default: 'localhost',
  },
  basePath: {
    description: 'mount every path under a prefix such as `/api`',
    variables: ['GATEHOUSE_BASE_PATH'],
    flag: 'base-path',
    type: basePath,
    documented: { default: 'none' },
    fromInput: (value, name) => (value === '' ? '' : basePath.parse(value, name)),
    default: '',
  },
  issuer: {
    description: 'public base URL, including any base path; the `iss` of every token',
    variables: ['GATEHOUSE_ISSUER'],
    flag: 'issuer',
    type: issuerUrl,
    documented: { default: '`https://localhost:<port><base path>`' },
    fromInput: (value) => value.replace(/\/$/, ''),
    derive: ({ settings }) => `https://localhost:${settings.port}${settings.basePath}`,
  },
  tlsCert: {
    description: 'the TLS certificate (chain), with `--tls-key`',
    variables: ['GATEHOUSE_TLS_CERT'],
    flag: 'tls-cert',
    type: text('a PEM file'),
    documented: { default: 'self-signed in `<data-dir>/tls/`' },
    default: undefined,
  },
  tlsKey: {
    description: "the TLS certificate's private key, with `--tls-cert`",
    variables: ['GATEHOUSE_TLS_KEY'],
    flag: 'tls-key',
    type: text('a PEM file'),
    documented: { default: 'self-signed in `<data-dir>/tls/`' },
    default: undefined,
  },
  trustProxy: {
    description:
      'plain HTTP behind a TLS-terminating proxy that sets `X-Forwarded-*`; URLs stay `https://` and HSTS is still sent',
    variables: ['GATEHOUSE_TRUST_PROXY'],
    flag: 'trust-proxy',
    type: boolean,
    default: false,
  },
  secret: {
    description:
      'seals the signing keys and the authenticator app secrets (AES-256-GCM), signs cookies, derives MAC keys. **Every process sharing a database must have the same secret**; with PostgreSQL it is required',
    variables: ['GATEHOUSE_SECRET', 'GATEHOUSE_SECRET_FILE'],
    type: secretValue,
    secret: true,
    documented: { default: 'generated into `<data-dir>/secret` (SQLite only)' },
    fromInput: (value, name) => (typeof value === 'string' ? decodeSecret(value, name) : value),
    read: (variables) => {
      const file = variables.text('GATEHOUSE_SECRET_FILE');
      return (
        variables.read('GATEHOUSE_SECRET', secretValue) ??
        (file === undefined
          ? undefined
          : decodeSecret(readSettingFile(file, 'GATEHOUSE_SECRET_FILE'), 'GATEHOUSE_SECRET_FILE'))
      );
    },
    derive: ({ settings, options }) => generatedSecret(settings.dataDir, settings.databaseUrl, options),
  },
  signingAlgorithm: {
    description: 'the algorithm of new signing keys: P-256, Ed25519 or RSA 2048; see [RS256](#rs256) below',
    variables: ['GATEHOUSE_SIGNING_ALG'],
    // A typo must not quietly fall back to another algorithm than the operator asked for.
    type: oneOf<SigningAlgorithm>(['ES256', 'EdDSA', 'RS256']),
    // ES256 by default: it signs ~10x faster than RS256, and signing is on every token response.
    default: 'ES256',
  },
  accessTokenTtl: {
    description: 'access token lifetime',
    variables: ['GATEHOUSE_ACCESS_TOKEN_TTL'],
    type: integer(1, DAY, SECONDS),
    default: 3600,
  },
  idTokenTtl: {
    description:
      "OpenID Connect ID token lifetime (Core §2 `exp`); ID tokens are signed with each client's `id_token_signed_response_alg`, RS256 by default",
    variables: ['GATEHOUSE_ID_TOKEN_TTL'],
    type: integer(1, DAY, SECONDS),
    default: 3600,
  },
  refreshTokenTtl: {
    description: "refresh token lifetime (30 days), sliding on rotation, never past the grant's lifetime",
    variables: ['GATEHOUSE_REFRESH_TOKEN_TTL'],
    type: integer(1, 3650 * DAY, SECONDS),
    default: 30 * DAY,
  },
  authorizationCodeTtl: {
    description: 'authorization code lifetime, seconds',
    variables: [],
    default: 600,
  },
  refreshReuseGraceSeconds: {
    description:
      'seconds during which a rotated refresh token presented again is refused without ending the grant ([decision 4](decisions.md#4-refresh-token-rotation-with-a-short-grace-for-retries))',
    variables: [],
    default: 5,
  },
  allowPlainPkce: {
    description: 'accept PKCE `plain` (S256 is always accepted)',
    variables: ['GATEHOUSE_ALLOW_PLAIN_PKCE'],
    type: boolean,
    default: false,
  },
  pushedAuthorizationRequestTtl: {
    description: 'RFC 9126 §2.2 `expires_in` of a pushed authorization request, seconds (1 to 90)',
    variables: [],
    fromInput: (value, name) => PUSHED_REQUEST_TTL.check(value, name),
    default: 60,
  },
  requirePushedAuthorizationRequests: {
    description:
      "every client's `/authorize` requests must first be pushed to `/par` (RFC 9126); the metadata's `require_pushed_authorization_requests`",
    variables: ['GATEHOUSE_REQUIRE_PAR'],
    type: boolean,
    default: false,
  },
  dpopNonce: {
    description:
      '`required`: every DPoP proof must carry a server nonce (RFC 9449 §8, §9; see [DPoP](authorization-server.md#sender-constrained-tokens-dpop-rfc-9449) and [decision 25](decisions.md#25-dpop-nonces-are-off-by-default))',
    variables: ['GATEHOUSE_DPOP_NONCE'],
    type: oneOf(['required', 'off']),
    default: 'off',
  },
  dpopProofWindowSeconds: {
    description: "how far a DPoP proof's `iat` may be from the server's clock, either way (plus 5 s)",
    variables: ['GATEHOUSE_DPOP_PROOF_WINDOW'],
    type: integer(1, 600, SECONDS),
    default: 60,
  },
  // RFC 8628 §3.2 leaves both to the server: ten minutes to type a code, sign in and decide; a poll
  // every five seconds (the RFC's default when a response names none).
  deviceCodeTtl: {
    description: 'how long a device code and its user code live (RFC 8628 §3.2 `expires_in`)',
    variables: ['GATEHOUSE_DEVICE_CODE_TTL'],
    type: integer(60, 3600, SECONDS),
    default: 600,
  },
  deviceCodeInterval: {
    description: 'RFC 8628 §3.2 `interval`: seconds a device waits between polls, until told to slow down',
    variables: [],
    default: 5,
  },
  userCodeFailuresPerSource: {
    description:
      'wrong user codes per source address inside the window (15 minutes) before `/device` answers 429 (RFC 8628 §5.1)',
    variables: ['GATEHOUSE_USER_CODE_ATTEMPTS'],
    type: integer(1, 1000, 'attempts'),
    default: 10,
  },
  userCodeFailureWindowSeconds: {
    description: 'the window of the wrong user codes, seconds',
    variables: [],
    default: 900,
  },
  bodyLimitBytes: {
    description: 'largest request body (413 beyond; [limits.md](limits.md#sizes))',
    variables: ['GATEHOUSE_BODY_LIMIT_BYTES'],
    type: integer(1024, 16 * 1024 * 1024, 'bytes'),
    default: 16 * 1024,
  },
  allowAccessTokenInQuery: {
    description:
      'accept `access_token` in the query on /v1 and /userinfo (RFC 6750 §2.3, discouraged by §5.3)',
    variables: ['GATEHOUSE_ALLOW_ACCESS_TOKEN_IN_QUERY'],
    type: boolean,
    default: false,
  },
  macTimestampWindowSeconds: {
    description:
      "how far a MAC request's `ts` (or issue time plus age) may be from the server's clock, either way",
    variables: ['GATEHOUSE_MAC_TIMESTAMP_WINDOW'],
    type: integer(1, 3600, SECONDS),
    default: 300,
  },
  passwordFailuresPerUsername: {
    description:
      'password attempts per user name and source address per window ([limits.md](limits.md#account-lockout-after-failed-passwords))',
    variables: ['GATEHOUSE_LOCKOUT_ATTEMPTS'],
    type: integer(1, 1000, 'attempts'),
    default: 5,
  },
  passwordFailuresPerSource: {
    description: 'failed passwords per source address per window, across all user names',
    variables: ['GATEHOUSE_LOCKOUT_SOURCE_ATTEMPTS'],
    type: integer(1, MAX_COUNT, 'attempts'),
    default: 100,
  },
  passwordFailureWindowSeconds: {
    description: 'the lockout window',
    variables: ['GATEHOUSE_LOCKOUT_WINDOW'],
    type: integer(1, DAY, SECONDS),
    default: 900,
  },
  allowPublicPasswordGrant: {
    description: 'let public clients (no secret) use the password grant ([limits.md](limits.md))',
    variables: ['GATEHOUSE_ALLOW_PUBLIC_PASSWORD_GRANT'],
    type: boolean,
    default: false,
  },
  requireMfa: {
    description:
      'who must sign in with a second factor after the password: `off`, `admins` (the administrators) or `all`; one who has none sets up an authenticator app right after the password, and the password grant refuses them (a client can also require it: `--require-mfa`; [decision 34](decisions.md))',
    variables: ['GATEHOUSE_REQUIRE_MFA'],
    type: oneOf(MFA_POLICIES),
    default: 'off',
  },
  adminRequireMfa: {
    description:
      'the admin console at `/admin` signs administrators in only with a second factor (its built-in client requires one); without it, an administrator with none sees a standing prompt to add one ([decision 42](decisions.md))',
    variables: ['GATEHOUSE_ADMIN_REQUIRE_MFA'],
    type: boolean,
    default: false,
  },
  retiredKeyRetentionSeconds: {
    description: 'how long a retired signing key stays in `/jwks`, seconds',
    variables: [],
    default: 7 * DAY,
  },
  keyRefreshIntervalSeconds: {
    description:
      'every process signs with a rotated key, and stops trusting a revoked one, within this many seconds',
    variables: [],
    default: 5,
  },
  logLevel: {
    description: 'pino level; logs are JSON lines, credentials redacted',
    variables: ['GATEHOUSE_LOG_LEVEL'],
    type: oneOf(LOG_LEVELS),
    default: 'info',
  },
  sqliteSynchronous: {
    description:
      'SQLite only. `NORMAL` (WAL): a process crash loses no committed data; `FULL` also survives power loss, at an fsync per commit',
    variables: ['GATEHOUSE_SQLITE_SYNCHRONOUS'],
    type: oneOf(['FULL', 'NORMAL']),
    default: 'NORMAL',
  },
  productName: {
    description: 'the name shown on the browser pages',
    variables: ['GATEHOUSE_PRODUCT_NAME'],
    type: text('text'),
    default: 'Gatehouse',
  },
  logoUrl: {
    description: 'a logo shown on the browser pages',
    variables: ['GATEHOUSE_LOGO_URL'],
    type: text('a URL or path'),
    default: undefined,
  },
  purgeIntervalSeconds: {
    description:
      'seconds between automatic purges of dead rows (plus jitter); `0` turns the purge off ([deployment.md](deployment.md#automatic-purge))',
    variables: ['GATEHOUSE_PURGE_INTERVAL'],
    type: integer(0, DAY, SECONDS),
    default: 30,
  },
  purgeBatchSize: {
    description: 'rows deleted per purge statement',
    variables: ['GATEHOUSE_PURGE_BATCH_SIZE'],
    type: integer(1, 100_000, 'rows'),
    default: 500,
  },
  purgeMaxRowsPerSecond: {
    description: "the most rows a second each process's purge deletes; `0`: no cap",
    variables: ['GATEHOUSE_PURGE_MAX_ROWS_PER_SECOND'],
    type: integer(0, MAX_COUNT, 'rows'),
    default: PURGE_MAX_ROWS_PER_SECOND,
  },
  metricsToken: {
    description:
      'bearer token a scraper sends to `GET /metrics`; without one, only direct connections from the machine itself, and nobody behind a trusted proxy ([deployment.md](deployment.md#health-metrics-and-logs))',
    variables: ['GATEHOUSE_METRICS_TOKEN', 'GATEHOUSE_METRICS_TOKEN_FILE'],
    type: text('text (`…_FILE`: a file holding it)'),
    secret: true,
    read: (variables) => {
      const file = variables.text('GATEHOUSE_METRICS_TOKEN_FILE');
      return (
        variables.text('GATEHOUSE_METRICS_TOKEN') ??
        (file === undefined ? undefined : readSettingFile(file, 'GATEHOUSE_METRICS_TOKEN_FILE'))
      );
    },
    default: undefined,
  },
  rateLimits: {
    description:
      'requests per window at `TOKEN`, `AUTHORIZE`, `INTROSPECT`, `REVOKE`, `SIGN_IN`, `USERINFO` and `LOGOUT`: per address, and per client for the first four; counted in the store. `0`: no limit; `GATEHOUSE_RATE_LIMITS=off`: none at all',
    variables: RATE_LIMIT_VARIABLES,
    documented: {
      variables:
        '`GATEHOUSE_RATE_LIMIT_<ENDPOINT>_PER_ADDRESS`, `GATEHOUSE_RATE_LIMIT_<ENDPOINT>_PER_CLIENT`, `GATEHOUSE_RATE_LIMITS`',
      values: `${REQUESTS_PER_WINDOW.values}; \`on\` or \`off\``,
      default: 'see [limits](limits.md); `on`',
    },
    load: rateLimits,
  },
  rateLimitWindowSeconds: {
    description: "the rate limits' window",
    variables: ['GATEHOUSE_RATE_LIMIT_WINDOW'],
    type: integer(1, DAY, SECONDS),
    default: 60,
  },
  maxHeaderBytes: {
    description: "largest request line plus headers (431 beyond; node's maxHeaderSize)",
    variables: ['GATEHOUSE_MAX_HEADER_BYTES'],
    type: integer(1024, 1024 * 1024, 'bytes'),
    default: 16 * 1024,
  },
  maxParameters: {
    description: 'parameters per query string or form (400 `invalid_request` beyond)',
    variables: ['GATEHOUSE_MAX_PARAMETERS'],
    type: integer(1, 10_000, 'parameters'),
    default: 64,
  },
  // A value may fill the body; the separate bound matters for query strings and smaller settings.
  maxParameterBytes: {
    description: 'largest parameter value (400 `invalid_request` beyond)',
    variables: ['GATEHOUSE_MAX_PARAMETER_BYTES'],
    type: integer(1, 16 * 1024 * 1024, 'bytes'),
    default: 16 * 1024,
  },
  requestTimeoutSeconds: {
    description: 'seconds a request (headers and body) may take to arrive (slow-client protection)',
    variables: ['GATEHOUSE_REQUEST_TIMEOUT'],
    type: integer(1, 3600, SECONDS),
    default: 30,
  },
  maxConnections: {
    description: 'open connections per process; further ones are closed as they arrive',
    variables: ['GATEHOUSE_MAX_CONNECTIONS'],
    type: integer(1, 1_000_000, 'connections'),
    default: 1000,
  },
  allowPrivateJwksUri: {
    description:
      "fetch `private_key_jwt` clients' `jwks_uri` from loopback, private, link-local and unique-local addresses too ([decision 21](decisions.md#21-a-clients-jwks_uri-is-fetched-carefully-and-only-from-the-public-internet))",
    variables: ['GATEHOUSE_ALLOW_PRIVATE_JWKS_URI'],
    type: boolean,
    default: false,
  },
  clientIdMetadataDocuments: {
    description:
      'take a `client_id` that is the https URL of a Client ID Metadata Document, fetched from there (the MCP registration; [decision 46](decisions.md#46-client-id-metadata-documents-fetched-like-a-jwks_uri-stored-as-a-client-never-trusted-for-consent))',
    variables: ['GATEHOUSE_CLIENT_ID_METADATA_DOCUMENTS'],
    type: oneOf(['off', 'on'] as const),
    default: 'off',
  },
  allowPrivateClientMetadata: {
    description:
      'fetch Client ID Metadata Documents from loopback, private, link-local and unique-local addresses too ([decision 46](decisions.md#46-client-id-metadata-documents-fetched-like-a-jwks_uri-stored-as-a-client-never-trusted-for-consent))',
    variables: ['GATEHOUSE_ALLOW_PRIVATE_CLIENT_METADATA'],
    type: boolean,
    default: false,
  },
  clientIdMetadataHosts: {
    description:
      'the hosts whose Client ID Metadata Documents are taken: `app.example`, `*.example`; `!host` never; empty: every host ([decision 46](decisions.md#46-client-id-metadata-documents-fetched-like-a-jwks_uri-stored-as-a-client-never-trusted-for-consent))',
    variables: ['GATEHOUSE_CLIENT_ID_METADATA_HOSTS'],
    type: HOST_RULE,
    documented: { default: 'every host' },
    derive: () => ({ allow: [], deny: [] }),
  },
  jwksUriTimeoutMs: {
    description: 'a `jwks_uri` fetch must be done within this many milliseconds',
    variables: [],
    default: 5000,
  },
  jwksUriMaxBytes: {
    description: 'a `jwks_uri` answer longer than this many bytes is refused',
    variables: [],
    default: 64 * 1024,
  },
  dynamicRegistration: {
    description:
      'who may register a client at `/register` (RFC 7591; [authorization-server.md](authorization-server.md#letting-clients-register-themselves-rfc-7591-rfc-7592), [decision 20](decisions.md))',
    variables: ['GATEHOUSE_DYNAMIC_REGISTRATION'],
    type: oneOf(REGISTRATION_POLICIES),
    default: 'off',
  },
  dynamicRegistrationScopes: {
    description:
      'the scopes a self-registered client may have (an initial access token may set its own); never `admin`',
    variables: ['GATEHOUSE_DYNAMIC_REGISTRATION_SCOPES'],
    type: REGISTRATION_SCOPES,
    documented: { default: `\`${DEFAULT_DYNAMIC_REGISTRATION_SCOPES.join(' ')}\`` },
    // Empty is unset, as for every variable; a list given in code is held to the same rules.
    fromInput: (value, name) => REGISTRATION_SCOPES.check(value, name),
    derive: () => [...DEFAULT_DYNAMIC_REGISTRATION_SCOPES],
  },
  dynamicRegistrationRateLimit: {
    description: 'registrations per address per hour (counted in the store); `0`: no limit',
    variables: ['GATEHOUSE_DYNAMIC_REGISTRATION_RATE_LIMIT'],
    type: integer(0, MAX_COUNT, 'registrations per hour'),
    documented: { default: '`20`; `0` with `GATEHOUSE_RATE_LIMITS=off`' },
    // GATEHOUSE_RATE_LIMITS=off turns this request rate limit off too.
    derive: ({ variables }) =>
      variables.read(RATE_LIMITS_SWITCH.name, RATE_LIMITS_SWITCH.type) === 'off' ? 0 : 20,
  },
  dynamicRegistrationUnusedDays: {
    description:
      'days after which a client registered `open` that nobody granted anything is purged; `0` keeps them',
    variables: ['GATEHOUSE_DYNAMIC_REGISTRATION_UNUSED_DAYS'],
    type: integer(0, 3650, 'days'),
    default: 7,
  },
  auditRetentionDays: {
    description:
      'days an audit event is kept before the purge deletes it; `0` keeps them all ([decision 41](decisions.md#41-the-audit-log-what-is-recorded-both-or-neither-redaction-retention-the-log-line))',
    variables: ['GATEHOUSE_AUDIT_RETENTION_DAYS'],
    type: integer(0, 36500, 'days'),
    default: 90,
  },
  smtpUrl: {
    description:
      'the SMTP server that sends "Forgot password?" and email verification mails; unset, each mail (its link too) is written to the log at `info` instead ([decision 35](decisions.md#35-recovery-and-email-verification-by-mail))',
    variables: ['GATEHOUSE_SMTP_URL'],
    type: smtpUrl,
    secret: true,
    documented: { default: 'none: mail goes to the log' },
    default: undefined,
  },
  mailFrom: {
    description: "the mails' From",
    variables: ['GATEHOUSE_MAIL_FROM'],
    type: mailFrom,
    documented: { default: "`no-reply@<the issuer's host>`" },
    derive: ({ settings }) => `no-reply@${new URL(settings.issuer).hostname}`,
  },
};

/**
 * GATEHOUSE_* variables that are no setting of a server: the repository's tools (tests and
 * benchmarks) and the examples' resource server (examples/README.md). The warning knows them too.
 */
export const TOOL_VARIABLES: readonly string[] = [
  'GATEHOUSE_TEST_DATABASE_URL',
  'GATEHOUSE_CHROMIUM',
  'GATEHOUSE_BENCH_DATABASE_URL',
  'GATEHOUSE_FUZZ_RUNS',
  'GATEHOUSE_SCREENSHOTS',
  'GATEHOUSE_CA_FILE',
];
