import { randomBytes } from 'node:crypto';
import type { Clock } from '../shared/clock.js';
import { randomToken, sha256 } from '../shared/crypto.js';
import {
  GRANT_TYPES,
  TOKEN_TYPES,
  type Client,
  type ClientRegistration,
  type GrantType,
  type TokenType,
} from './model.js';
import type { ClientFilter, ClientStore, ScopeStore } from './ports.js';
import {
  DEFAULT_ID_TOKEN_SIGNING_ALGORITHM,
  ID_TOKEN_SIGNING_ALGORITHMS,
  isIdTokenSigningAlgorithm,
  type IdTokenSigningAlgorithm,
} from './oidc/id-token.js';
import { canonicalRedirectUri } from './redirect-uri.js';
import { isValidScopeName } from './scopes.js';
import { ConflictError, NotFoundError, ValidationError } from './validation.js';

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
  /** RFC 9126 §6: /authorize takes only this client's pushed requests; false when absent. */
  require_pushed_authorization_requests?: boolean;
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
  /** Who registered it: an operator, or the client itself with an initial access token or none. */
  registration: ClientRegistration;
  require_pushed_authorization_requests: boolean;
  created_at: string;
  updated_at: string;
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
    registration: client.registration,
    require_pushed_authorization_requests: client.requirePushedAuthorizationRequests,
    created_at: new Date(client.createdAt * 1000).toISOString(),
    updated_at: new Date(client.updatedAt * 1000).toISOString(),
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
  | 'firstGrantedAt'
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
  const isPublic = input.public ?? false;
  if (isPublic && grantTypes.includes('client_credentials')) {
    throw new ValidationError('grant_types', 'a public client cannot use client_credentials');
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
  return {
    name,
    redirectUris,
    grantTypes: grantTypes as GrantType[],
    scopes,
    tokenType: tokenType as TokenType,
    isPublic,
    idTokenSignedResponseAlg: idTokenAlg,
    postLogoutRedirectUris,
    requirePushedAuthorizationRequests: requirePushed,
  };
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

/** What the client registry reads and writes. */
export type ClientStorage = { readonly clients: ClientStore; readonly scopes: ScopeStore };

export async function registerScopesOf(
  storage: Pick<ClientStorage, 'scopes'>,
  scopes: string[],
  now: number,
): Promise<void> {
  // A scope first named by a client gets a readable description until an operator writes one.
  await storage.scopes.ensure(
    scopes.map((name) => ({ name, description: `Access “${name}”`, createdAt: now })),
  );
}

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

/**
 * Replaces a client's settings with `input`, validated in full as at creation (PUT /v1/clients/{id}).
 * Turning a public client confidential makes it a secret, returned once; the reverse drops it.
 */
export async function replaceClient(
  storage: ClientStorage,
  clock: Clock,
  client: Client,
  input: ClientInput,
): Promise<ClientWithSecret> {
  const fields = validateClientInput(input);
  const now = clock.now();
  const fresh = !fields.isPublic && client.secretHash === null ? newClientSecret() : undefined;
  const updated: Client = {
    ...client,
    ...fields,
    secretHash: fields.isPublic ? null : (fresh?.hash ?? client.secretHash),
    updatedAt: now,
  };
  await registerScopesOf(storage, updated.scopes, now);
  // 'keep' unless the secret itself changes: a rotation racing this write is not undone (ClientStore.update).
  const secretChanges = updated.secretHash !== client.secretHash;
  if (!(await storage.clients.update(updated, secretChanges ? 'replace' : 'keep'))) {
    throw noSuchClient(client.id);
  }
  return { client: updated, secret: fresh?.secret };
}

/**
 * Changes the fields given and keeps the others (PATCH /v1/clients/{id}, `gatehouse clients update`);
 * the result is validated as a whole, and the secret follows `public` as in replaceClient.
 */
export async function updateClient(
  storage: ClientStorage,
  clock: Clock,
  client: Client,
  changes: Partial<ClientInput>,
): Promise<ClientWithSecret> {
  return replaceClient(storage, clock, client, {
    name: changes.name ?? client.name,
    redirect_uris: changes.redirect_uris ?? client.redirectUris,
    grant_types: changes.grant_types ?? client.grantTypes,
    scopes: changes.scopes ?? client.scopes,
    token_type: changes.token_type ?? client.tokenType,
    public: changes.public ?? client.isPublic,
    post_logout_redirect_uris: changes.post_logout_redirect_uris ?? client.postLogoutRedirectUris,
    id_token_signed_response_alg: changes.id_token_signed_response_alg ?? client.idTokenSignedResponseAlg,
    require_pushed_authorization_requests:
      changes.require_pushed_authorization_requests ?? client.requirePushedAuthorizationRequests,
  });
}

/** A new secret for a confidential client, returned once; the old one stops working at once. */
export async function rotateClientSecret(
  storage: Pick<ClientStorage, 'clients'>,
  clock: Clock,
  client: Client,
): Promise<string> {
  if (client.isPublic) throw new ConflictError('public', 'a public client has no secret');
  const { secret, hash } = newClientSecret();
  if (!(await storage.clients.update({ ...client, secretHash: hash, updatedAt: clock.now() }, 'replace'))) {
    throw noSuchClient(client.id);
  }
  return secret;
}

/** How a new client came: an operator's, unless it registered itself (RFC 7591). */
export interface ClientOrigin {
  registration: ClientRegistration;
  /** SHA-256 of its RFC 7592 registration access token; null for an operator's client. */
  registrationAccessTokenHash: string | null;
}

const OPERATOR: ClientOrigin = { registration: 'operator', registrationAccessTokenHash: null };

export async function createClient(
  storage: ClientStorage,
  clock: Clock,
  input: ClientInput,
  origin: ClientOrigin = OPERATOR,
): Promise<ClientWithSecret> {
  const fields = validateClientInput(input);
  const now = clock.now();
  const credentials = fields.isPublic ? undefined : newClientSecret();
  const client: Client = {
    ...fields,
    id: newClientId(),
    secretHash: credentials?.hash ?? null,
    registration: origin.registration,
    registrationAccessTokenHash: origin.registrationAccessTokenHash,
    firstGrantedAt: null,
    createdAt: now,
    updatedAt: now,
  };
  await registerScopesOf(storage, client.scopes, now);
  await storage.clients.insert(client);
  return { client, secret: credentials?.secret };
}

/** The client registry: what /v1/clients, `gatehouse clients` and the playground read and change. */
export class ClientRegistry {
  constructor(
    private readonly storage: ClientStorage,
    private readonly clock: Clock,
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

  create(input: ClientInput): Promise<ClientWithSecret> {
    return createClient(this.storage, this.clock, input);
  }

  replace(client: Client, input: ClientInput): Promise<ClientWithSecret> {
    return replaceClient(this.storage, this.clock, client, input);
  }

  update(client: Client, changes: Partial<ClientInput>): Promise<ClientWithSecret> {
    return updateClient(this.storage, this.clock, client, changes);
  }

  rotateSecret(client: Client): Promise<string> {
    return rotateClientSecret(this.storage, this.clock, client);
  }

  /** Deletes the client; its grants go with it (and so every token it holds). False when unknown. */
  delete(id: string): Promise<boolean> {
    return this.storage.clients.delete(id);
  }
}
