import type { AuditContext, AuditLog } from '../audit/audit-log.js';
import type { Clock } from '../../shared/clock.js';
import { randomToken, safeEqual, sha256 } from '../../shared/crypto.js';
import {
  ClientRegistry,
  type ClientInput,
  type ClientStorage,
  type ClientWithSecret,
} from './client-registry.js';
import { OAuthError } from '../errors.js';
import {
  DEVICE_CODE_GRANT_TYPE,
  type Client,
  type ClientRegistration,
  type GrantType,
  type InitialAccessToken,
} from '../model.js';
import type { ClientStore, InitialAccessTokenStore, ScopeStore } from '../ports.js';
import { canonicalRedirectUri } from './redirect-uri.js';
import { ValidationError } from '../validation.js';
import { isLiteralNonPublicHost } from '../../shared/non-public-address.js';
import { looksLikeAny } from './confusable-names.js';

/** GATEHOUSE_DYNAMIC_REGISTRATION (docs/decisions.md, decision 20). */
export const REGISTRATION_POLICIES = ['off', 'token', 'open'] as const;
export type RegistrationPolicy = (typeof REGISTRATION_POLICIES)[number];

/**
 * What a client that registers itself may be, whatever the policy: the code flow, the device
 * authorization grant (RFC 8628: a TV or a command line tool, the user approving in a browser), or
 * both, with refresh tokens, as a public client or a confidential one. Never the password grant (it
 * hands the user's password to the client), client_credentials (tokens with no user behind them) or
 * the implicit grant (RFC 9700 §2.1.2). docs/decisions.md, decision 20.
 */
export const REGISTRABLE_GRANT_TYPES: readonly GrantType[] = [
  'authorization_code',
  DEVICE_CODE_GRANT_TYPE,
  'refresh_token',
];
/** The grants a user approves, one of which a self-registered client must have: refresh_token alone is nothing. */
const USER_GRANT_TYPES: readonly GrantType[] = ['authorization_code', DEVICE_CODE_GRANT_TYPE];
export const REGISTRABLE_RESPONSE_TYPES: readonly string[] = ['code'];
/**
 * RFC 7591 §2 token_endpoint_auth_method values a registration may ask for. A confidential client
 * may use either secret method at the token endpoint, whichever it registered (client-auth.ts); a
 * private_key_jwt client (RFC 7523 §2.2) registers its `jwks` or `jwks_uri` and has no secret.
 */
export const REGISTRABLE_AUTH_METHODS = [
  'none',
  'client_secret_basic',
  'client_secret_post',
  'private_key_jwt',
] as const;
export type RegistrableAuthMethod = (typeof REGISTRABLE_AUTH_METHODS)[number];

/** The most redirect URIs (and post-logout ones) a registration may list, as on /v1/clients. */
export const MAX_REGISTERED_URIS = 50;

/** Initial access tokens live a day unless the operator says otherwise, at most a year. */
export const INITIAL_ACCESS_TOKEN_TTL = 86_400;
export const INITIAL_ACCESS_TOKEN_MAX_TTL = 365 * 86_400;

/** Never open to a client that registers itself: it would manage Gatehouse (/v1). */
export const NEVER_REGISTRABLE_SCOPES: readonly string[] = ['admin'];

/** RFC 7591 §3.2.2: the request's metadata is refused. */
export const invalidClientMetadata = (description: string): OAuthError =>
  new OAuthError('invalid_client_metadata', description);
export const invalidRedirectUri = (description: string): OAuthError =>
  new OAuthError('invalid_redirect_uri', description);

/**
 * A registration or management request without a valid bearer token (RFC 7591 §3, RFC 7592 §2):
 * answered as RFC 6750 §3.1 says, 401 with a Bearer challenge; `code` undefined when no token came.
 */
export class RegistrationAuthError extends Error {
  constructor(
    readonly code: 'invalid_token' | undefined,
    readonly description: string,
  ) {
    super(description);
    this.name = 'RegistrationAuthError';
  }
}

/** What a registration may ask for (docs/decisions.md, decision 20). */
export interface RegistrationLimits {
  /** The scopes the client may be registered with; all of them when its metadata names none. */
  scopes: readonly string[];
  /**
   * Whether `require_mfa` may be set: only by a registration made with an operator's initial access
   * token, never by open registration (docs/decisions.md, decision 34). Absent: it may not.
   */
  mayRequireMfa?: boolean;
}

/** What no self-registered client may be, whatever its limits (docs/decisions.md, decision 20). */
export interface RegistrationRules {
  /** The issuer: no redirect URI of a self-registered client may be on its origin. */
  issuer: string;
  /** Names no self-registered client may take, nor any name that looks like one: the product's. */
  reservedNames: readonly string[];
  /** GATEHOUSE_ALLOW_PRIVATE_JWKS_URI: the same setting the jwks_uri fetcher obeys (decision 21). */
  allowPrivateJwksUri: boolean;
}

/** A host compared as a browser reaches it: lower case, without the root's trailing dot. */
function reachedOrigin(url: URL): string {
  return `${url.protocol}//${url.hostname.replace(/\.$/, '')}${url.port === '' ? '' : `:${url.port}`}`;
}

/**
 * Refuses a redirect URI (or post-logout one) on the issuer's own origin: a self-registered client
 * sent there could land the user on one of the server's own pages with parameters it chose (the
 * playground's callback among them), under the server's name. Malformed URIs are left to the
 * client registry's rules, which say what is wrong with them.
 */
function refuseIssuerOrigin(field: string, uris: readonly string[], issuer: string): void {
  const own = reachedOrigin(new URL(issuer));
  for (const uri of uris) {
    const canonical = canonicalRedirectUri(uri).uri;
    if (canonical === undefined) continue;
    const url = new URL(canonical);
    if ((url.protocol === 'https:' || url.protocol === 'http:') && reachedOrigin(url) === own) {
      throw invalidRedirectUri(`${field} must not be on the server's own origin (${own})`);
    }
  }
}

type Metadata = Record<string, unknown>;

function isObject(value: unknown): value is Metadata {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringArray(
  metadata: Metadata,
  field: string,
  refuse: (description: string) => OAuthError,
): string[] | undefined {
  const value = metadata[field];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || !value.every((item): item is string => typeof item === 'string')) {
    throw refuse(`${field} must be an array of strings`);
  }
  return value;
}

function optionalString(metadata: Metadata, field: string): string | undefined {
  const value = metadata[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalidClientMetadata(`${field} must be a string`);
  return value;
}

/** A name for a client that sent no client_name: where its first redirect URI goes. */
function nameFromRedirect(uri: string | undefined): string {
  const canonical = uri === undefined ? undefined : canonicalRedirectUri(uri).uri;
  if (canonical === undefined) return 'Unnamed application';
  const url = new URL(canonical);
  return url.hostname !== '' ? url.hostname : url.protocol.slice(0, -1);
}

/** The token endpoint authentication method a client is registered with (RFC 7591 §2). */
export function authMethodOf(client: Pick<Client, 'tokenEndpointAuthMethod'>): RegistrableAuthMethod {
  return client.tokenEndpointAuthMethod;
}

/**
 * RFC 7591 §2 client metadata, checked against what a self-registered client may be, as the input
 * `clients create` takes (validated further, with the same rules, by ClientRegistry.create). Members Gatehouse
 * does not know or use (client_uri, logo_uri, contacts, software_statement, …) are ignored, as §2
 * allows; the answer lists what was registered.
 */
export function clientInputFromMetadata(
  metadata: unknown,
  limits: RegistrationLimits,
  rules: RegistrationRules,
): ClientInput {
  if (!isObject(metadata)) throw invalidClientMetadata('the body must be a JSON object of client metadata');

  // §2: grant_types defaults to authorization_code (checked below; the redirect URIs depend on it).
  const grantTypes = stringArray(metadata, 'grant_types', invalidClientMetadata) ?? ['authorization_code'];
  const codeFlow = grantTypes.includes('authorization_code');

  // §2: redirect-based flows need registered redirect URIs; the device grant redirects nowhere
  // (RFC 8628 §3.3), so a client of it alone needs none.
  const redirectUris = stringArray(metadata, 'redirect_uris', invalidRedirectUri) ?? [];
  if (codeFlow && redirectUris.length === 0) {
    throw invalidRedirectUri('redirect_uris is required: at least one redirect URI');
  }
  if (redirectUris.length > MAX_REGISTERED_URIS) {
    throw invalidRedirectUri(`redirect_uris may list at most ${MAX_REGISTERED_URIS} URIs`);
  }
  refuseIssuerOrigin('redirect_uris', redirectUris, rules.issuer);

  const authMethod = optionalString(metadata, 'token_endpoint_auth_method') ?? 'client_secret_basic';
  if (!(REGISTRABLE_AUTH_METHODS as readonly string[]).includes(authMethod)) {
    throw invalidClientMetadata(
      `token_endpoint_auth_method "${authMethod}" is not supported (supported: ${REGISTRABLE_AUTH_METHODS.join(', ')})`,
    );
  }

  for (const grantType of grantTypes) {
    if (!(REGISTRABLE_GRANT_TYPES as readonly string[]).includes(grantType)) {
      throw invalidClientMetadata(
        `grant type "${grantType}" is not open to clients that register themselves (open: ${REGISTRABLE_GRANT_TYPES.join(', ')})`,
      );
    }
  }
  // §2: response_types defaults to code; a client without the code flow has no response type.
  const responseTypes =
    stringArray(metadata, 'response_types', invalidClientMetadata) ?? (codeFlow ? ['code'] : []);
  for (const responseType of responseTypes) {
    if (!REGISTRABLE_RESPONSE_TYPES.includes(responseType)) {
      throw invalidClientMetadata(
        `response type "${responseType}" is not open to clients that register themselves (open: code)`,
      );
    }
  }
  // §2.1: the response type code goes with the grant type authorization_code, each needing the other.
  if (responseTypes.includes('code') !== codeFlow) {
    throw invalidClientMetadata(
      'grant_types and response_types disagree: the response type code goes with the grant type authorization_code (RFC 7591 §2.1)',
    );
  }
  if (!grantTypes.some((grantType) => (USER_GRANT_TYPES as readonly string[]).includes(grantType))) {
    throw invalidClientMetadata(`grant_types must include ${USER_GRANT_TYPES.join(' or ')}`);
  }

  const scopeValue = optionalString(metadata, 'scope');
  const scopes =
    scopeValue === undefined ? [...limits.scopes] : scopeValue.split(' ').filter((name) => name !== '');
  const outside = scopes.filter((name) => !limits.scopes.includes(name));
  if (outside.length > 0) {
    throw invalidClientMetadata(
      `scope ${outside.map((name) => `"${name}"`).join(', ')} is not open to this registration` +
        ` (open: ${limits.scopes.join(' ') || 'none'})`,
    );
  }

  // RFC 9126 §6: a client may ask that /authorize take only its pushed requests.
  const requirePushed = metadata.require_pushed_authorization_requests;
  if (requirePushed !== undefined && requirePushed !== null && typeof requirePushed !== 'boolean') {
    throw invalidClientMetadata('require_pushed_authorization_requests must be true or false');
  }

  // RFC 9449 §5.2: a client may ask that its token requests always carry a DPoP proof.
  const dpopBound = metadata.dpop_bound_access_tokens;
  if (dpopBound !== undefined && dpopBound !== null && typeof dpopBound !== 'boolean') {
    throw invalidClientMetadata('dpop_bound_access_tokens must be true or false');
  }

  // Decision 34: a client whose users must use two factors. An operator vouches for such a client by its
  // initial access token; an open registration cannot make users set up an authenticator app.
  const requireMfa = metadata.require_mfa;
  if (requireMfa !== undefined && requireMfa !== null && typeof requireMfa !== 'boolean') {
    throw invalidClientMetadata('require_mfa must be true or false');
  }
  if (requireMfa === true && limits.mayRequireMfa !== true) {
    throw invalidClientMetadata(
      "require_mfa is set only by a registration with an operator's initial access token",
    );
  }

  const postLogoutRedirectUris = stringArray(metadata, 'post_logout_redirect_uris', invalidClientMetadata);
  if (postLogoutRedirectUris !== undefined && postLogoutRedirectUris.length > MAX_REGISTERED_URIS) {
    throw invalidClientMetadata(`post_logout_redirect_uris may list at most ${MAX_REGISTERED_URIS} URIs`);
  }
  refuseIssuerOrigin('post_logout_redirect_uris', postLogoutRedirectUris ?? [], rules.issuer);

  // The consent page shows the name as the application's own claim: never the product's, nor one
  // that looks like it (Unicode UTS #39 skeletons; core/clients/confusable-names.ts).
  const clientName = optionalString(metadata, 'client_name');
  if (clientName !== undefined && looksLikeAny(clientName.trim(), rules.reservedNames)) {
    throw invalidClientMetadata('client_name is, or looks like, the name of this server');
  }

  // Decision 21: the fetch refuses non-public addresses; one literally in the URL (or a name that is
  // loopback by definition) is refused now, without DNS: resolving names is the fetch's to do.
  const jwksUri =
    metadata.jwks_uri === undefined || metadata.jwks_uri === null
      ? undefined
      : optionalString(metadata, 'jwks_uri');
  if (jwksUri !== undefined && !rules.allowPrivateJwksUri) {
    let host: string | undefined;
    try {
      host = new URL(jwksUri).hostname;
    } catch {
      host = undefined; // Malformed: the client registry says what is wrong with it.
    }
    if (host !== undefined && isLiteralNonPublicHost(host)) {
      throw invalidClientMetadata('jwks_uri must not name a loopback, private or other non-public address');
    }
  }

  return {
    name: clientName ?? nameFromRedirect(redirectUris[0]),
    redirect_uris: redirectUris,
    grant_types: grantTypes,
    scopes,
    token_type: 'bearer',
    public: authMethod === 'none',
    token_endpoint_auth_method: authMethod,
    // RFC 7591 §2: jwks and jwks_uri are for private_key_jwt here; ClientRegistry.create checks them (one of
    // the two, public keys only) as it does for an operator's client.
    ...(metadata.jwks === undefined || metadata.jwks === null ? {} : { jwks: metadata.jwks }),
    ...(jwksUri === undefined ? {} : { jwks_uri: jwksUri }),
    require_pushed_authorization_requests: requirePushed === true,
    dpop_bound_access_tokens: dpopBound === true,
    require_mfa: requireMfa === true,
    ...(postLogoutRedirectUris === undefined ? {} : { post_logout_redirect_uris: postLogoutRedirectUris }),
    ...(metadata.id_token_signed_response_alg === undefined || metadata.id_token_signed_response_alg === null
      ? {}
      : { id_token_signed_response_alg: optionalString(metadata, 'id_token_signed_response_alg') }),
  };
}

/** The RFC 7591 member a client-registry field is known by, for the error description. */
const METADATA_NAMES: Record<string, string> = { name: 'client_name', scopes: 'scope' };

/** Runs a client-registry operation, its ValidationError answered as RFC 7591 §3.2.2 says. */
async function asRegistrationError<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    const field = METADATA_NAMES[error.field] ?? error.field;
    const description = `${field}${error.message.slice(error.field.length)}`;
    throw field === 'redirect_uris' ? invalidRedirectUri(description) : invalidClientMetadata(description);
  }
}

/** RFC 7591 §3.2.1 client information response, with RFC 7592 §3's members. */
export interface ClientInformation {
  client_id: string;
  /** Only when this response made the secret (shown once; stored as a hash). */
  client_secret?: string;
  client_id_issued_at: number;
  /** REQUIRED when a secret was issued; 0: it does not expire. */
  client_secret_expires_at?: number;
  /** Only in the registration's response: Gatehouse keeps its hash, never the token. */
  registration_access_token?: string;
  registration_client_uri: string;
  client_name: string;
  redirect_uris: string[];
  grant_types: GrantType[];
  response_types: string[];
  token_endpoint_auth_method: string;
  /** The client's public keys, for private_key_jwt (RFC 7591 §2): one of these two, never both. */
  jwks?: unknown;
  jwks_uri?: string;
  scope: string;
  post_logout_redirect_uris: string[];
  id_token_signed_response_alg: string;
  require_pushed_authorization_requests: boolean;
  /** RFC 9449 §5.2. */
  dpop_bound_access_tokens: boolean;
  /** Decision 34: its users sign in with two factors. */
  require_mfa: boolean;
}

/** The client as RFC 7591 metadata: what it is registered with now, after Gatehouse's defaults. */
export function clientInformation(
  client: Client,
  clientConfigurationUri: (clientId: string) => string,
  once: { secret?: string | undefined; registrationAccessToken?: string } = {},
): ClientInformation {
  const responseTypes = [
    ...(client.grantTypes.includes('authorization_code') ? ['code'] : []),
    ...(client.grantTypes.includes('implicit') ? ['token'] : []),
  ];
  return {
    client_id: client.id,
    ...(once.secret === undefined ? {} : { client_secret: once.secret }),
    client_id_issued_at: client.createdAt,
    ...(client.secretHash === null ? {} : { client_secret_expires_at: 0 }),
    ...(once.registrationAccessToken === undefined
      ? {}
      : { registration_access_token: once.registrationAccessToken }),
    registration_client_uri: clientConfigurationUri(client.id),
    client_name: client.name,
    redirect_uris: client.redirectUris,
    grant_types: client.grantTypes,
    response_types: responseTypes,
    token_endpoint_auth_method: authMethodOf(client),
    ...(client.jwks === null ? {} : { jwks: client.jwks }),
    ...(client.jwksUri === null ? {} : { jwks_uri: client.jwksUri }),
    scope: client.scopes.join(' '),
    post_logout_redirect_uris: client.postLogoutRedirectUris,
    id_token_signed_response_alg: client.idTokenSignedResponseAlg,
    require_pushed_authorization_requests: client.requirePushedAuthorizationRequests,
    dpop_bound_access_tokens: client.dpopBoundAccessTokens,
    require_mfa: client.requireMfa,
  };
}

export interface DynamicRegistrationOptions {
  storage: ClientStorage & {
    readonly clients: ClientStore;
    readonly scopes: ScopeStore;
    readonly initialAccessTokens: InitialAccessTokenStore;
  };
  clock: Clock;
  /** The issuer: no redirect URI of a self-registered client may be on its origin. */
  issuer: string;
  /** RFC 7592 §3 `registration_client_uri` of a client (the endpoint table's). */
  clientConfigurationUri: (clientId: string) => string;
  policy: RegistrationPolicy;
  /** The scopes open registration allows, and a token without scopes of its own. */
  scopes: readonly string[];
  /** Names a self-registered client may not take, nor any that looks like one (decision 20). */
  reservedNames: readonly string[];
  /** GATEHOUSE_ALLOW_PRIVATE_JWKS_URI (decision 21). */
  allowPrivateJwksUri: boolean;
  /** Where registrations and RFC 7592 changes are recorded (decision 41); the engine's log. */
  audit?: AuditLog;
}

/** RFC 7592: the client manages itself with its registration access token. */
const selfManaged = (clientId: string): AuditContext => ({
  actor: { type: 'client', id: clientId },
  address: null,
});

/**
 * RFC 7591 dynamic client registration and RFC 7592 client management (docs/decisions.md,
 * decision 20). The HTTP layer serves it only while the policy is not `off`.
 */
export class DynamicRegistration {
  private readonly clients: ClientRegistry;

  constructor(private readonly options: DynamicRegistrationOptions) {
    this.clients = new ClientRegistry(options.storage, options.clock, options.audit);
  }

  get policy(): RegistrationPolicy {
    return this.options.policy;
  }

  /**
   * POST /register (RFC 7591 §3.1). `initialAccessToken` is the request's bearer token: required
   * under the `token` policy; under `open`, a valid one still makes it a token registration (its
   * scopes), and an invalid one is refused rather than ignored.
   */
  async register(metadata: unknown, initialAccessToken: string | undefined): Promise<ClientInformation> {
    const { policy, storage } = this.options;
    if (policy === 'off') throw new Error('dynamic client registration is off');
    let token: InitialAccessToken | undefined;
    if (initialAccessToken !== undefined) token = await this.initialAccessToken(initialAccessToken);
    else if (policy === 'token') {
      throw new RegistrationAuthError(undefined, 'an initial access token is required (RFC 7591 §3)');
    }
    const limits = { scopes: token?.scopes ?? this.options.scopes, mayRequireMfa: token !== undefined };
    const input = clientInputFromMetadata(metadata, limits, this.rules());
    const registrationAccessToken = randomToken('rat_');
    const registration: ClientRegistration = token === undefined ? 'open' : 'token';
    const { client, secret } = await asRegistrationError(() =>
      this.clients.create(input, {
        registration,
        registrationAccessTokenHash: sha256(registrationAccessToken),
        // Kept with the client: every later update is held to them (decision 20).
        registrationScopes: [...limits.scopes],
      }),
    );
    if (token !== undefined) await storage.initialAccessTokens.countRegistration(token.id);
    return clientInformation(client, this.options.clientConfigurationUri, {
      secret,
      registrationAccessToken,
    });
  }

  /** GET /register/:id (RFC 7592 §2.1). */
  async read(clientId: string, registrationAccessToken: string | undefined): Promise<ClientInformation> {
    const client = await this.managed(clientId, registrationAccessToken);
    return clientInformation(client, this.options.clientConfigurationUri);
  }

  /**
   * PUT /register/:id (RFC 7592 §2.2): the metadata sent replaces the registration whole, a member
   * left out taking its default. `client_id` must be the client's; `client_secret`, when sent, must be
   * its current secret (a client never chooses its secret). The scopes are held to the limits the
   * registration was made under, its initial access token's or the open list as they were then; a
   * client registered before those were recorded, to the scopes it has (docs/decisions.md, decision 20).
   */
  async update(
    clientId: string,
    registrationAccessToken: string | undefined,
    metadata: unknown,
  ): Promise<ClientInformation> {
    const client = await this.managed(clientId, registrationAccessToken);
    if (!isObject(metadata)) throw invalidClientMetadata('the body must be a JSON object of client metadata');
    if (metadata.client_id !== client.id) {
      throw invalidClientMetadata(
        'client_id must be sent, and be the id of the client updated (RFC 7592 §2.2)',
      );
    }
    const secret = metadata.client_secret;
    if (
      secret !== undefined &&
      (typeof secret !== 'string' ||
        client.secretHash === null ||
        !safeEqual(sha256(secret), client.secretHash))
    ) {
      throw invalidClientMetadata(
        'client_secret cannot be chosen: send the current secret, or none (RFC 7592 §2.2)',
      );
    }
    const scopes = client.registrationScopes ?? client.scopes;
    const input = clientInputFromMetadata(
      metadata,
      { scopes, mayRequireMfa: client.registration === 'token' },
      this.rules(),
    );
    // Decision 39: which identity providers the client offers is the operator's choice, kept as it is.
    const updated: ClientWithSecret = await asRegistrationError(() =>
      this.clients.replace(
        client,
        { ...input, identity_providers: client.identityProviders },
        selfManaged(client.id),
      ),
    );
    return clientInformation(updated.client, this.options.clientConfigurationUri, {
      secret: updated.secret,
    });
  }

  private rules(): RegistrationRules {
    const { issuer, reservedNames, allowPrivateJwksUri } = this.options;
    return { issuer, reservedNames, allowPrivateJwksUri };
  }

  /** DELETE /register/:id (RFC 7592 §2.3): the client, its grants and its tokens are gone. */
  async delete(clientId: string, registrationAccessToken: string | undefined): Promise<void> {
    const client = await this.managed(clientId, registrationAccessToken);
    await this.clients.delete(client.id, selfManaged(client.id));
  }

  /**
   * The client the registration access token manages. A wrong token, an unknown client and an
   * operator's client (which has no such token) are refused alike, so client ids cannot be probed
   * (RFC 7592 §2: 401 for a client that does not exist).
   */
  private async managed(clientId: string, token: string | undefined): Promise<Client> {
    if (token === undefined) {
      throw new RegistrationAuthError(undefined, 'a registration access token is required (RFC 7592 §2)');
    }
    const presented = sha256(token);
    const client = await this.options.storage.clients.get(clientId);
    const stored = client?.registrationAccessTokenHash ?? null;
    // Compared in constant time, and a comparison is spent when there is nothing to compare with.
    const matches = safeEqual(presented, stored ?? presented) && stored !== null;
    if (client === undefined || !matches) {
      throw new RegistrationAuthError(
        'invalid_token',
        'the registration access token is not valid for this client',
      );
    }
    return client;
  }

  /** The live initial access token presented, or a refusal (RFC 7591 §3, RFC 6750 §3.1). */
  private async initialAccessToken(presented: string): Promise<InitialAccessToken> {
    const token = await this.options.storage.initialAccessTokens.getByHash(sha256(presented));
    if (token === undefined) {
      throw new RegistrationAuthError('invalid_token', 'the initial access token is not valid');
    }
    if (token.expiresAt <= this.options.clock.now()) {
      throw new RegistrationAuthError('invalid_token', 'the initial access token has expired');
    }
    return token;
  }
}
