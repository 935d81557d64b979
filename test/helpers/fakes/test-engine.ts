import { loadConfig, type ConfigInput, type GatehouseConfig } from '../../../src/config.js';
import { enginePolicy } from '../../../src/compose/engine-policy.js';
import type { AuthorizationService } from '../../../src/core/authorize/authorization-service.js';
import type { AuthorizationValidation } from '../../../src/core/authorize/request.js';
import { createEngine, type Engine } from '../../../src/core/engine.js';
import type { KeyRing } from '../../../src/core/keys/key-ring.js';
import type { IdTokenIssuer } from '../../../src/core/tokens/id-token.js';
import type { UserInfoService } from '../../../src/core/oidc/userinfo.js';
import type { UserRegistry } from '../../../src/core/users/user-registry.js';
import type { JwksFetcher, Mailer, Storage } from '../../../src/core/ports.js';
import type { UpstreamProviders } from '../../../src/core/federation/upstream.js';
import type { TokenEndpoint, TokenEndpointRequest } from '../../../src/core/token-endpoint/token-endpoint.js';
import type { TokenIssuer, TokenResponse } from '../../../src/core/tokens/token-issuer.js';
import type { TokenServices } from '../../../src/core/tokens/token-services.js';
import { ManualClock } from '../../../src/shared/clock.js';
import { seedSigningKeys } from '../signing-keys.js';
import { memoryStorage } from './memory-storage.js';

/** Seconds since the epoch at which every test engine's clock starts (2027-01-15): no test reads the wall clock. */
export const START = 1_800_000_000;
export const ISSUER = 'https://gatehouse.test';

/**
 * The configuration (any GatehouseConfig field; production defaults otherwise), clock, store, and
 * the jwks_uri fetcher (a fake that serves a test's documents; none by default).
 */
export type TestEngineOverrides = ConfigInput & {
  clock?: ManualClock;
  storage?: Storage;
  jwksFetcher?: JwksFetcher;
  /** Receives the recovery and verification mails (decision 35); none by default (sending fails). */
  mailer?: Mailer;
  /** Upstream identity providers' discovery and flow (decision 39); none by default (each fails). */
  upstreamProviders?: UpstreamProviders;
};

/** The engine as the server wires it, on in-memory stores and a manual clock. */
export interface TestEngine {
  /** The whole engine, for what the fields below do not name (ID tokens, sessions, logout). */
  engine: Engine;
  config: GatehouseConfig;
  clock: ManualClock;
  storage: Storage;
  keyRing: KeyRing;
  issuer: TokenIssuer;
  tokenEndpoint: TokenEndpoint;
  authorization: AuthorizationService;
  tokens: TokenServices;
  /** OpenID Connect ID tokens (Core §2) and UserInfo (Core §5.3). */
  idTokens: IdTokenIssuer;
  userInfo: UserInfoService;
  /** The user registry's rules (/v1/users and `gatehouse users`). */
  users: UserRegistry;
  /** POST /token's rules: client authentication, then the grant handler (RFC 6749 §3.2). */
  token(request: TokenEndpointRequest): Promise<TokenResponse>;
  /** GET /authorize's checks under this engine's PKCE policy (RFC 6749 §4.1.2.1). */
  validateAuthorization(query: string): Promise<AuthorizationValidation>;
  close(): Promise<void>;
}

/**
 * Builds the engine with the server's own factory (core/engine.ts, createEngine) and policy
 * (compose/engine-policy.ts) over the in-memory ports and a manual clock: a real KeyRing with real
 * keys sealed under a key derived from the server secret. Built-in scopes come from `prepare()`, as at a
 * server's start; the first signing keys are this process's fixed ones (seedSigningKeys), which
 * `prepare()` loads as a server loads the keys of its store.
 */
export async function testEngine(overrides: TestEngineOverrides = {}): Promise<TestEngine> {
  const {
    clock = new ManualClock(START),
    storage = memoryStorage(),
    jwksFetcher,
    mailer,
    upstreamProviders,
    ...input
  } = overrides;
  // An empty environment: production defaults, whatever the machine running the tests has set.
  const config = loadConfig(
    { dataDir: '/nonexistent/gatehouse-unit', issuer: ISSUER, secret: Buffer.alloc(32, 7), ...input },
    {},
  );
  // This process's fixed first keys (test/helpers/signing-keys.ts): prepare() then generates none.
  await seedSigningKeys(storage.signingKeys, {
    secret: config.secret,
    algorithm: config.signingAlgorithm,
    now: clock.now(),
  });
  const engine = createEngine({
    storage,
    clock,
    policy: enginePolicy(config),
    jwksFetcher,
    mailer,
    upstreamProviders,
  });
  await engine.prepare();
  return {
    engine,
    config,
    clock,
    storage,
    keyRing: engine.keyRing,
    issuer: engine.issuer,
    tokenEndpoint: engine.tokenEndpoint,
    authorization: engine.authorization,
    tokens: engine.tokens,
    idTokens: engine.idTokens,
    userInfo: engine.userInfo,
    users: engine.users,
    token: (request) => engine.tokenEndpoint.handle(request),
    validateAuthorization: (query) => engine.authorization.validate(query),
    close: () => engine.close(),
  };
}
