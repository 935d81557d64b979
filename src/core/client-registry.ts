import { randomBytes } from 'node:crypto';
import type { Clock } from '../shared/clock.js';
import { randomToken, sha256 } from '../shared/crypto.js';
import { GRANT_TYPES, TOKEN_TYPES, type Client, type GrantType, type TokenType } from './model.js';
import type { Storage } from './ports.js';
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
    created_at: new Date(client.createdAt * 1000).toISOString(),
    updated_at: new Date(client.updatedAt * 1000).toISOString(),
  };
}

const REDIRECTING_GRANTS: readonly GrantType[] = ['authorization_code', 'implicit'];

// A name is shown on the consent page: control characters, and format characters such as U+202E
// RIGHT-TO-LEFT OVERRIDE, could make it read as another application's (Unicode TR 36 §2.3). The
// zero-width joiners (U+200C, U+200D) stay allowed: some scripts and emoji need them.
const CONTROL_CHARACTERS = /[\p{Cc}\p{Cs}\p{Co}\p{Zl}\p{Zp}]|(?![\u200c\u200d])\p{Cf}/u;

/** Checks the operator's input and fills in defaults; throws ValidationError naming the field. */
export function validateClientInput(
  input: ClientInput,
): Omit<Client, 'id' | 'secretHash' | 'createdAt' | 'updatedAt'> {
  const name = typeof input.name === 'string' ? input.name.trim() : '';
  if (name === '' || name.length > 200) throw new ValidationError('name', 'must be 1 to 200 characters');
  if (CONTROL_CHARACTERS.test(name)) {
    throw new ValidationError('name', 'must not contain control or bidirectional formatting characters');
  }
  // Stored in canonical form: what /authorize compares and redirects to is what a browser parses.
  const redirectUris: string[] = [];
  for (const uri of input.redirect_uris ?? []) {
    const canonical = canonicalRedirectUri(uri);
    if (canonical.uri === undefined)
      throw new ValidationError('redirect_uris', `${uri} ${canonical.problem}`);
    if (!redirectUris.includes(canonical.uri)) redirectUris.push(canonical.uri);
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
  };
}

/** A new client secret: 256 bits, shown once, stored only as its SHA-256. */
export function newClientSecret(): { secret: string; hash: string } {
  const secret = randomToken('cs_');
  return { secret, hash: sha256(secret) };
}

export async function registerScopesOf(storage: Storage, scopes: string[], now: number): Promise<void> {
  // A scope first named by a client gets a readable description until an operator writes one.
  await storage.scopes.ensure(
    scopes.map((name) => ({ name, description: `Access “${name}”`, createdAt: now })),
  );
}

/**
 * Changes the fields given and keeps the others (the command line's `clients update`); the result is
 * validated as a whole, as at creation.
 */
export async function updateClient(
  storage: Storage,
  clock: Clock,
  client: Client,
  changes: Omit<Partial<ClientInput>, 'public'>,
): Promise<Client> {
  const fields = validateClientInput({
    name: changes.name ?? client.name,
    redirect_uris: changes.redirect_uris ?? client.redirectUris,
    grant_types: changes.grant_types ?? client.grantTypes,
    scopes: changes.scopes ?? client.scopes,
    token_type: changes.token_type ?? client.tokenType,
    public: client.isPublic,
  });
  const now = clock.now();
  const updated: Client = { ...client, ...fields, updatedAt: now };
  await registerScopesOf(storage, updated.scopes, now);
  if (!(await storage.clients.update(updated, 'keep')))
    throw new NotFoundError('client_id', `no client with id ${client.id}`);
  return updated;
}

/** A new secret for a confidential client, returned once; the old one stops working at once. */
export async function rotateClientSecret(storage: Storage, clock: Clock, client: Client): Promise<string> {
  if (client.isPublic) throw new ConflictError('public', 'a public client has no secret');
  const { secret, hash } = newClientSecret();
  if (!(await storage.clients.update({ ...client, secretHash: hash, updatedAt: clock.now() }, 'replace'))) {
    throw new NotFoundError('client_id', `no client with id ${client.id}`);
  }
  return secret;
}

export async function createClient(
  storage: Storage,
  clock: Clock,
  input: ClientInput,
): Promise<{ client: Client; secret: string | undefined }> {
  const fields = validateClientInput(input);
  const now = clock.now();
  const credentials = fields.isPublic ? undefined : newClientSecret();
  const client: Client = {
    ...fields,
    id: randomBytes(16).toString('base64url'),
    secretHash: credentials?.hash ?? null,
    createdAt: now,
    updatedAt: now,
  };
  await registerScopesOf(storage, client.scopes, now);
  await storage.clients.insert(client);
  return { client, secret: credentials?.secret };
}
