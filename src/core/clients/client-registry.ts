import { randomBytes } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import { randomToken, sha256 } from '../../shared/crypto.js';
import { jwkSetProblem, MAX_JWKS_BYTES } from './client-keys.js';
import {
  CLIENT_AUTH_METHODS,
  GRANT_TYPES,
  TOKEN_EXCHANGE_GRANT,
  TOKEN_TYPES,
  type Client,
  type ClientAuthMethod,
  type ClientRegistration,
  type GrantType,
  type PublicJwkSet,
  type TokenType,
} from '../model.js';
import type { ClientFilter, Storage } from '../ports.js';
import { AuditLog, UNATTRIBUTED, type AuditContext } from '../audit/audit-log.js';
import {
  DEFAULT_ID_TOKEN_SIGNING_ALGORITHM,
  ID_TOKEN_SIGNING_ALGORITHMS,
  isIdTokenSigningAlgorithm,
  type IdTokenSigningAlgorithm,
} from '../tokens/id-token.js';
import { canonicalRedirectUri } from './redirect-uri.js';
import { canonicalResourceUri } from '../scopes/resources.js';
import { registerScopesOf } from '../scopes/scope-registry.js';
import { isValidScopeName } from '../scopes/scopes.js';
import { ConflictError, NotFoundError, ValidationError } from '../validation.js';

/** The fields an operator sets on a client: the same on the command line and in POST /v1/clients. */
export interface ClientInput {
  name: string;
  redirect_uris?: string[];
  grant_types?: string[];
  scopes?: string[];
  token_type?: string;
  public?: boolean;
  /** Where RP-initiated logout may return the browser (exact match, the redirect URIs' rules). */
  post_logout_redirect_uris?: string[];
  /** OpenID Connect Registration §2; RS256 when absent. */
  id_token_signed_response_alg?: string;
  /**
   * RFC 7591 §2. Absent: `none` for a public client, else `client_secret_basic` (which accepts
   * client_secret_post too). `public` may be left out; when given it must agree.
   */
  token_endpoint_auth_method?: string;
  /** RFC 7591 §2: the public keys of a private_key_jwt client (a JWK Set), or null. */
  jwks?: unknown;
  /** RFC 7591 §2: where a private_key_jwt client publishes them instead (https), or null. */
  jwks_uri?: string | null;
  /** RFC 9126 §6: /authorize takes only this client's pushed requests; false when absent. */
  require_pushed_authorization_requests?: boolean;
  /** RFC 9449 §5.2: every token request must carry a DPoP proof; false when absent. */
  dpop_bound_access_tokens?: boolean;
  /** Its users sign in with two factors (docs/decisions.md, decision 34); false when absent. */
  require_mfa?: boolean;
  /**
   * RFC 8693 §2.1: the resource URIs this client may name as `resource` or `audience` when it
   * exchanges a token (docs/decisions.md, decision 23); none when absent.
   */
  token_exchange_targets?: string[];
  /**
   * The upstream identity providers its sign-in page offers, by id, in this order; null or absent offers
   * every one (decision 39), an empty list none. Each must exist.
   */
  identity_providers?: string[] | null;
}

/** A client as shown to operators: never the secret hash. */
export interface ClientView {
  client_id: string;
  name: string;
  redirect_uris: string[];
  grant_types: GrantType[];
  scopes: string[];
  token_type: TokenType;
  public: boolean;
  post_logout_redirect_uris: string[];
  id_token_signed_response_alg: IdTokenSigningAlgorithm;
  token_endpoint_auth_method: ClientAuthMethod;
  jwks: PublicJwkSet | null;
  jwks_uri: string | null;
  /** Who registered it: an operator, or the client itself with an initial access token or none. */
  registration: ClientRegistration;
  require_pushed_authorization_requests: boolean;
  dpop_bound_access_tokens: boolean;
  require_mfa: boolean;
  token_exchange_targets: string[];
  /** The identity providers its sign-in page offers; null: every one (decision 39). */
  identity_providers: string[] | null;
  created_at: string;
  updated_at: string;
  /**
   * A Client ID Metadata Document's client (decision 46): until when the copy fetched last stands
   * (updated_at is that fetch); null for every other client.
   */
  document_expires_at: string | null;
}

export function viewClient(client: Client): ClientView {
  return {
    client_id: client.id,
    name: client.name,
    redirect_uris: client.redirectUris,
    grant_types: client.grantTypes,
    scopes: client.scopes,
    token_type: client.tokenType,
    public: client.isPublic,
    post_logout_redirect_uris: client.postLogoutRedirectUris,
    id_token_signed_response_alg: client.idTokenSignedResponseAlg,
    token_endpoint_auth_method: client.tokenEndpointAuthMethod,
    jwks: client.jwks,
    jwks_uri: client.jwksUri,
    registration: client.registration,
    require_pushed_authorization_requests: client.requirePushedAuthorizationRequests,
    dpop_bound_access_tokens: client.dpopBoundAccessTokens,
    require_mfa: client.requireMfa,
    token_exchange_targets: client.tokenExchangeTargets,
    identity_providers: client.identityProviders,
    created_at: new Date(client.createdAt * 1000).toISOString(),
    updated_at: new Date(client.updatedAt * 1000).toISOString(),
    document_expires_at:
      client.documentExpiresAt === null ? null : new Date(client.documentExpiresAt * 1000).toISOString(),
  };
}

const REDIRECTING_GRANTS: readonly GrantType[] = ['authorization_code', 'implicit'];

// A name is shown on the consent page: control characters, and format characters such as U+202E
// RIGHT-TO-LEFT OVERRIDE, could make it read as another application's (Unicode TR 36 §2.3). The
// zero-width joiners (U+200C, U+200D) stay allowed: some scripts and emoji need them.
const CONTROL_CHARACTERS = /[\p{Cc}\p{Cs}\p{Co}\p{Zl}\p{Zp}]|(?![\u200c\u200d])\p{Cf}/u;

/** A client's settings: what ClientInput sets, not its identity, secret, origin or times. */
export type ClientSettings = Omit<
  Client,
  | 'id'
  | 'secretHash'
  | 'createdAt'
  | 'updatedAt'
  | 'registration'
  | 'registrationAccessTokenHash'
  | 'registrationScopes'
  | 'firstGrantedAt'
  | 'documentExpiresAt'
>;

/** Checks the operator's input and fills in defaults; throws ValidationError naming the field. */
export function validateClientInput(input: ClientInput): ClientSettings {
  const name = typeof input.name === 'string' ? input.name.trim() : '';
  if (name === '' || name.length > 200) throw new ValidationError('name', 'must be 1 to 200 characters');
  if (CONTROL_CHARACTERS.test(name)) {
    throw new ValidationError('name', 'must not contain control or bidirectional formatting characters');
  }
  const redirectUris = canonicalUris('redirect_uris', input.redirect_uris);
  // RP-Initiated Logout §3.1 (and §5: an open redirector otherwise): registered, matched exactly,
  // and held to the redirect URIs' rules.
  const postLogoutRedirectUris = canonicalUris('post_logout_redirect_uris', input.post_logout_redirect_uris);
  const idTokenAlg = input.id_token_signed_response_alg ?? DEFAULT_ID_TOKEN_SIGNING_ALGORITHM;
  if (!isIdTokenSigningAlgorithm(idTokenAlg)) {
    throw new ValidationError(
      'id_token_signed_response_alg',
      `must be one of ${ID_TOKEN_SIGNING_ALGORITHMS.join(', ')}`,
    );
  }
  const grantTypes = [
    ...new Set(
      input.grant_types ??
        (redirectUris.length > 0 ? ['authorization_code', 'refresh_token'] : ['client_credentials']),
    ),
  ];
  for (const grantType of grantTypes) {
    if (!(GRANT_TYPES as readonly string[]).includes(grantType)) {
      throw new ValidationError(
        'grant_types',
        `unknown grant type "${grantType}" (known: ${GRANT_TYPES.join(', ')})`,
      );
    }
  }
  if (grantTypes.length === 0) throw new ValidationError('grant_types', 'must name at least one grant type');
  const usesRedirects = grantTypes.some((g) => (REDIRECTING_GRANTS as readonly string[]).includes(g));
  if (usesRedirects && redirectUris.length === 0) {
    throw new ValidationError('redirect_uris', 'authorization_code and implicit need a redirect URI');
  }
  const { isPublic, tokenEndpointAuthMethod, jwks, jwksUri } = validateAuthentication(input);
  if (isPublic && grantTypes.includes('client_credentials')) {
    throw new ValidationError('grant_types', 'a public client cannot use client_credentials');
  }
  if (isPublic && grantTypes.includes(TOKEN_EXCHANGE_GRANT)) {
    // RFC 8693 §2.1 asks for client authentication where the client can authenticate; a public
    // client could replay any access token it saw (docs/decisions.md, decision 22).
    throw new ValidationError('grant_types', 'a public client cannot use token exchange');
  }
  const scopes = [...new Set(input.scopes ?? [])];
  for (const scope of scopes) {
    if (!isValidScopeName(scope)) throw new ValidationError('scopes', `malformed scope name "${scope}"`);
  }
  const requirePushed = input.require_pushed_authorization_requests ?? false;
  if (typeof requirePushed !== 'boolean') {
    throw new ValidationError('require_pushed_authorization_requests', 'must be true or false');
  }
  const tokenType = input.token_type ?? 'bearer';
  if (!(TOKEN_TYPES as readonly string[]).includes(tokenType)) {
    throw new ValidationError('token_type', 'must be bearer or mac');
  }
  const dpopBound = input.dpop_bound_access_tokens ?? false;
  if (typeof dpopBound !== 'boolean') {
    throw new ValidationError('dpop_bound_access_tokens', 'must be true or false');
  }
  // A MAC token has its own key; a token is never both (docs/decisions.md, decision 3).
  if (dpopBound && tokenType === 'mac') {
    throw new ValidationError(
      'dpop_bound_access_tokens',
      'a client with MAC tokens cannot have DPoP-bound ones',
    );
  }
  // The implicit grant's tokens come from /authorize, where no proof can be sent (RFC 9449 §5.2).
  if (dpopBound && grantTypes.includes('implicit')) {
    throw new ValidationError(
      'dpop_bound_access_tokens',
      'the implicit grant issues tokens without a DPoP proof: remove it from grant_types',
    );
  }
  const requireMfa = input.require_mfa ?? false;
  if (typeof requireMfa !== 'boolean') throw new ValidationError('require_mfa', 'must be true or false');
  const tokenExchangeTargets = exchangeTargets(input.token_exchange_targets);
  if (tokenExchangeTargets.length > 0 && !grantTypes.includes(TOKEN_EXCHANGE_GRANT)) {
    throw new ValidationError(
      'token_exchange_targets',
      `only a client with the grant type ${TOKEN_EXCHANGE_GRANT} exchanges tokens`,
    );
  }
  const identityProviders = identityProviderIds(input.identity_providers);
  return {
    name,
    redirectUris,
    grantTypes: grantTypes as GrantType[],
    scopes,
    tokenType: tokenType as TokenType,
    isPublic,
    idTokenSignedResponseAlg: idTokenAlg,
    postLogoutRedirectUris,
    tokenEndpointAuthMethod,
    jwks,
    jwksUri,
    requirePushedAuthorizationRequests: requirePushed,
    dpopBoundAccessTokens: dpopBound,
    requireMfa,
    tokenExchangeTargets,
    identityProviders,
  };
}

/** A provider id's form (core/federation/identity-providers.ts IDENTITY_PROVIDER_ID); whether it exists is the registry's to check. */
const PROVIDER_ID = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;

/** Decision 39: the providers a client offers, by id, without repeats; null offers every one. */
function identityProviderIds(value: unknown): string[] | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value) || value.length > 50) {
    throw new ValidationError(
      'identity_providers',
      'must be a list of at most 50 identity provider ids, or null',
    );
  }
  const ids: string[] = [];
  for (const id of value as unknown[]) {
    if (typeof id !== 'string' || !PROVIDER_ID.test(id)) {
      throw new ValidationError('identity_providers', `${JSON.stringify(id)} is not an identity provider id`);
    }
    if (!ids.includes(id)) ids.push(id);
  }
  return ids;
}

/**
 * The resources a token-exchanging client may target (decision 23), in canonical form (RFC 8707 §2,
 * as `resource` is compared). Whether each is registered is checked at each exchange: a resource
 * registered later, or removed, counts as it is then.
 */
function exchangeTargets(values: unknown): string[] {
  if (values === undefined) return [];
  if (!Array.isArray(values)) throw new ValidationError('token_exchange_targets', 'must be a list of URIs');
  const uris: string[] = [];
  for (const value of values as unknown[]) {
    const canonical = typeof value === 'string' ? canonicalResourceUri(value) : undefined;
    if (canonical?.uri === undefined) {
      throw new ValidationError(
        'token_exchange_targets',
        `${typeof value === 'string' ? value : 'a value'} ${canonical?.problem ?? 'is not a string'}`,
      );
    }
    if (!uris.includes(canonical.uri)) uris.push(canonical.uri);
  }
  return uris;
}

/** Whether a client with this method holds a secret (RFC 6749 §2.3.1). */
export const usesSecret = (method: ClientAuthMethod): boolean =>
  method === 'client_secret_basic' || method === 'client_secret_post';

/**
 * How the client authenticates (RFC 7591 §2 token_endpoint_auth_method, jwks, jwks_uri): `none` is a
 * public client and nothing else is; a private_key_jwt client has exactly one of jwks and jwks_uri
 * (RFC 7591 §2 forbids both), and no other client has either.
 */
function validateAuthentication(
  input: ClientInput,
): Pick<Client, 'isPublic' | 'tokenEndpointAuthMethod' | 'jwks' | 'jwksUri'> {
  const declared = input.token_endpoint_auth_method;
  if (declared !== undefined && !(CLIENT_AUTH_METHODS as readonly string[]).includes(declared)) {
    throw new ValidationError(
      'token_endpoint_auth_method',
      `must be one of ${CLIENT_AUTH_METHODS.join(', ')}`,
    );
  }
  const method: ClientAuthMethod =
    (declared as ClientAuthMethod | undefined) ?? (input.public === true ? 'none' : 'client_secret_basic');
  const isPublic = method === 'none';
  if (input.public !== undefined && input.public !== isPublic) {
    throw new ValidationError(
      'public',
      isPublic
        ? 'a client with token_endpoint_auth_method none is public'
        : `a ${method} client is not public`,
    );
  }
  const jwks = input.jwks ?? null;
  const jwksUri = input.jwks_uri ?? null;
  if (method !== 'private_key_jwt') {
    if (jwks !== null) throw new ValidationError('jwks', 'only a private_key_jwt client has keys');
    if (jwksUri !== null) throw new ValidationError('jwks_uri', 'only a private_key_jwt client has keys');
    return { isPublic, tokenEndpointAuthMethod: method, jwks: null, jwksUri: null };
  }
  if ((jwks === null) === (jwksUri === null)) {
    throw new ValidationError(
      jwks === null ? 'jwks_uri' : 'jwks',
      'a private_key_jwt client needs exactly one of jwks and jwks_uri',
    );
  }
  return {
    isPublic,
    tokenEndpointAuthMethod: method,
    jwks: jwks === null ? null : validJwks(jwks),
    jwksUri: jwksUri === null ? null : validJwksUri(jwksUri),
  };
}

function validJwks(value: unknown): PublicJwkSet {
  const problem = jwkSetProblem(value, true);
  if (problem !== undefined) throw new ValidationError('jwks', problem);
  // Only the set's keys are kept: other members of the object mean nothing here (RFC 7517 §5).
  const set: PublicJwkSet = { keys: (value as PublicJwkSet).keys };
  if (Buffer.byteLength(JSON.stringify(set)) > MAX_JWKS_BYTES) {
    throw new ValidationError('jwks', `must be at most ${MAX_JWKS_BYTES} bytes as JSON`);
  }
  return set;
}

/** An https URL without credentials or fragment; where it may point is checked at each fetch. */
function validJwksUri(value: unknown): string {
  if (typeof value !== 'string' || value.length > 2000) {
    throw new ValidationError('jwks_uri', 'must be an https URL of at most 2000 characters');
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ValidationError('jwks_uri', 'must be an absolute https URL');
  }
  if (url.protocol !== 'https:') throw new ValidationError('jwks_uri', 'must be an https URL');
  if (url.username !== '' || url.password !== '') {
    throw new ValidationError('jwks_uri', 'must not carry user information');
  }
  if (url.hash !== '' || value.includes('#'))
    throw new ValidationError('jwks_uri', 'must not have a fragment');
  return url.href;
}

/** Redirect URIs in canonical form: what /authorize compares and redirects to is what a browser parses. */
function canonicalUris(field: string, uris: readonly string[] | undefined): string[] {
  const canonicalised: string[] = [];
  for (const uri of uris ?? []) {
    const canonical = canonicalRedirectUri(uri);
    if (canonical.uri === undefined) throw new ValidationError(field, `${uri} ${canonical.problem}`);
    if (!canonicalised.includes(canonical.uri)) canonicalised.push(canonical.uri);
  }
  return canonicalised;
}

/** A new client secret: 256 bits, shown once, stored only as its SHA-256. */
export function newClientSecret(): { secret: string; hash: string } {
  const secret = randomToken('cs_');
  return { secret, hash: sha256(secret) };
}

/** What the client registry reads and writes: its changes go in a transaction with their audit events. */
export type ClientStorage = Storage;

/**
 * 128 random bits, base64url. Drawn again when the first character is "-": an id like "-Kx…" would be
 * read as an option by every command line that takes it (`gatehouse clients show ID`, curl, shells'
 * own tools), one client in 64 otherwise.
 */
function newClientId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

const noSuchClient = (id: string) => new NotFoundError('client_id', `no client with id ${id}`);

/** A client and, when the operation made one, its new secret (shown once, stored only as a hash). */
export interface ClientWithSecret {
  client: Client;
  secret: string | undefined;
}

/** How a new client came: an operator's, unless it registered itself (RFC 7591). */
export interface ClientOrigin {
  registration: ClientRegistration;
  /** SHA-256 of its RFC 7592 registration access token; null for an operator's client. */
  registrationAccessTokenHash: string | null;
  /** The scopes the registration was made under (RFC 7591); null for an operator's client. */
  registrationScopes: string[] | null;
}

const OPERATOR: ClientOrigin = {
  registration: 'operator',
  registrationAccessTokenHash: null,
  registrationScopes: null,
};

/** The client registry: what /v1/clients, `gatehouse clients` and the playground read and change. */
export class ClientRegistry {
  constructor(
    private readonly storage: ClientStorage,
    private readonly clock: Clock,
    /** Every change is recorded, in the change's own transaction (decision 41). */
    private readonly audit: AuditLog = new AuditLog(storage, clock),
  ) {}

  get(id: string): Promise<Client | undefined> {
    return this.storage.clients.get(id);
  }

  /** The client, or a NotFoundError. */
  async require(id: string): Promise<Client> {
    const client = await this.storage.clients.get(id);
    if (client === undefined) throw noSuchClient(id);
    return client;
  }

  list(filter: ClientFilter): Promise<{ items: Client[]; total: number }> {
    return this.storage.clients.list(filter);
  }

  /** A new client: an operator's, unless `origin` says it registered itself (RFC 7591). */
  create(
    input: ClientInput,
    origin: ClientOrigin = OPERATOR,
    context: AuditContext = UNATTRIBUTED,
  ): Promise<ClientWithSecret> {
    return this.insertNew(newClientId(), input, origin, context);
  }

  /**
   * An operator's client with an id of Gatehouse's choosing: the admin console's built-in client
   * (console-client.ts, decision 42), which every process must find by its id. Gatehouse makes it, so
   * its creation is recorded with no actor (decision 41).
   */
  createWithId(id: string, input: ClientInput): Promise<ClientWithSecret> {
    return this.insertNew(id, input, OPERATOR, UNATTRIBUTED);
  }

  private async insertNew(
    id: string,
    input: ClientInput,
    origin: ClientOrigin,
    context: AuditContext,
  ): Promise<ClientWithSecret> {
    const fields = validateClientInput(input);
    await this.checkIdentityProviders(fields.identityProviders);
    const now = this.clock.now();
    const credentials = usesSecret(fields.tokenEndpointAuthMethod) ? newClientSecret() : undefined;
    const client: Client = {
      ...fields,
      id,
      secretHash: credentials?.hash ?? null,
      registration: origin.registration,
      registrationAccessTokenHash: origin.registrationAccessTokenHash,
      registrationScopes: origin.registrationScopes,
      firstGrantedAt: null,
      documentExpiresAt: null,
      createdAt: now,
      updatedAt: now,
    };
    await this.audit.change(context, async (storage, record) => {
      await registerScopesOf(storage, client.scopes, now);
      await storage.clients.insert(client);
      await record({
        // RFC 7591: a client that registered itself is told apart from an operator's.
        type: origin.registration === 'operator' ? 'client.created' : 'client.registered',
        clientId: client.id,
        after: viewClient(client),
        ...(origin.registration === 'operator' ? {} : { detail: `registration ${origin.registration}` }),
      });
    });
    return { client, secret: credentials?.secret };
  }

  /**
   * Replaces a client's settings with `input`, validated in full as at creation (PUT /v1/clients/{id}).
   * A client that comes to use a secret (from public or private_key_jwt) is made one, returned once; a
   * client that stops using one loses it.
   */
  async replace(
    client: Client,
    input: ClientInput,
    context: AuditContext = UNATTRIBUTED,
  ): Promise<ClientWithSecret> {
    // Decision 46: a document's client is what its document says; its next fetch would undo an edit.
    if (client.registration === 'document') {
      throw new ConflictError(
        'registration',
        `this client is described by its document at ${client.id}: change the document instead`,
      );
    }
    const fields = validateClientInput(input);
    await this.checkIdentityProviders(fields.identityProviders);
    const now = this.clock.now();
    const secretKept = usesSecret(fields.tokenEndpointAuthMethod);
    const fresh = secretKept && client.secretHash === null ? newClientSecret() : undefined;
    const updated: Client = {
      ...client,
      ...fields,
      // A client that stops using a secret (public, or private_key_jwt) loses it.
      secretHash: secretKept ? (fresh?.hash ?? client.secretHash) : null,
      updatedAt: now,
    };
    // 'keep' unless the secret itself changes: a rotation racing this write is not undone (ClientStore.update).
    const secretChanges = updated.secretHash !== client.secretHash;
    await this.audit.change(context, async (storage, record) => {
      await registerScopesOf(storage, updated.scopes, now);
      if (!(await storage.clients.update(updated, secretChanges ? 'replace' : 'keep'))) {
        throw noSuchClient(client.id);
      }
      await record({
        type: 'client.updated',
        clientId: client.id,
        before: viewClient(client),
        after: viewClient(updated),
        ...(secretChanges ? { detail: updated.secretHash === null ? 'secret dropped' : 'secret made' } : {}),
      });
    });
    return { client: updated, secret: fresh?.secret };
  }

  /**
   * Changes the fields given and keeps the others (PATCH /v1/clients/{id}, `gatehouse clients update`);
   * the result is validated as a whole, and the secret follows the method as in replace. `public`
   * given alone sets the method it implies; keys are kept only while the client stays private_key_jwt,
   * and giving one of jwks / jwks_uri drops the other.
   */
  update(
    client: Client,
    changes: Partial<ClientInput>,
    context: AuditContext = UNATTRIBUTED,
  ): Promise<ClientWithSecret> {
    const method =
      changes.token_endpoint_auth_method ??
      (changes.public === undefined ? client.tokenEndpointAuthMethod : undefined);
    const keyed = method === 'private_key_jwt';
    const jwks =
      changes.jwks !== undefined ? changes.jwks : !keyed || changes.jwks_uri != null ? null : client.jwks;
    const jwksUri =
      changes.jwks_uri !== undefined
        ? changes.jwks_uri
        : !keyed || changes.jwks != null
          ? null
          : client.jwksUri;
    return this.replace(
      client,
      {
        name: changes.name ?? client.name,
        redirect_uris: changes.redirect_uris ?? client.redirectUris,
        grant_types: changes.grant_types ?? client.grantTypes,
        scopes: changes.scopes ?? client.scopes,
        token_type: changes.token_type ?? client.tokenType,
        public: changes.public,
        token_endpoint_auth_method: method,
        jwks,
        jwks_uri: jwksUri,
        post_logout_redirect_uris: changes.post_logout_redirect_uris ?? client.postLogoutRedirectUris,
        id_token_signed_response_alg: changes.id_token_signed_response_alg ?? client.idTokenSignedResponseAlg,
        require_pushed_authorization_requests:
          changes.require_pushed_authorization_requests ?? client.requirePushedAuthorizationRequests,
        dpop_bound_access_tokens: changes.dpop_bound_access_tokens ?? client.dpopBoundAccessTokens,
        require_mfa: changes.require_mfa ?? client.requireMfa,
        // Targets go with the grant type: a client no longer exchanging tokens keeps none.
        token_exchange_targets:
          changes.token_exchange_targets ??
          ((changes.grant_types ?? client.grantTypes).includes(TOKEN_EXCHANGE_GRANT)
            ? client.tokenExchangeTargets
            : []),
        // null is a value here (every provider): only a field left out keeps the list.
        identity_providers:
          changes.identity_providers !== undefined ? changes.identity_providers : client.identityProviders,
      },
      context,
    );
  }

  /** Each provider a client names exists (decision 39); a ValidationError names the first that does not. */
  private async checkIdentityProviders(ids: readonly string[] | null): Promise<void> {
    for (const id of ids ?? []) {
      if ((await this.storage.identityProviders.get(id)) === undefined) {
        throw new ValidationError(
          'identity_providers',
          `no identity provider with id "${id}" (gatehouse idps list shows them)`,
        );
      }
    }
  }

  /** A new secret for a confidential client, returned once; the old one stops working at once. */
  async rotateSecret(client: Client, context: AuditContext = UNATTRIBUTED): Promise<string> {
    if (client.isPublic) throw new ConflictError('public', 'a public client has no secret');
    if (!usesSecret(client.tokenEndpointAuthMethod)) {
      throw new ConflictError(
        'token_endpoint_auth_method',
        `a ${client.tokenEndpointAuthMethod} client has no secret`,
      );
    }
    const { secret, hash } = newClientSecret();
    await this.audit.change(context, async (storage, record) => {
      if (
        !(await storage.clients.update(
          { ...client, secretHash: hash, updatedAt: this.clock.now() },
          'replace',
        ))
      ) {
        throw noSuchClient(client.id);
      }
      await record({ type: 'client.secret-rotated', clientId: client.id });
    });
    return secret;
  }

  /** Deletes the client; its grants go with it (and so every token it holds). False when unknown. */
  delete(id: string, context: AuditContext = UNATTRIBUTED): Promise<boolean> {
    return this.audit.change(context, async (storage, record) => {
      const client = await storage.clients.get(id);
      if (client === undefined || !(await storage.clients.delete(id))) return false;
      await record({ type: 'client.deleted', clientId: id, before: viewClient(client) });
      return true;
    });
  }
}
