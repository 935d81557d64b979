import { AuditLog, type AuditSink } from './audit/audit-log.js';
import type { Clock } from '../shared/clock.js';
import { AuthorizationService } from './authorize/authorization-service.js';
import { ConnectedApps } from './authorize/connected-apps.js';
import { DeviceAuthorizationService, type DeviceAuthorizationPolicy } from './device/device-authorization.js';
import { AccountSecurity } from './sign-in/account-security.js';
import { Federation } from './federation/federation.js';
import { UpstreamError, type UpstreamProviders } from './federation/upstream.js';
import { IdentityProviderRegistry, type IdentityProviderPolicy } from './federation/identity-providers.js';
import { BrowserSessions } from './sign-in/browser-sessions.js';
import { PasswordAuthenticator } from './sign-in/password-authenticator.js';
import { Passkeys } from './sign-in/passkeys.js';
import { SignInService, type SignInResult } from './sign-in/sign-in-service.js';
import { SecondFactors, type SecondFactorPolicy } from './sign-in/second-factors.js';
import { ClientAssertionVerifier } from './clients/client-assertion.js';
import {
  authenticateClient,
  type AuthenticatedClient,
  type ClientCredentialsInput,
} from './clients/client-auth.js';
import { RemoteKeySets } from './clients/client-keys.js';
import { ClientRegistry } from './clients/client-registry.js';
import { DpopVerifier, type DpopPolicy } from './tokens/dpop.js';
import { DynamicRegistration, type RegistrationPolicy } from './clients/dynamic-registration.js';
import { GrantRegistry } from './grants/grant-registry.js';
import { verifyIdTokenHint, type IdTokenHint } from './tokens/id-token-hint.js';
import { KeyRing, type SigningAlgorithm } from './keys/key-ring.js';
import { RpInitiatedLogout } from './oidc/logout.js';
import { macTokens, type MacTokens } from './keys/mac.js';
import { IdTokenIssuer } from './tokens/id-token.js';
import { InitialAccessTokenRegistry } from './clients/initial-access-tokens.js';
import {
  ClientMetadataDocuments,
  withMetadataDocuments,
  type ClientMetadataDocumentPolicy,
} from './clients/metadata-documents.js';
import { UserInfoService } from './oidc/userinfo.js';
import type { ClientMetadataFetcher, JwksFetcher, Mailer, Storage } from './ports.js';
import { ResourceRegistry } from './scopes/resource-registry.js';
import { ResourceTargets } from './scopes/resources.js';
import { ScopeRegistry } from './scopes/scope-registry.js';
import { SigningKeyRegistry } from './keys/signing-key-registry.js';
import { TokenEndpoint } from './token-endpoint/token-endpoint.js';
import { TokenIssuer } from './tokens/token-issuer.js';
import { createTokenServices, type TokenServices } from './tokens/token-services.js';
import { AccountMail, type AccountMailPolicy } from './users/account-mail.js';
import { UserRegistry } from './users/user-registry.js';

/** The engine's rules as plain values: compose/gatehouse.ts derives them from the configuration. */
export interface EnginePolicy {
  /**
   * The issuer URL; also the audience of every access token for no other resource (RFC 9068 §2.2,
   * RFC 8707 §2), and the one resource that is never registered: Gatehouse's own API.
   */
  issuer: string;
  /**
   * The token endpoint's URL: a client assertion may name it as its audience (RFC 7523 §3 item 3),
   * and a DPoP proof sent there must (RFC 9449 §4.3 item 9).
   */
  tokenEndpoint: string;
  /** The pushed authorization request endpoint's URL, which a DPoP proof sent there names (RFC 9449 §10.1). */
  pushedAuthorizationRequestEndpoint: string;
  /**
   * The management API's URL, its RFC 9728 resource identifier (`<issuer>/v1`): a `resource` naming it
   * stands for the issuer, whose tokens /v1 accepts (decision 47).
   */
  managementApi: string;
  /** RFC 9449: the proof window, whether nonces are required, and the key nonces derive from. */
  dpop: DpopPolicy;
  accessTokenTtl: number;
  /** ID token lifetime (OpenID Connect Core §2 `exp`). */
  idTokenTtl: number;
  refreshTokenTtl: number;
  authorizationCodeTtl: number;
  /** How long a retired refresh token presented again only fails (docs/decisions.md, decision 4). */
  refreshReuseGraceSeconds: number;
  /** Password attempts per (user name, source), and failures per source (docs/decisions.md, decision 8). */
  passwordFailuresPerUsername: number;
  passwordFailuresPerSource: number;
  passwordFailureWindowSeconds: number;
  /** RFC 7636 §4.2 "plain" PKCE challenges. */
  allowPlainPkce: boolean;
  /** RFC 9126 §2.2 `expires_in`: how long a pushed authorization request waits for its /authorize. */
  pushedAuthorizationRequestTtl: number;
  /** RFC 9126 §5 `require_pushed_authorization_requests`, for every client. */
  requirePushedAuthorizationRequests: boolean;
  /** The password grant for public clients (docs/decisions.md, decision 9). */
  allowPublicPasswordGrant: boolean;
  /** RFC 8628: device codes' lifetime and polling interval; wrong user codes allowed per source (§5.1). */
  deviceAuthorization: DeviceAuthorizationPolicy;
  /** Derives MAC tokens' keys (docs/decisions.md, decision 3). */
  macSecret: Buffer;
  /** How far a MAC-signed request's time may be from the server's clock, either way. */
  macTimestampWindowSeconds: number;
  /** RFC 7591 / RFC 7592 dynamic client registration (docs/decisions.md, decision 20). */
  dynamicRegistration: {
    policy: RegistrationPolicy;
    /** The scopes open registration allows, and an initial access token without scopes of its own. */
    scopes: readonly string[];
    /** Names no self-registered client may take, nor any that looks like one: the product's. */
    reservedNames: readonly string[];
    /** GATEHOUSE_ALLOW_PRIVATE_JWKS_URI: a literal non-public jwks_uri is refused at registration. */
    allowPrivateJwksUri: boolean;
    /** RFC 7592 §3 `registration_client_uri` of a client: the endpoint table's configuration endpoint. */
    clientConfigurationUri: (clientId: string) => string;
  };
  /** Client ID Metadata Documents (decision 46): whether they are taken, from where, and to what rules. */
  clientMetadataDocuments: ClientMetadataDocumentPolicy;
  /** Recovery and email verification by mail: the mails' links and name (decision 35). */
  mail: AccountMailPolicy;
  /** Second factors after a password and who must use one (docs/decisions.md, decision 34). */
  secondFactors: SecondFactorPolicy;
  /** Upstream identity providers: the key their secrets are sealed under, their redirect URIs (decision 39). */
  identityProviders: IdentityProviderPolicy;
  keyRing: {
    /** Seals the signing keys' private halves in the store. */
    keyEncryptionKey: Buffer;
    algorithm: SigningAlgorithm;
    retiredKeyRetentionSeconds: number;
    refreshIntervalSeconds: number;
  };
}

export interface EngineDependencies {
  storage: Storage;
  clock: Clock;
  policy: EnginePolicy;
  /**
   * Reads private_key_jwt clients' `jwks_uri` (src/outbound/jwks-fetcher.ts, under the fetch policy of
   * docs/decisions.md). Without one, such clients cannot authenticate (the command line needs none).
   */
  jwksFetcher?: JwksFetcher;
  /**
   * Reads Client ID Metadata Documents (src/outbound/client-metadata-fetcher.ts, decision 46). Without
   * one, such clients are refused with the reason.
   */
  clientMetadataFetcher?: ClientMetadataFetcher;
  /**
   * Sends the recovery and verification mails (src/outbound/: SMTP, or the log). Without one, such
   * mails fail (the command line sends none).
   */
  mailer?: Mailer;
  /**
   * Runs the upstream identity providers' flow (src/outbound/upstream-client.ts, openid-client). Without
   * one, a sign-in through a provider fails on its failure page (the command line signs nobody in).
   */
  upstreamProviders?: UpstreamProviders;
  /**
   * Where each audit event goes once written (decision 41): the server's log, the command line's
   * stderr. Without one, events are only stored.
   */
  auditSink?: AuditSink;
}

export type SignInInput = { username: string; password: string; address: string };

/** A code typed after a correct password (decision 34): the pending sign-in's user, and the code. */
export type SecondFactorInput = { userId: string; code: string; address: string };

/**
 * Everything the HTTP layer and the command line do, built once from the ports, a clock and the
 * policy: every rule lives behind it, so the two front ends share each one.
 */
export interface Engine {
  readonly clock: Clock;
  readonly keyRing: KeyRing;
  readonly issuer: TokenIssuer;
  /** OpenID Connect ID tokens (Core §2), for the token endpoint and the authorization endpoint. */
  readonly idTokens: IdTokenIssuer;
  /** GET/POST /userinfo (OpenID Connect Core §5.3). */
  readonly userInfo: UserInfoService;
  /** POST /token (RFC 6749 §3.2). */
  readonly tokenEndpoint: TokenEndpoint;
  /**
   * RFC 9449 DPoP proofs and nonces, for every endpoint that takes them: the token endpoint and /par
   * use it inside the engine; /v1 and /userinfo check presented tokens with it (token-presentation.ts).
   */
  readonly dpop: DpopVerifier;
  /** Access-token validation, introspection (RFC 7662) and revocation (RFC 7009). */
  readonly tokens: TokenServices;
  /** MAC tokens' keys and nonces, for verifying MAC-signed requests to /v1 (docs/decisions.md, decision 3). */
  readonly macTokens: MacTokens;
  /** /authorize and consent (RFC 6749 §4.1, §4.2), and pushed authorization requests (RFC 9126). */
  readonly authorization: AuthorizationService;
  /** POST /device_authorization and the verification page (RFC 8628 §3.1-§3.3). */
  readonly deviceAuthorization: DeviceAuthorizationService;
  readonly browserSessions: BrowserSessions;
  /**
   * The account's own security (decision 37): "Change password" on the security page, and the summary
   * of a user's ways of signing in (`gatehouse users show`, /v1/users).
   */
  readonly account: AccountSecurity;
  /** The end-session endpoint's checks (RP-Initiated Logout 1.0). */
  readonly logout: RpInitiatedLogout;
  readonly connectedApps: ConnectedApps;
  readonly clients: ClientRegistry;
  /**
   * Clients by their Client ID Metadata Document (decision 46): what /authorize, /par and client
   * authentication look clients up through.
   */
  readonly clientDocuments: ClientMetadataDocuments;
  /** The audit log (decision 41): listed at /v1/audit-events and by `gatehouse audit list`. */
  readonly audit: AuditLog;
  /**
   * Upstream identity providers as data, and users' links to them as operators see them (`gatehouse
   * idps`, /v1/identity-providers, decision 39); which providers a client's sign-in page offers.
   */
  readonly identityProviders: IdentityProviderRegistry;
  /** POST /register and the client configuration endpoints (RFC 7591, RFC 7592). */
  readonly registration: DynamicRegistration;
  /** RFC 7591 §3 initial access tokens (`gatehouse initial-access-tokens`). */
  readonly initialAccessTokens: InitialAccessTokenRegistry;
  readonly users: UserRegistry;
  /** "Forgot password?" and "Verify": single-use links by mail (docs/decisions.md, decision 35). */
  readonly accountMail: AccountMail;
  readonly scopes: ScopeRegistry;
  /** The resource servers a `resource` parameter may name (RFC 8707). */
  readonly resources: ResourceRegistry;
  readonly grants: GrantRegistry;
  readonly signingKeys: SigningKeyRegistry;
  /**
   * An `id_token_hint` (Core §3.1.2.1, RP-Initiated Logout 1.0 §2) checked as an ID token this server
   * issued, expired or not; undefined when it is not one.
   */
  verifyIdTokenHint(token: string): Promise<IdTokenHint | undefined>;
  /**
   * The client of a /token, /introspect, /revoke (or any client-authenticated) request: the one entry
   * point for client authentication (RFC 6749 §2.3, RFC 7523 §2.2); 401 invalid_client when it fails.
   */
  authenticateClient(credentials: ClientCredentialsInput): Promise<AuthenticatedClient>;
  /**
   * The sign-in page's password check, under the account lockout (docs/decisions.md, decision 8): the
   * password method run by the one SignInService every method goes through (decision 30).
   */
  signIn(input: SignInInput): Promise<SignInResult>;
  /** The authenticator app and recovery codes: set-up, status, and who must use one (decision 34). */
  readonly secondFactors: SecondFactors;
  /**
   * The code of the second-factor step (an authenticator app's, or a recovery code), under the same
   * lockout as the password (decisions 8, 30, 34): wrong codes count toward the user name's and the
   * source's allowance. `authentication` is the code's method; the session records it after the
   * password's.
   */
  verifySecondFactor(input: SecondFactorInput): Promise<SignInResult>;
  /**
   * The first code of an authenticator app being set up (SecondFactors.beginTotp), which confirms it:
   * after a password for a user who must have a second factor, or on the security page. Under the
   * same lockout as every code.
   */
  confirmTotpSetUp(input: SecondFactorInput): Promise<SignInResult>;
  /**
   * Passkeys (docs/decisions.md, decision 33): registration, the passwordless sign-in and the second
   * factor, each attempt run by the same SignInService as the password.
   */
  readonly passkeys: Passkeys;
  /**
   * Sign-in through upstream identity providers (docs/decisions.md, decision 40): the upstream flow
   * through the UpstreamProviders port, the linking rules, and the security page's linked accounts.
   */
  readonly federation: Federation;
  /** Readies a migrated store: the built-in scopes, and the first signing key when there is none. */
  prepare(): Promise<void>;
  /**
   * Stops the key ring's refresh and waits for a read in flight and for the mails being sent, then
   * closes the mailer; the store is the caller's to close.
   */
  close(): Promise<void>;
}

const noJwksFetcher: JwksFetcher = {
  fetch: () => Promise.reject(new Error('this process does not fetch jwks_uri documents')),
};

/** What an engine without an upstream client answers (exported for the engine's services to default to). */
export const noUpstreamProviders: UpstreamProviders = {
  discover: () =>
    Promise.reject(new UpstreamError('unreachable', 'this process reaches no upstream provider')),
  begin: () => Promise.reject(new UpstreamError('unreachable', 'this process reaches no upstream provider')),
  finish: () => Promise.reject(new UpstreamError('unreachable', 'this process reaches no upstream provider')),
};

const noClientMetadataFetcher: ClientMetadataFetcher = {
  fetch: () => Promise.reject(new Error('this process fetches no client metadata documents')),
};

const noMailer: Mailer = {
  send: () => Promise.reject(new Error('this process sends no mail')),
};

/** What AuthorizationService reads from the store; its clients are replaced by the front doors' view. */
function storageParts(storage: Storage) {
  return {
    grants: storage.grants,
    codes: storage.codes,
    pushedRequests: storage.pushedRequests,
    users: storage.users,
  };
}

export function createEngine(deps: EngineDependencies): Engine {
  const { storage, clock, policy } = deps;
  const audit = new AuditLog(storage, clock, deps.auditSink);
  const assertions = new ClientAssertionVerifier({
    clock,
    usedJtis: storage.usedJtis,
    remoteKeys: new RemoteKeySets(deps.jwksFetcher ?? noJwksFetcher, clock),
    issuer: policy.issuer,
    tokenEndpoint: policy.tokenEndpoint,
  });
  const clientDocuments = new ClientMetadataDocuments({
    storage,
    clock,
    fetcher: deps.clientMetadataFetcher ?? noClientMetadataFetcher,
    policy: policy.clientMetadataDocuments,
    audit,
  });
  // The front doors' view of clients: the stored ones, and documents' clients fetched as they come.
  const frontDoorClients = withMetadataDocuments(storage.clients, clientDocuments);
  const authenticate = (credentials: ClientCredentialsInput) =>
    authenticateClient(credentials, frontDoorClients, assertions);
  const keyRing = new KeyRing({
    store: storage.signingKeys,
    keyEncryptionKey: policy.keyRing.keyEncryptionKey,
    clock,
    algorithm: policy.keyRing.algorithm,
    retiredKeyRetentionSeconds: policy.keyRing.retiredKeyRetentionSeconds,
    refreshIntervalSeconds: policy.keyRing.refreshIntervalSeconds,
  });
  const issuer = new TokenIssuer({
    keyRing,
    clock,
    refreshTokens: storage.refreshTokens,
    issuer: policy.issuer,
    accessTokenTtl: policy.accessTokenTtl,
    refreshTokenTtl: policy.refreshTokenTtl,
    macSecret: policy.macSecret,
  });
  const idTokens = new IdTokenIssuer({
    keyRing,
    users: storage.users,
    clock,
    issuer: policy.issuer,
    ttl: policy.idTokenTtl,
  });
  const resourceTargets = new ResourceTargets(storage.resources, policy.issuer, [policy.managementApi]);
  const dpop = new DpopVerifier({ clock, usedJtis: storage.usedJtis, policy: policy.dpop });
  const tokens = createTokenServices({
    keyRing,
    storage,
    clock,
    issuer: policy.issuer,
    macSecret: policy.macSecret,
    audit,
  });
  const tokenEndpoint = new TokenEndpoint(
    {
      storage,
      issuer,
      idTokens,
      clock,
      resources: resourceTargets,
      accessTokens: tokens.validator,
      audit,
      policy: {
        refreshReuseGraceSeconds: policy.refreshReuseGraceSeconds,
        passwordFailuresPerUsername: policy.passwordFailuresPerUsername,
        passwordFailuresPerSource: policy.passwordFailuresPerSource,
        passwordFailureWindowSeconds: policy.passwordFailureWindowSeconds,
        accessTokenTtl: policy.accessTokenTtl,
        refreshTokenTtl: policy.refreshTokenTtl,
        allowPublicPasswordGrant: policy.allowPublicPasswordGrant,
        requireMfa: policy.secondFactors.requireMfa,
      },
    },
    authenticate,
    { verifier: dpop, endpointUrl: policy.tokenEndpoint },
  );
  const scopes = new ScopeRegistry(storage, clock, audit);
  const hintOptions = { keyRing, clock, issuer: policy.issuer };
  const checkIdTokenHint = (token: string) => verifyIdTokenHint(token, hintOptions);
  const signIns = new SignInService(
    storage.throttle,
    clock,
    {
      failuresPerUsername: policy.passwordFailuresPerUsername,
      failuresPerAddress: policy.passwordFailuresPerSource,
      windowSeconds: policy.passwordFailureWindowSeconds,
    },
    audit,
  );
  const passwords = new PasswordAuthenticator(storage.users, clock);
  const browserSessions = new BrowserSessions(storage.browserSessions, clock, undefined, audit);
  const users = new UserRegistry(storage, clock, audit);
  const mailer = deps.mailer ?? noMailer;
  const accountMail = new AccountMail({ storage, users, clock, mailer, policy: policy.mail, audit });
  const secondFactors = new SecondFactors(
    storage.secondFactors,
    storage.users,
    clock,
    policy.secondFactors,
    storage.passkeys,
    audit,
  );
  return {
    clock,
    keyRing,
    issuer,
    idTokens,
    userInfo: new UserInfoService({ validator: tokens.validator, users: storage.users, dpop }),
    tokenEndpoint,
    dpop,
    tokens,
    macTokens: macTokens(policy.macSecret, policy.macTimestampWindowSeconds, storage.macNonces, clock),
    authorization: new AuthorizationService({
      storage: { ...storageParts(storage), clients: frontDoorClients },
      audit,
      issuer,
      issuerIdentifier: policy.issuer,
      clock,
      authorizationCodeTtl: policy.authorizationCodeTtl,
      allowPlainPkce: policy.allowPlainPkce,
      verifyIdTokenHint: checkIdTokenHint,
      idTokens,
      resources: resourceTargets,
      pushedRequestTtl: policy.pushedAuthorizationRequestTtl,
      requirePushedRequests: policy.requirePushedAuthorizationRequests,
      dpop: { verifier: dpop, parEndpointUrl: policy.pushedAuthorizationRequestEndpoint },
    }),
    deviceAuthorization: new DeviceAuthorizationService({
      storage,
      clock,
      audit,
      resources: resourceTargets,
      policy: policy.deviceAuthorization,
    }),
    browserSessions,
    account: new AccountSecurity({ storage, users, sessions: browserSessions, signIns, passwords }),
    logout: new RpInitiatedLogout({ clients: storage.clients, verifyIdTokenHint: checkIdTokenHint }),
    connectedApps: new ConnectedApps(storage, clock, audit),
    clients: new ClientRegistry(storage, clock, audit),
    clientDocuments,
    audit,
    identityProviders: new IdentityProviderRegistry({
      storage,
      clock,
      audit,
      upstream: deps.upstreamProviders ?? noUpstreamProviders,
      policy: policy.identityProviders,
    }),
    registration: new DynamicRegistration({
      storage,
      clock,
      issuer: policy.issuer,
      clientConfigurationUri: policy.dynamicRegistration.clientConfigurationUri,
      policy: policy.dynamicRegistration.policy,
      scopes: policy.dynamicRegistration.scopes,
      reservedNames: policy.dynamicRegistration.reservedNames,
      allowPrivateJwksUri: policy.dynamicRegistration.allowPrivateJwksUri,
      audit,
    }),
    initialAccessTokens: new InitialAccessTokenRegistry(storage, clock, audit),
    users,
    accountMail,
    scopes,
    resources: new ResourceRegistry(storage, clock, resourceTargets, audit),
    grants: new GrantRegistry(storage, clock, audit),
    signingKeys: new SigningKeyRegistry(storage, keyRing, audit),
    verifyIdTokenHint: checkIdTokenHint,
    authenticateClient: authenticate,
    signIn: ({ username, password, address }) =>
      signIns.attempt(passwords, { username, password }, { address }),
    secondFactors,
    async verifySecondFactor({ userId, code, address }) {
      const user = await secondFactors.user(userId);
      if (user === undefined) return { outcome: 'wrong-credentials' };
      return signIns.attempt(secondFactors.authenticatorFor(code), { user, code }, { address });
    },
    async confirmTotpSetUp({ userId, code, address }) {
      const user = await secondFactors.user(userId);
      if (user === undefined) return { outcome: 'wrong-credentials' };
      return signIns.attempt(secondFactors.totpSetUp, { user, code }, { address });
    },
    federation: new Federation({
      storage,
      clock,
      signIns,
      upstream: deps.upstreamProviders ?? noUpstreamProviders,
      redirectUri: policy.identityProviders.redirectUri,
    }),
    passkeys: new Passkeys({
      passkeys: storage.passkeys,
      challenges: storage.webAuthnChallenges,
      users: storage.users,
      clock,
      issuer: policy.issuer,
      signIns,
      audit,
    }),
    async prepare() {
      await scopes.ensureBuiltIns();
      await keyRing.init();
    },
    async close() {
      await keyRing.close();
      await accountMail.idle();
      await mailer.close?.();
    },
  };
}
