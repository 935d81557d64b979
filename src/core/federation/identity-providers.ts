import { generateKeyPairSync } from 'node:crypto';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { isoTime, type Clock } from '../../shared/clock.js';
import { seal } from '../keys/sealed-box.js';
import type {
  Client,
  FederatedLink,
  IdentityProvider,
  UpstreamClaimMapping,
  UpstreamClientAuth,
} from '../model.js';
import { AuditLog, UNATTRIBUTED, type AuditContext } from '../audit/audit-log.js';
import type { Storage } from '../ports.js';
import { ConflictError, NotFoundError, ValidationError } from '../validation.js';
import { sealContext, UpstreamError, type DiscoveredProvider, type UpstreamProviders } from './upstream.js';

/**
 * Upstream identity providers as data (docs/decisions.md, decision 39): what `gatehouse idps` and
 * /v1/identity-providers create, show, change and delete, and the operator's view of users' links to
 * them. The sign-in through a provider is another module's (upstream.ts, the port; the broker's pages).
 */

/** How Gatehouse authenticates at an upstream's token endpoint (model.ts UpstreamClientAuth). */
export const UPSTREAM_CLIENT_AUTH_METHODS: readonly UpstreamClientAuth[] = [
  'client_secret_basic',
  'client_secret_post',
  'private_key_jwt',
  'none',
];

/** A provider's id: in its redirect URI and in `idp_hint`, so a slug of at most 64 characters. */
export const IDENTITY_PROVIDER_ID = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
export const IDENTITY_PROVIDER_NAME_MAX_LENGTH = 100;
/** Bounds of the operator's other values: generous, but no value fills a page or a row. */
export const UPSTREAM_URL_MAX_LENGTH = 2000;
export const UPSTREAM_CLIENT_ID_MAX_LENGTH = 500;
export const UPSTREAM_CLIENT_SECRET_MAX_LENGTH = 1000;
export const UPSTREAM_SCOPES_MAX = 50;
export const CLAIM_NAME_MAX_LENGTH = 200;

/** The scopes asked of an OpenID Provider when the operator names none (OpenID Connect Core §5.4). */
export const DEFAULT_OIDC_SCOPES: readonly string[] = ['openid', 'email', 'profile'];

/**
 * Where a person's claims are read when the operator maps none: OpenID Connect Core §5.1's standard
 * claims. A plain OAuth 2.0 provider has no standard subject, so its `subject` is always the operator's.
 */
export const DEFAULT_CLAIM_MAPPING: UpstreamClaimMapping = {
  subject: 'sub',
  username: 'preferred_username',
  email: 'email',
  emailVerified: 'email_verified',
  name: 'name',
};

/** The claim mapping as /v1 and `--json` write it: snake_case, like every other field there. */
export interface ClaimMappingInput {
  subject?: string;
  username?: string;
  email?: string;
  email_verified?: string;
  name?: string;
}
const CLAIM_FIELDS: ReadonlyArray<[keyof ClaimMappingInput, keyof UpstreamClaimMapping]> = [
  ['subject', 'subject'],
  ['username', 'username'],
  ['email', 'email'],
  ['email_verified', 'emailVerified'],
  ['name', 'name'],
];

/** The fields an operator sets on a provider: the same on the command line and in /v1. */
export interface IdentityProviderInput {
  /** A slug; from the name when absent (create only: the id is in the redirect URI registered upstream). */
  id?: string;
  name: string;
  /** An OpenID Provider's issuer (found by discovery); absent or null for a plain OAuth 2.0 provider. */
  issuer?: string | null;
  authorization_endpoint?: string | null;
  token_endpoint?: string | null;
  userinfo_endpoint?: string | null;
  client_id: string;
  client_auth?: string;
  /** Write-only: sealed at once, never shown again. Absent on a change: the sealed one is kept. */
  client_secret?: string;
  scopes?: string[];
  claim_mapping?: ClaimMappingInput;
  link_by_verified_email?: boolean;
  trust_upstream_assurance?: boolean;
  required_acr?: string | null;
  logo_uri?: string | null;
}

/** A provider as operators see it: never a sealed value, and the redirect URI to register upstream. */
export interface IdentityProviderView {
  id: string;
  name: string;
  kind: IdentityProvider['kind'];
  issuer: string | null;
  authorization_endpoint: string | null;
  token_endpoint: string | null;
  userinfo_endpoint: string | null;
  client_id: string;
  client_auth: UpstreamClientAuth;
  /** Whether a client secret is kept (sealed); the secret itself is write-only. */
  client_secret_set: boolean;
  /** For private_key_jwt: the public key the upstream verifies Gatehouse's assertions with. */
  public_jwk: Record<string, unknown> | null;
  scopes: string[];
  claim_mapping: Required<ClaimMappingInput>;
  link_by_verified_email: boolean;
  trust_upstream_assurance: boolean;
  required_acr: string | null;
  logo_uri: string | null;
  /** `<issuer>/sign-in/callback/<id>`: what the operator registers at the upstream. */
  redirect_uri: string;
  created_at: string;
  updated_at: string;
}

export function viewIdentityProvider(
  provider: IdentityProvider,
  redirectUri: (providerId: string) => string,
): IdentityProviderView {
  const mapping = provider.claimMapping;
  return {
    id: provider.id,
    name: provider.name,
    kind: provider.kind,
    issuer: provider.issuer,
    authorization_endpoint: provider.authorizationEndpoint,
    token_endpoint: provider.tokenEndpoint,
    userinfo_endpoint: provider.userinfoEndpoint,
    client_id: provider.clientId,
    client_auth: provider.clientAuth,
    client_secret_set: provider.clientSecretSealed !== null,
    public_jwk: provider.publicJwk,
    scopes: provider.scopes,
    claim_mapping: claimMappingView(mapping),
    link_by_verified_email: provider.linkByVerifiedEmail,
    trust_upstream_assurance: provider.trustUpstreamAssurance,
    required_acr: provider.requiredAcr,
    logo_uri: provider.logoUri,
    redirect_uri: redirectUri(provider.id),
    created_at: isoTime(provider.createdAt),
    updated_at: isoTime(provider.updatedAt),
  };
}

/** A user's link to an upstream person, as operators see it (`users links`, /v1/users/{id}/identity-links). */
export interface FederatedLinkView {
  id: string;
  provider_id: string;
  /** The provider's name now. */
  provider_name: string;
  /** The upstream issuer, or `urn:gatehouse:idp:<id>` for a plain OAuth 2.0 provider (upstreamIssuer). */
  issuer: string;
  subject: string;
  /** The upstream user name or email when it was linked. */
  label: string | null;
  created_at: string;
  last_used_at: string | null;
}

export function viewFederatedLink(link: FederatedLink, providerName: string): FederatedLinkView {
  return {
    id: link.id,
    provider_id: link.providerId,
    provider_name: providerName,
    issuer: link.issuer,
    subject: link.subject,
    label: link.label,
    created_at: isoTime(link.createdAt),
    last_used_at: link.lastUsedAt === null ? null : isoTime(link.lastUsedAt),
  };
}

/**
 * A provider id made from its name: "Acme SSO" is `acme-sso`, "Société Générale" `societe-generale`
 * (accents dropped); '' when nothing of the name is a letter or digit of the Latin alphabet.
 */
export function slugOf(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, 64)
    .replace(/-+$/, '');
}

// The name is the button's text ("Continue with NAME"): control and format characters (U+202E and its
// kind) could make it read as another provider's (Unicode TR 36 §2.3), as for clients' names.
const PRINTABLE = /^[^\p{C}]+$/u;
/** RFC 6749 §3.3 scope-token. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;
/** A claim name or dotted path, an acr value: printable ASCII without spaces. */
const ASCII_WORD = /^[\x21-\x7e]+$/;
/** RFC 6749 Appendix A VSCHAR: what a client id or secret may hold. */
const VSCHARS = /^[\x20-\x7e]+$/;

function validId(value: unknown): string {
  if (typeof value !== 'string' || !IDENTITY_PROVIDER_ID.test(value)) {
    throw new ValidationError(
      'id',
      'must be 1 to 64 lower-case letters, digits and hyphens, starting and ending with a letter or digit',
    );
  }
  return value;
}

function validName(value: unknown): string {
  const name = typeof value === 'string' ? value.trim() : '';
  if (name === '' || name.length > IDENTITY_PROVIDER_NAME_MAX_LENGTH) {
    throw new ValidationError('name', `must be 1 to ${IDENTITY_PROVIDER_NAME_MAX_LENGTH} characters`);
  }
  if (!PRINTABLE.test(name)) {
    throw new ValidationError('name', 'must not contain control or bidirectional formatting characters');
  }
  return name;
}

/**
 * An https URL without user information or fragment (`query: false` refuses a query too: an issuer,
 * OpenID Connect Discovery 1.0 §2). An operator's URL may name a private or loopback address (decision
 * 39: a company's provider often lives on one), unlike URLs clients supply.
 */
function httpsUrl(field: string, value: unknown, options: { query?: boolean } = {}): string {
  if (typeof value !== 'string' || value === '' || value.length > UPSTREAM_URL_MAX_LENGTH) {
    throw new ValidationError(field, `must be an https URL of at most ${UPSTREAM_URL_MAX_LENGTH} characters`);
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ValidationError(field, 'must be an absolute https URL');
  }
  if (url.protocol !== 'https:') throw new ValidationError(field, 'must be an https URL');
  if (url.username !== '' || url.password !== '') {
    throw new ValidationError(field, 'must not carry user information');
  }
  if (url.hash !== '' || value.includes('#')) throw new ValidationError(field, 'must not have a fragment');
  if (options.query === false && (url.search !== '' || value.includes('?'))) {
    throw new ValidationError(field, 'must not have a query');
  }
  return url.href;
}

/**
 * The issuer as the operator wrote it, once checked: OpenID Connect Discovery 1.0 §4.3 compares the
 * discovered `issuer` with it exactly, so it is not put in canonical form (which adds a "/").
 */
function validIssuer(value: unknown): string {
  httpsUrl('issuer', value, { query: false });
  return value as string;
}

function validBoolean(field: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new ValidationError(field, 'must be true or false');
  return value;
}

function validClientId(value: unknown): string {
  if (typeof value !== 'string' || value === '' || value.length > UPSTREAM_CLIENT_ID_MAX_LENGTH) {
    throw new ValidationError(
      'client_id',
      `must be the client id the provider issued, 1 to ${UPSTREAM_CLIENT_ID_MAX_LENGTH} characters`,
    );
  }
  if (!VSCHARS.test(value)) {
    throw new ValidationError('client_id', 'must be printable ASCII (RFC 6749 Appendix A)');
  }
  return value;
}

/** Checked without ever repeating it: an error names the rule, never the value. */
function validClientSecret(value: unknown): string {
  if (
    typeof value !== 'string' ||
    value === '' ||
    value.length > UPSTREAM_CLIENT_SECRET_MAX_LENGTH ||
    !VSCHARS.test(value)
  ) {
    throw new ValidationError(
      'client_secret',
      `must be 1 to ${UPSTREAM_CLIENT_SECRET_MAX_LENGTH} printable ASCII characters (RFC 6749 Appendix A)`,
    );
  }
  return value;
}

function validScopes(value: unknown, kind: IdentityProvider['kind']): string[] {
  if (value === undefined) return kind === 'oidc' ? [...DEFAULT_OIDC_SCOPES] : [];
  if (!Array.isArray(value) || value.length > UPSTREAM_SCOPES_MAX) {
    throw new ValidationError('scopes', `must be a list of at most ${UPSTREAM_SCOPES_MAX} scope names`);
  }
  const scopes: string[] = [];
  for (const scope of value as unknown[]) {
    if (typeof scope !== 'string' || scope.length > 200 || !SCOPE_TOKEN.test(scope)) {
      throw new ValidationError('scopes', `malformed scope name ${JSON.stringify(scope)}`);
    }
    if (!scopes.includes(scope)) scopes.push(scope);
  }
  // OpenID Connect Core §3.1.2.1: without openid the request is not an OpenID Connect request, and no
  // ID token comes back to prove who signed in.
  if (kind === 'oidc' && !scopes.includes('openid')) {
    throw new ValidationError('scopes', 'an OpenID Provider is asked for openid: add it to the scopes');
  }
  return scopes;
}

function validClaimMapping(value: unknown, kind: IdentityProvider['kind']): UpstreamClaimMapping {
  if (value !== undefined && (typeof value !== 'object' || value === null || Array.isArray(value))) {
    throw new ValidationError('claim_mapping', 'must be an object of claim names');
  }
  const given = (value ?? {}) as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if (!CLAIM_FIELDS.some(([field]) => field === key)) {
      throw new ValidationError(
        `claim_mapping.${key}`,
        `is not mapped (known: ${CLAIM_FIELDS.map(([field]) => field).join(', ')})`,
      );
    }
  }
  const mapping: UpstreamClaimMapping = { ...DEFAULT_CLAIM_MAPPING };
  for (const [field, property] of CLAIM_FIELDS) {
    const claim = given[field];
    if (claim === undefined) continue;
    if (typeof claim !== 'string' || claim.length > CLAIM_NAME_MAX_LENGTH || !ASCII_WORD.test(claim)) {
      throw new ValidationError(
        `claim_mapping.${field}`,
        `must be a claim name (a dotted path reaches into objects), 1 to ${CLAIM_NAME_MAX_LENGTH} printable characters without spaces`,
      );
    }
    mapping[property] = claim;
  }
  // A plain OAuth 2.0 provider's userinfo has no standard member naming the person: `sub` is OpenID
  // Connect's. Guessing could link by a member that changes (a login name), so it is the operator's.
  if (kind === 'oauth2' && given.subject === undefined) {
    throw new ValidationError(
      'claim_mapping.subject',
      "a plain OAuth 2.0 provider needs the userinfo member that names the person for good (GitHub's is id)",
    );
  }
  return mapping;
}

function validAcr(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.length > 200 || !ASCII_WORD.test(value)) {
    throw new ValidationError('required_acr', 'must be one acr value, printable characters without spaces');
  }
  return value;
}

const usesSecret = (method: UpstreamClientAuth) =>
  method === 'client_secret_basic' || method === 'client_secret_post';

/** What the upstream sign-in needs that comes from discovery: endpoints, for an OpenID Provider. */
interface Endpoints {
  kind: IdentityProvider['kind'];
  issuer: string | null;
  authorizationEndpoint: string | null;
  tokenEndpoint: string | null;
  userinfoEndpoint: string | null;
}

/** The kind and endpoints the input names; an OpenID Provider's endpoints are still to be discovered. */
function endpointsOf(input: IdentityProviderInput): Endpoints {
  const given = (
    [
      ['authorization_endpoint', input.authorization_endpoint],
      ['token_endpoint', input.token_endpoint],
      ['userinfo_endpoint', input.userinfo_endpoint],
    ] as const
  ).filter(([, value]) => value !== undefined && value !== null);
  if (input.issuer !== undefined && input.issuer !== null) {
    const [field] = given[0] ?? [];
    if (field !== undefined) {
      throw new ValidationError(
        field,
        "an OpenID Provider's endpoints come from discovery: give the issuer, or the endpoints of a plain OAuth 2.0 provider, not both",
      );
    }
    return {
      kind: 'oidc',
      issuer: validIssuer(input.issuer),
      authorizationEndpoint: null,
      tokenEndpoint: null,
      userinfoEndpoint: null,
    };
  }
  if (given.length === 0) {
    throw new ValidationError(
      'issuer',
      'give the issuer of an OpenID Provider (found by discovery), or the authorization, token and userinfo endpoints of a plain OAuth 2.0 provider',
    );
  }
  const endpoint = (field: string, value: string | null | undefined) => {
    if (value === undefined || value === null) {
      throw new ValidationError(
        field,
        'a plain OAuth 2.0 provider needs its authorization, token and userinfo endpoints (the person is read from userinfo)',
      );
    }
    return httpsUrl(field, value);
  };
  return {
    kind: 'oauth2',
    issuer: null,
    authorizationEndpoint: endpoint('authorization_endpoint', input.authorization_endpoint),
    tokenEndpoint: endpoint('token_endpoint', input.token_endpoint),
    userinfoEndpoint: endpoint('userinfo_endpoint', input.userinfo_endpoint),
  };
}

/** A provider's settings from the operator's input: everything but its keys, secrets, endpoints and times. */
type ProviderSettings = Pick<
  IdentityProvider,
  | 'name'
  | 'clientId'
  | 'clientAuth'
  | 'scopes'
  | 'claimMapping'
  | 'linkByVerifiedEmail'
  | 'trustUpstreamAssurance'
  | 'requiredAcr'
  | 'logoUri'
>;

/**
 * Checks the operator's input (the endpoints apart) and fills in the defaults; throws a ValidationError
 * naming the field. `secretKept`: the provider has a sealed secret already, which a change keeps.
 */
export function validateIdentityProviderInput(
  input: IdentityProviderInput,
  kind: IdentityProvider['kind'],
  secretKept = false,
): ProviderSettings & { clientSecret: string | undefined } {
  const name = validName(input.name);
  const clientId = validClientId(input.client_id);
  const declared = input.client_auth;
  if (declared !== undefined && !(UPSTREAM_CLIENT_AUTH_METHODS as readonly string[]).includes(declared)) {
    throw new ValidationError('client_auth', `must be one of ${UPSTREAM_CLIENT_AUTH_METHODS.join(', ')}`);
  }
  const clientSecret = input.client_secret === undefined ? undefined : validClientSecret(input.client_secret);
  // RFC 6749 §2.3.1: Basic is what every server must take, so a secret goes there unless told.
  const clientAuth =
    (declared as UpstreamClientAuth | undefined) ??
    (clientSecret !== undefined || secretKept ? 'client_secret_basic' : undefined);
  if (clientAuth === undefined) {
    throw new ValidationError(
      'client_secret',
      'give the client secret the provider issued (client_auth client_secret_basic), or choose client_auth private_key_jwt (a key Gatehouse makes) or none (a public client)',
    );
  }
  if (usesSecret(clientAuth) && clientSecret === undefined && !secretKept) {
    throw new ValidationError('client_secret', `${clientAuth} needs the client secret the provider issued`);
  }
  if (!usesSecret(clientAuth) && clientSecret !== undefined) {
    throw new ValidationError('client_secret', `a ${clientAuth} provider has no client secret`);
  }
  return {
    name,
    clientId,
    clientAuth,
    clientSecret,
    scopes: validScopes(input.scopes, kind),
    claimMapping: validClaimMapping(input.claim_mapping, kind),
    linkByVerifiedEmail: validBoolean('link_by_verified_email', input.link_by_verified_email, false),
    trustUpstreamAssurance: validBoolean('trust_upstream_assurance', input.trust_upstream_assurance, false),
    requiredAcr: validAcr(input.required_acr),
    logoUri:
      input.logo_uri === undefined || input.logo_uri === null ? null : httpsUrl('logo_uri', input.logo_uri),
  };
}

/** A provider's present settings as input: what a change (PATCH, `idps update`) starts from. */
function inputOf(provider: IdentityProvider): IdentityProviderInput {
  const mapping = provider.claimMapping;
  return {
    name: provider.name,
    ...(provider.kind === 'oidc'
      ? { issuer: provider.issuer }
      : {
          authorization_endpoint: provider.authorizationEndpoint,
          token_endpoint: provider.tokenEndpoint,
          userinfo_endpoint: provider.userinfoEndpoint,
        }),
    client_id: provider.clientId,
    client_auth: provider.clientAuth,
    scopes: provider.scopes,
    claim_mapping: claimMappingView(mapping),
    link_by_verified_email: provider.linkByVerifiedEmail,
    trust_upstream_assurance: provider.trustUpstreamAssurance,
    required_acr: provider.requiredAcr,
    logo_uri: provider.logoUri,
  };
}

/** The keys and settings the registry needs from the composition root (compose/engine-policy.ts). */
export interface IdentityProviderPolicy {
  /** Seals client secrets and private keys (deriveServerKeys(secret).identityProviderKey). */
  sealingKey: Buffer;
  /** `<issuer>/sign-in/callback/<id>`, from the endpoint table (core knows no configuration). */
  redirectUri: (providerId: string) => string;
}

export interface IdentityProviderRegistryDependencies {
  storage: Storage;
  clock: Clock;
  /**
   * Every change is recorded in its own transaction (decision 41), before and after as the view:
   * never the client secret nor the private key, sealed or not.
   */
  audit?: AuditLog;
  /** OpenID Connect Discovery, checked at creation and whenever the issuer changes. */
  upstream: Pick<UpstreamProviders, 'discover'>;
  policy: IdentityProviderPolicy;
}

/** What deleting a provider took with it. */
export interface IdentityProviderDeletion {
  /** Users' links through it: those users sign in through it no more. */
  linksRemoved: number;
  /** Clients whose own list named it, and name it no more. */
  clientsChanged: number;
}

const idTaken = (id: string) =>
  new ConflictError(
    'id',
    `an identity provider with id "${id}" exists already: choose another id (--id, or "id" in /v1)`,
  );

const noSuchProvider = (id: string) =>
  new NotFoundError('id', `no identity provider with id ${JSON.stringify(id)}`);

/** How many rows are read at once when every one is wanted (providers, clients naming one). */
const PAGE = 100;

/**
 * The identity provider registry (decision 39): what `gatehouse idps`, /v1/identity-providers and the
 * operator's view of links read and change, and what the sign-in page asks which providers to offer.
 */
export class IdentityProviderRegistry {
  private readonly audit: AuditLog;

  constructor(private readonly deps: IdentityProviderRegistryDependencies) {
    this.audit = deps.audit ?? new AuditLog(deps.storage, deps.clock);
  }

  /** The provider, or undefined (also for an id no provider could have). */
  get(id: string): Promise<IdentityProvider | undefined> {
    if (!IDENTITY_PROVIDER_ID.test(id)) return Promise.resolve(undefined);
    return this.deps.storage.identityProviders.get(id);
  }

  /** The provider, or a NotFoundError. */
  async require(id: string): Promise<IdentityProvider> {
    const provider = await this.get(id);
    if (provider === undefined) throw noSuchProvider(id);
    return provider;
  }

  /** A page of providers, in name order. */
  list(limit: number, offset: number): Promise<{ items: IdentityProvider[]; total: number }> {
    return this.deps.storage.identityProviders.list(limit, offset);
  }

  /** Every provider, in name order. */
  async all(): Promise<IdentityProvider[]> {
    const all: IdentityProvider[] = [];
    for (;;) {
      const { items, total } = await this.list(PAGE, all.length);
      all.push(...items);
      if (items.length === 0 || all.length >= total) return all;
    }
  }

  /**
   * The providers a client's sign-in page offers (decision 39): those of its list, in its order, that
   * still exist; every provider, in name order, when its list is null or there is no client.
   */
  async offeredTo(client: Pick<Client, 'identityProviders'> | undefined): Promise<IdentityProvider[]> {
    const chosen = client?.identityProviders ?? null;
    if (chosen === null) return this.all();
    const found = await Promise.all(chosen.map((id) => this.get(id)));
    return found.filter((provider): provider is IdentityProvider => provider !== undefined);
  }

  /** As operators see it (never a sealed value), with its redirect URI. */
  view(provider: IdentityProvider): IdentityProviderView {
    return viewIdentityProvider(provider, this.deps.policy.redirectUri);
  }

  /** `<issuer>/sign-in/callback/<id>`: where the upstream sends the browser back to. */
  redirectUri(providerId: string): string {
    return this.deps.policy.redirectUri(providerId);
  }

  /**
   * A new provider. An OpenID Provider is looked up by discovery first, and refused when discovery
   * fails (the error says why); a private_key_jwt provider gets a new key pair (ES256).
   */
  async create(
    input: IdentityProviderInput,
    context: AuditContext = UNATTRIBUTED,
  ): Promise<IdentityProvider> {
    const id = input.id === undefined ? this.idFromName(input.name) : validId(input.id);
    const endpoints = endpointsOf(input);
    const settings = validateIdentityProviderInput(input, endpoints.kind);
    // Said before discovery and key making; the insert below still refuses one taken meanwhile.
    if ((await this.get(id)) !== undefined) throw idTaken(id);
    const now = this.deps.clock.now();
    const provider: IdentityProvider = {
      id,
      ...this.withoutSecret(settings),
      ...(await this.discovered(endpoints)),
      ...(await this.credentials(id, settings)),
      createdAt: now,
      updatedAt: now,
    };
    // Discovery and key making, slow and outside the store, are done: the transaction holds only writes.
    await this.audit.change(context, async (storage, record) => {
      if (!(await storage.identityProviders.insert(provider))) throw idTaken(id);
      await record({ type: 'identity-provider.created', after: this.view(provider) });
    });
    return provider;
  }

  /**
   * Replaces a provider's settings with `input`, validated in full as at creation (PUT): a field left
   * out takes its default, but the write-only secret left out is kept. A new issuer is discovered again.
   */
  async replace(
    provider: IdentityProvider,
    input: IdentityProviderInput,
    context: AuditContext = UNATTRIBUTED,
  ): Promise<IdentityProvider> {
    if (input.id !== undefined && input.id !== provider.id) {
      throw new ValidationError(
        'id',
        "a provider's id is in the redirect URI registered upstream: it cannot change",
      );
    }
    return this.write(provider, input, context);
  }

  /**
   * Changes the fields given and keeps the others (PATCH, `idps update`); the result is validated as a
   * whole. A secret given to a provider that used none makes it client_secret_basic; giving the issuer
   * makes it an OpenID Provider (its endpoints found by discovery), and the endpoints without an issuer
   * a plain OAuth 2.0 one. The claim mapping given is merged into the present one.
   */
  async update(
    provider: IdentityProvider,
    changes: Partial<IdentityProviderInput>,
    context: AuditContext = UNATTRIBUTED,
  ): Promise<IdentityProvider> {
    if (changes.id !== undefined && changes.id !== provider.id) {
      throw new ValidationError(
        'id',
        "a provider's id is in the redirect URI registered upstream: it cannot change",
      );
    }
    const current = inputOf(provider);
    const becomesOidc = changes.issuer !== undefined && changes.issuer !== null;
    const endpointsGiven = [
      changes.authorization_endpoint,
      changes.token_endpoint,
      changes.userinfo_endpoint,
    ].some((value) => value !== undefined && value !== null);
    const becomesOAuth2 = changes.issuer === null || (provider.kind === 'oidc' && endpointsGiven);
    const clientAuth =
      changes.client_auth ??
      (changes.client_secret !== undefined && !usesSecret(provider.clientAuth)
        ? 'client_secret_basic'
        : provider.clientAuth);
    const merged: IdentityProviderInput = {
      ...current,
      ...Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)),
      // One kind's locations, never both: the issuer, or the three endpoints.
      ...(becomesOidc && provider.kind === 'oauth2'
        ? {
            authorization_endpoint: changes.authorization_endpoint,
            token_endpoint: changes.token_endpoint,
            userinfo_endpoint: changes.userinfo_endpoint,
          }
        : {}),
      ...(becomesOAuth2 ? { issuer: null } : {}),
      client_auth: clientAuth,
      claim_mapping: { ...current.claim_mapping, ...changes.claim_mapping },
    };
    return this.write(provider, merged, context);
  }

  private async write(
    provider: IdentityProvider,
    input: IdentityProviderInput,
    context: AuditContext,
  ): Promise<IdentityProvider> {
    const endpoints = endpointsOf(input);
    const settings = validateIdentityProviderInput(
      input,
      endpoints.kind,
      provider.clientSecretSealed !== null,
    );
    // The issuer unchanged, discovery is not asked again: what it found at creation stays.
    const sameIssuer = endpoints.kind === 'oidc' && endpoints.issuer === provider.issuer;
    const updated: IdentityProvider = {
      ...provider,
      ...this.withoutSecret(settings),
      ...(sameIssuer
        ? {
            kind: provider.kind,
            issuer: provider.issuer,
            authorizationEndpoint: provider.authorizationEndpoint,
            tokenEndpoint: provider.tokenEndpoint,
            userinfoEndpoint: provider.userinfoEndpoint,
          }
        : await this.discovered(endpoints)),
      ...(await this.credentials(provider.id, settings, provider)),
      updatedAt: this.deps.clock.now(),
    };
    await this.audit.change(context, async (storage, record) => {
      if (!(await storage.identityProviders.update(updated))) throw noSuchProvider(provider.id);
      await record({
        type: 'identity-provider.updated',
        before: this.view(provider),
        after: this.view(updated),
      });
    });
    return updated;
  }

  /**
   * Deletes the provider, every user's link through it, and its id from the clients that named it;
   * undefined when there is none.
   */
  async delete(
    id: string,
    context: AuditContext = UNATTRIBUTED,
  ): Promise<IdentityProviderDeletion | undefined> {
    if (!IDENTITY_PROVIDER_ID.test(id)) return undefined;
    const { clock } = this.deps;
    // The provider, its links and the clients' lists go together, with the event: both or neither.
    return this.audit.change(context, async (storage, record) => {
      const provider = await storage.identityProviders.get(id);
      if (provider === undefined) return undefined;
      const linksRemoved = await storage.federatedLinks.countByProvider(id);
      // A client that named it offers one provider less (never every one: its list is not made null).
      let clientsChanged = 0;
      for (;;) {
        const { items } = await storage.clients.list({ identityProvider: id, limit: PAGE, offset: 0 });
        for (const client of items) {
          const identityProviders = (client.identityProviders ?? []).filter((other) => other !== id);
          await storage.clients.update({ ...client, identityProviders, updatedAt: clock.now() }, 'keep');
          clientsChanged++;
        }
        if (items.length < PAGE) break;
      }
      if (!(await storage.identityProviders.delete(id))) return undefined;
      await record({
        type: 'identity-provider.deleted',
        before: this.view(provider),
        detail: `${linksRemoved} user link(s) removed, ${clientsChanged} client(s) changed`,
      });
      return { linksRemoved, clientsChanged };
    });
  }

  /** A user's links to upstream people, oldest first, with each provider's name. */
  async links(userId: string): Promise<FederatedLinkView[]> {
    const links = await this.deps.storage.federatedLinks.listByUser(userId);
    const names = new Map<string, string>();
    for (const providerId of new Set(links.map((link) => link.providerId))) {
      names.set(providerId, (await this.get(providerId))?.name ?? providerId);
    }
    return links.map((link) => viewFederatedLink(link, names.get(link.providerId) ?? link.providerId));
  }

  /** Removes a user's link `linkId`; false when the user has no such link. */
  removeLink(userId: string, linkId: string): Promise<boolean> {
    return this.deps.storage.federatedLinks.delete(userId, linkId);
  }

  private idFromName(name: unknown): string {
    validName(name);
    const id = slugOf((name as string).trim());
    if (!IDENTITY_PROVIDER_ID.test(id)) {
      throw new ValidationError(
        'id',
        'no id can be made of this name (it has no Latin letter or digit): give one (--id, or "id" in /v1)',
      );
    }
    return id;
  }

  /** The settings to store: the secret in the clear is not one of them (credentials() seals it). */
  private withoutSecret(settings: ProviderSettings & { clientSecret: string | undefined }): ProviderSettings {
    const rest: ProviderSettings & { clientSecret?: string } = { ...settings };
    delete rest.clientSecret;
    return rest;
  }

  /** An OpenID Provider's endpoints, as discovery finds them now; a plain OAuth 2.0 provider's, as given. */
  private async discovered(endpoints: Endpoints): Promise<Endpoints> {
    if (endpoints.kind === 'oauth2' || endpoints.issuer === null) return endpoints;
    const issuer = endpoints.issuer;
    let found: DiscoveredProvider;
    try {
      found = await this.deps.upstream.discover(issuer);
    } catch (error) {
      // Discovery carries no secret: what went wrong is the operator's to read.
      const why = error instanceof UpstreamError ? error.detail : (error as Error).message;
      throw new ValidationError('issuer', `discovery failed at ${issuer}: ${why}`);
    }
    // OpenID Connect Discovery 1.0 §4.3: the metadata's issuer is exactly the one asked about.
    if (found.issuer !== issuer) {
      throw new ValidationError(
        'issuer',
        `discovery failed at ${issuer}: its metadata names the issuer ${found.issuer}; give exactly that one`,
      );
    }
    return {
      kind: 'oidc',
      issuer,
      authorizationEndpoint: found.authorizationEndpoint,
      tokenEndpoint: found.tokenEndpoint,
      userinfoEndpoint: found.userinfoEndpoint,
    };
  }

  /**
   * The sealed secret and private key the method needs: a secret given is sealed, one not given kept
   * (while the method uses one); a private_key_jwt provider keeps its key pair, or gets a new one.
   */
  private async credentials(
    id: string,
    settings: { clientAuth: UpstreamClientAuth; clientSecret: string | undefined },
    existing?: IdentityProvider,
  ): Promise<Pick<IdentityProvider, 'clientSecretSealed' | 'privateKeySealed' | 'publicJwk'>> {
    const key = this.deps.policy.sealingKey;
    const clientSecretSealed = !usesSecret(settings.clientAuth)
      ? null
      : settings.clientSecret !== undefined
        ? seal(key, Buffer.from(settings.clientSecret, 'utf8'), sealContext.clientSecret(id))
        : (existing?.clientSecretSealed ?? null);
    if (settings.clientAuth !== 'private_key_jwt') {
      return { clientSecretSealed, privateKeySealed: null, publicJwk: null };
    }
    if (existing?.privateKeySealed != null && existing.publicJwk !== null) {
      return {
        clientSecretSealed,
        privateKeySealed: existing.privateKeySealed,
        publicJwk: existing.publicJwk,
      };
    }
    return { clientSecretSealed, ...(await newKeyPair(key, id)) };
  }
}

/**
 * An ES256 key pair for private_key_jwt toward the upstream (RFC 7523 §2.2, OpenID Connect Core §9):
 * the private key sealed as signing keys are (PKCS#8 DER), the public JWK with its RFC 7638 thumbprint
 * as `kid`, which the operator registers upstream.
 */
async function newKeyPair(
  sealingKey: Buffer,
  providerId: string,
): Promise<{ privateKeySealed: string; publicJwk: Record<string, unknown> }> {
  const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const exported = pair.publicKey.export({ format: 'jwk' }) as JWK;
  const jwk = { kty: exported.kty, crv: exported.crv, x: exported.x, y: exported.y };
  const kid = await calculateJwkThumbprint(jwk);
  const der = pair.privateKey.export({ format: 'der', type: 'pkcs8' });
  return {
    privateKeySealed: seal(sealingKey, der, sealContext.privateKey(providerId)),
    publicJwk: { ...jwk, kid, alg: 'ES256', use: 'sig' },
  };
}

/** A claim mapping as the API and the command line name its fields. */
function claimMappingView(mapping: UpstreamClaimMapping) {
  return {
    subject: mapping.subject,
    username: mapping.username,
    email: mapping.email,
    email_verified: mapping.emailVerified,
    name: mapping.name,
  };
}
