import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { MAX_CLIENT_KEYS } from '../../../core/clients/client-keys.js';
import {
  INITIAL_ACCESS_TOKEN_MAX_TTL,
  INITIAL_ACCESS_TOKEN_TTL,
} from '../../../core/clients/dynamic-registration.js';
import { CLIENT_AUTH_METHODS, CLIENT_REGISTRATIONS, GRANT_TYPES, TOKEN_TYPES } from '../../../core/model.js';
import { ID_TOKEN_SIGNING_ALGORITHMS } from '../../../core/tokens/id-token.js';
import { RESOURCE_NAME_MAX_LENGTH, RESOURCE_SCOPES_MAX } from '../../../core/scopes/resource-registry.js';
import { MAX_RESOURCE_URI_LENGTH } from '../../../core/scopes/resources.js';
import { EMAIL_MAX_LENGTH, NAME_MAX_LENGTH } from '../../../core/users/user-registry.js';
import {
  CLAIM_NAME_MAX_LENGTH,
  IDENTITY_PROVIDER_ID,
  IDENTITY_PROVIDER_NAME_MAX_LENGTH,
  UPSTREAM_CLIENT_AUTH_METHODS,
  UPSTREAM_CLIENT_ID_MAX_LENGTH,
  UPSTREAM_CLIENT_SECRET_MAX_LENGTH,
  UPSTREAM_SCOPES_MAX,
  UPSTREAM_URL_MAX_LENGTH,
} from '../../../core/federation/identity-providers.js';

/** Every object schema here refuses properties it does not name (additionalProperties: false). */
const strict = { additionalProperties: false } as const;

const Timestamp = Type.String({ format: 'date-time', description: 'RFC 3339 date and time (UTC)' });
const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);
const ScopeName = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: '^[\\x21\\x23-\\x5b\\x5d-\\x7e]+$',
  description: 'RFC 6749 §3.3 scope token',
});
const GrantTypeName = Type.Union(
  GRANT_TYPES.map((name) => Type.Literal(name)),
  { description: 'OAuth grant type' },
);
const TokenTypeName = Type.Union(
  TOKEN_TYPES.map((name) => Type.Literal(name)),
  { description: 'Kind of access token the client receives' },
);
const RedirectUri = Type.String({
  minLength: 1,
  maxLength: 2000,
  description:
    'Exact redirect URI, stored in canonical (WHATWG URL) form; no user information, backslash or fragment',
});
const IdTokenAlgorithm = Type.Union(
  ID_TOKEN_SIGNING_ALGORITHMS.map((name) => Type.Literal(name)),
  { description: 'JWS algorithm of the client’s OpenID Connect ID tokens (RS256 by default)' },
);
const Registration = Type.Union(
  CLIENT_REGISTRATIONS.map((name) => Type.Literal(name)),
  {
    description:
      'Who registered the client: `operator` (the command line or this API), or the client itself at ' +
      '/register (RFC 7591) with an initial access token (`token`) or with none (`open`), or a client whose ' +
      'id is the https URL of its Client ID Metadata Document (`document`, decision 46), stored as last fetched',
  },
);
const PostLogoutRedirectUri = Type.String({
  minLength: 1,
  maxLength: 2000,
  description:
    'Where OpenID Connect RP-initiated logout may return the browser; exact match, the redirect URIs’ rules',
});

const ClientAuthMethodName = Type.Union(
  CLIENT_AUTH_METHODS.map((name) => Type.Literal(name)),
  {
    description:
      'RFC 7591 token_endpoint_auth_method. A client with a secret accepts both client_secret_basic and ' +
      'client_secret_post; private_key_jwt (RFC 7523) has no secret and one of jwks / jwks_uri; none is public',
  },
);
// Each key's members are checked by the registry (core/clients/client-keys.ts): here only the shape.
const Jwk = Type.Object(
  { kty: Type.String({ minLength: 1, maxLength: 10 }), kid: Type.Optional(Type.String({ maxLength: 200 })) },
  { additionalProperties: true, description: 'RFC 7517 JSON Web Key: public members only' },
);
const JwkSet = Type.Object(
  { keys: Type.Array(Jwk, { minItems: 1, maxItems: MAX_CLIENT_KEYS }) },
  {
    additionalProperties: false,
    description:
      'RFC 7517 §5 JWK Set of the client’s public signing keys (RSA of 2048 bits or more, EC P-256, ' +
      'OKP Ed25519); private and symmetric keys are refused',
  },
);
const JwksUri = Type.String({
  minLength: 1,
  maxLength: 2000,
  description:
    'https URL of the client’s JWK Set, fetched when needed and cached for 5 minutes; never from a ' +
    'non-public address unless GATEHOUSE_ALLOW_PRIVATE_JWKS_URI is set',
});

export const Problem = Type.Object(
  {
    type: Type.String({ description: 'Problem type URI; about:blank means "see the status code"' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    field: Type.Optional(Type.String({ description: 'The request field at fault' })),
    error: Type.Optional(Type.String({ description: 'RFC 6750 error code, for token problems' })),
  },
  { ...strict, description: 'RFC 9457 problem details (application/problem+json)' },
);

export const Pagination = {
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Page size' }),
  // Bounded so that no value reaches the store outside a 32-bit integer: PostgreSQL's OFFSET is a
  // bigint and SQLite refuses a float, so `offset=1e20` would otherwise fail there as a 500.
  offset: Type.Integer({ minimum: 0, maximum: 2_147_483_647, default: 0, description: 'Items to skip' }),
};

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) }, strict);
export const ItemGrantParams = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 200 }),
    grantId: Type.String({ minLength: 1, maxLength: 200 }),
  },
  strict,
);

// ---- clients
export const Client = Type.Object(
  {
    client_id: Type.String(),
    name: Type.String(),
    redirect_uris: Type.Array(Type.String()),
    grant_types: Type.Array(GrantTypeName),
    scopes: Type.Array(Type.String()),
    token_type: TokenTypeName,
    public: Type.Boolean({ description: 'A public client has no secret (RFC 6749 §2.1)' }),
    post_logout_redirect_uris: Type.Array(Type.String()),
    id_token_signed_response_alg: IdTokenAlgorithm,
    token_endpoint_auth_method: ClientAuthMethodName,
    jwks: Type.Union([JwkSet, Type.Null()]),
    jwks_uri: Type.Union([Type.String(), Type.Null()]),
    registration: Registration,
    require_pushed_authorization_requests: Type.Boolean({
      description: 'RFC 9126 §6: /authorize takes only pushed authorization requests from this client',
    }),
    dpop_bound_access_tokens: Type.Boolean({
      description: 'RFC 9449 §5.2: every token request of this client must carry a DPoP proof',
    }),
    require_mfa: Type.Boolean({
      description: 'Its users sign in with a password and a second factor (docs/decisions.md, decision 34)',
    }),
    token_exchange_targets: Type.Array(Type.String(), {
      description:
        'RFC 8693 §2.1: the resources this client may name as `resource` or `audience` in a token exchange',
    }),
    identity_providers: Type.Union([Type.Array(Type.String()), Type.Null()], {
      description:
        'The upstream identity providers its sign-in page offers, by id, in this order; null: every one (decision 39)',
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
    document_expires_at: Type.Union([Timestamp, Type.Null()], {
      description:
        'A client described by its Client ID Metadata Document (`registration` `document`, decision 46): until when the copy last fetched (at `updated_at`) is used before the document is fetched again; null for every other client',
    }),
  },
  strict,
);
export const ClientWithSecret = Type.Object(
  {
    ...Client.properties,
    client_secret: Type.Optional(
      Type.String({
        description:
          'Shown only in this response; stored as a hash. Absent for public and private_key_jwt clients.',
      }),
    ),
  },
  strict,
);
const ProviderId = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: IDENTITY_PROVIDER_ID.source,
  description: 'An identity provider’s id (/v1/identity-providers)',
});
const clientFields = {
  name: Type.String({
    minLength: 1,
    maxLength: 200,
    description: 'Shown on the consent page; no control or bidirectional formatting characters',
  }),
  redirect_uris: Type.Array(RedirectUri, { maxItems: 50 }),
  grant_types: Type.Array(GrantTypeName, { minItems: 1, maxItems: GRANT_TYPES.length }),
  scopes: Type.Array(ScopeName, { maxItems: 100 }),
  token_type: TokenTypeName,
  public: Type.Boolean(),
  post_logout_redirect_uris: Type.Array(PostLogoutRedirectUri, { maxItems: 50 }),
  id_token_signed_response_alg: IdTokenAlgorithm,
  token_endpoint_auth_method: ClientAuthMethodName,
  jwks: Type.Union([JwkSet, Type.Null()]),
  jwks_uri: Type.Union([JwksUri, Type.Null()]),
  require_pushed_authorization_requests: Type.Boolean({
    description:
      'RFC 9126 §6: /authorize refuses this client any request not pushed to /par first; default false',
  }),
  dpop_bound_access_tokens: Type.Boolean({
    description:
      'RFC 9449 §5.2: the token endpoint refuses this client any request without a DPoP proof, so its access tokens are always DPoP-bound; not with token_type mac or the implicit grant; default false',
  }),
  require_mfa: Type.Boolean({
    description:
      'Its users sign in with a password and a second factor; one without sets up an authenticator app right after the password, and the password grant refuses them (docs/decisions.md, decision 34); default false',
  }),
  token_exchange_targets: Type.Array(
    Type.String({
      minLength: 1,
      maxLength: MAX_RESOURCE_URI_LENGTH,
      description: 'A resource URI (RFC 8707 §2)',
    }),
    {
      maxItems: 50,
      description:
        'RFC 8693 §2.1: the registered resources this client may name as `resource` or `audience` when it exchanges a token; only with the token-exchange grant type. Without any, an exchanged token keeps the subject token’s own audience. Default none',
    },
  ),
  identity_providers: Type.Union([Type.Array(ProviderId, { maxItems: 50 }), Type.Null()], {
    description:
      'The upstream identity providers its sign-in page offers, by id, in this order (each must exist); an empty list offers none, null every one, the default (decision 39). Not set by dynamic registration',
  }),
};
const clientInputFields = {
  name: clientFields.name,
  redirect_uris: Type.Optional(clientFields.redirect_uris),
  grant_types: Type.Optional(clientFields.grant_types),
  scopes: Type.Optional(clientFields.scopes),
  token_type: Type.Optional(clientFields.token_type),
  public: Type.Optional(clientFields.public),
  post_logout_redirect_uris: Type.Optional(clientFields.post_logout_redirect_uris),
  id_token_signed_response_alg: Type.Optional(clientFields.id_token_signed_response_alg),
  token_endpoint_auth_method: Type.Optional(clientFields.token_endpoint_auth_method),
  jwks: Type.Optional(clientFields.jwks),
  jwks_uri: Type.Optional(clientFields.jwks_uri),
  require_pushed_authorization_requests: Type.Optional(clientFields.require_pushed_authorization_requests),
  dpop_bound_access_tokens: Type.Optional(clientFields.dpop_bound_access_tokens),
  require_mfa: Type.Optional(clientFields.require_mfa),
  token_exchange_targets: Type.Optional(clientFields.token_exchange_targets),
  identity_providers: Type.Optional(clientFields.identity_providers),
};
export const ClientCreate = Type.Object(clientInputFields, {
  ...strict,
  description: 'The fields `gatehouse clients create --json` prints',
});
// RFC 9110 §9.3.4: PUT sends the complete representation, the same one POST takes; a field left out
// takes its default, exactly as at creation (it does not keep its current value).
export const ClientReplace = Type.Object(clientInputFields, {
  ...strict,
  description:
    'The complete client, in the same shape as POST /v1/clients; a field left out takes the default ' +
    'it would take at creation',
});
export const ClientPatch = Type.Partial(Type.Object(clientFields, strict), {
  ...strict,
  minProperties: 1,
  description: 'Only the fields to change',
});
export const ClientSecret = Type.Object(
  {
    client_id: Type.String(),
    client_secret: Type.String({ description: 'Shown only in this response; the old secret stops working' }),
  },
  strict,
);
export const ClientQuery = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Exact client name' })),
    grant_type: Type.Optional(GrantTypeName),
    registration: Type.Optional(
      Type.Union([Registration, Type.Array(Registration, { minItems: 1, maxItems: 4 })], {
        description:
          'Clients registered this way; repeat the parameter for any of several (`registration=token&registration=open`: every self-registered client)',
      }),
    ),
    limit: Type.Optional(Pagination.limit),
    offset: Type.Optional(Pagination.offset),
  },
  strict,
);
export const ClientList = page(Client);

// ---- users
const Email = Type.String({
  minLength: 1,
  maxLength: EMAIL_MAX_LENGTH,
  description:
    'OpenID Connect `email` claim: an address name@domain (RFC 5322 dot-atom form); a new address is ' +
    'unverified until its owner follows the link Gatehouse mails to it',
});
const FullName = Type.String({
  minLength: 1,
  maxLength: NAME_MAX_LENGTH,
  description: 'OpenID Connect `name` claim: the full name; no control or formatting characters',
});
export const User = Type.Object(
  {
    id: Type.String(),
    username: Type.String(),
    email: Type.Union([Type.String(), Type.Null()]),
    email_verified: Type.Boolean({
      description:
        'OpenID Connect `email_verified`: the user followed a link mailed to `email`; false again when it changes',
    }),
    name: Type.Union([Type.String(), Type.Null()]),
    admin: Type.Boolean({
      description: 'An administrator: a token issued for this user may carry the scope `admin`',
    }),
    disabled: Type.Boolean({
      description:
        'Disabled by an operator: the user cannot sign in by any method, nor through the password grant',
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  strict,
);
/** Decision 37: a user's ways of signing in, one line each; never a secret. */
const SignInMethods = Type.Array(
  Type.Object(
    {
      method: Type.String({ description: 'password, passkey, totp, recovery-codes, …' }),
      description: Type.String({ description: 'For people: "set", "2 passkeys", "7 left"' }),
      count: Type.Optional(
        Type.Integer({ minimum: 0, description: 'How many, for methods that come in numbers' }),
      ),
    },
    strict,
  ),
  { description: 'The ways the user can sign in (decision 37); never a secret' },
);
/** /v1/users: the user, their ways of signing in and how many browser sessions they have. */
export const UserWithMethods = Type.Object(
  {
    ...User.properties,
    sign_in_methods: SignInMethods,
    sessions: Type.Integer({ minimum: 0, description: 'Browser sessions signed in now' }),
  },
  strict,
);
/** GET /v1/users/me: the email address only to a token with the `email` scope (as UserInfo). */
export const Me = Type.Object(
  {
    ...User.properties,
    email: Type.Optional(
      Type.Union([Type.String(), Type.Null()], { description: 'Only when the token has scope email' }),
    ),
    email_verified: Type.Optional(
      Type.Boolean({ description: 'Only when the token has scope email (as UserInfo)' }),
    ),
  },
  strict,
);
const Username = Type.String({ minLength: 1, maxLength: 128 });
const NullableEmail = Type.Union([Email, Type.Null()], {
  description: Email.description + '; null removes it',
});
const NullableName = Type.Union([FullName, Type.Null()], {
  description: FullName.description + '; null removes it',
});
const Admin = Type.Boolean({
  description:
    'An administrator: tokens issued for this user may carry the scope `admin`, and /v1 takes them ' +
    'only while this is true; default false',
});
const Disabled = Type.Boolean({
  description:
    'true disables the user: no sign-in by any method, no password grant; their browser sessions end ' +
    'and their grants are revoked at once. false enables them again (nothing ended comes back)',
});
const Password = Type.String({
  minLength: 8,
  maxLength: 1024,
  writeOnly: true,
  description: 'Write-only: never returned',
});
export const UserCreate = Type.Object(
  {
    username: Username,
    password: Password,
    email: Type.Optional(Email),
    name: Type.Optional(FullName),
    admin: Type.Optional(Admin),
  },
  strict,
);
export const UserReplace = Type.Object(
  {
    username: Username,
    password: Type.Optional(Password),
    email: Type.Optional(NullableEmail),
    name: Type.Optional(NullableName),
    admin: Type.Optional(Admin),
    disabled: Type.Optional(Disabled),
  },
  {
    ...strict,
    description:
      'The complete user; the write-only password may be left out to keep it, an email or name ' +
      'left out is removed, and admin and disabled left out are false',
  },
);
export const UserPatch = Type.Object(
  {
    username: Type.Optional(Username),
    password: Type.Optional(Password),
    email: Type.Optional(NullableEmail),
    name: Type.Optional(NullableName),
    admin: Type.Optional(Admin),
    disabled: Type.Optional(Disabled),
  },
  { ...strict, minProperties: 1 },
);
export const UserQuery = Type.Object(
  {
    username: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'Exact user name' })),
    limit: Type.Optional(Pagination.limit),
    offset: Type.Optional(Pagination.offset),
  },
  strict,
);
export const UserList = page(UserWithMethods);

// ---- grants
export const Grant = Type.Object(
  {
    id: Type.String(),
    client_id: Type.String(),
    user_id: Type.String(),
    scopes: Type.Array(Type.String()),
    created_at: Timestamp,
    expires_at: Type.Union([Timestamp, Type.Null()], {
      description: 'When the grant ends; null: until revoked',
    }),
  },
  { ...strict, description: 'A standing grant: what a user let a client do, and until when' },
);
export const GrantList = page(Grant);
export const GrantQuery = Type.Object(
  { limit: Type.Optional(Pagination.limit), offset: Type.Optional(Pagination.offset) },
  strict,
);
export const UserGrantQuery = Type.Object(
  {
    client_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: "Only the user's grants to this client" }),
    ),
    limit: Type.Optional(Pagination.limit),
    offset: Type.Optional(Pagination.offset),
  },
  strict,
);
export type UserGrantQueryString = Static<typeof UserGrantQuery>;
export type GrantQueryString = Static<typeof GrantQuery>;

// ---- a user's browser sessions (decision 37) and an operator's resets
export const ItemSessionParams = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 200 }),
    sid: Type.String({ minLength: 1, maxLength: 200, description: 'The session’s `sid`' }),
  },
  strict,
);
export const Session = Type.Object(
  {
    id: Type.String({
      description:
        'The session’s `sid` (OpenID Connect’s, as in ID tokens): it names the session, never its cookie',
    }),
    user_agent: Type.Union([Type.String(), Type.Null()], {
      description: 'The User-Agent it was signed in with, cut to 256 characters; null when none was sent',
    }),
    address: Type.Union([Type.String(), Type.Null()], {
      description: 'The address it was signed in from (behind a trusted proxy, the one it reported)',
    }),
    created_at: Timestamp,
    last_active_at: Timestamp,
  },
  { ...strict, description: 'A live browser session of a user' },
);
export const SessionList = Type.Object({ items: Type.Array(Session) }, strict);
export const PasswordResetStarted = Type.Object(
  {
    email: Type.String({ description: 'The address the link was sent to (the user’s own)' }),
    expires_in: Type.Integer({ description: 'Seconds the link works for, once' }),
  },
  { ...strict, description: 'A reset link is on its way to the user' },
);

// ---- scopes
export const Scope = Type.Object(
  {
    name: Type.String(),
    description: Type.String({ description: 'What the consent page shows the user' }),
    created_at: Timestamp,
  },
  strict,
);
const ScopeDescription = Type.String({ minLength: 1, maxLength: 500 });
export const ScopeCreate = Type.Object(
  { name: ScopeName, description: Type.Optional(ScopeDescription) },
  strict,
);
export const ScopeReplace = Type.Object({ description: ScopeDescription }, strict);
export const ScopePatch = Type.Object({ description: Type.Optional(ScopeDescription) }, strict);
export const ScopeParams = Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) }, strict);
/** `search`: a part of what operators look a collection up by (SearchPage in core/ports.ts). */
const Search = (what: string) =>
  Type.String({
    minLength: 1,
    maxLength: 200,
    description: `Only those whose ${what} contains this text (the case of ASCII letters ignored)`,
  });
export const ScopeQuery = Type.Object(
  {
    search: Type.Optional(Search('name')),
    limit: Type.Optional(Pagination.limit),
    offset: Type.Optional(Pagination.offset),
  },
  strict,
);
export const ScopeList = page(Scope);

// ---- resources (RFC 8707)
const ResourceUri = Type.String({
  minLength: 1,
  maxLength: MAX_RESOURCE_URI_LENGTH,
  description:
    'The resource server’s URI (RFC 8707 §2): absolute, https (http only on loopback), no fragment; ' +
    'stored in canonical form (WHATWG URL, no trailing "/" after a bare host), which is the `aud` of ' +
    'its tokens',
});
const ResourceName = Type.String({
  minLength: 1,
  maxLength: RESOURCE_NAME_MAX_LENGTH,
  description: 'What operators call it; no control or bidirectional formatting characters',
});
const ResourceScopes = Type.Array(ScopeName, {
  maxItems: RESOURCE_SCOPES_MAX,
  description:
    'The scopes it offers; empty: any scope the client has. A scope not registered yet is registered ' +
    '(its description “Access “name”” until one is written)',
});
export const Resource = Type.Object(
  {
    uri: Type.String({ description: 'Canonical URI; the `aud` of the access tokens issued for it' }),
    name: Type.Union([Type.String(), Type.Null()]),
    scopes: Type.Array(Type.String(), { description: 'The scopes it offers; empty: any' }),
    created_at: Timestamp,
  },
  { ...strict, description: 'A registered resource server (RFC 8707)' },
);
export const ResourceCreate = Type.Object(
  { uri: ResourceUri, name: Type.Optional(ResourceName), scopes: Type.Optional(ResourceScopes) },
  strict,
);
const NullableResourceName = Type.Union([ResourceName, Type.Null()], {
  description: ResourceName.description + '; null removes it',
});
// RFC 9110 §9.3.4: PUT sends the complete representation (but the URI, which is the path).
export const ResourceReplace = Type.Object(
  { name: Type.Optional(NullableResourceName), scopes: Type.Optional(ResourceScopes) },
  {
    ...strict,
    description: 'Name and scopes; a field left out takes its default (no name, any scope)',
  },
);
export const ResourcePatch = Type.Object(
  { name: Type.Optional(NullableResourceName), scopes: Type.Optional(ResourceScopes) },
  { ...strict, minProperties: 1, description: 'Only the fields to change' },
);
export const ResourceParams = Type.Object(
  {
    uri: Type.String({
      minLength: 1,
      maxLength: MAX_RESOURCE_URI_LENGTH,
      description: 'The resource’s URI, percent-encoded as one path segment (encodeURIComponent)',
    }),
  },
  strict,
);
export const ResourceQuery = Type.Object(
  {
    search: Type.Optional(Search('URI or name')),
    limit: Type.Optional(Pagination.limit),
    offset: Type.Optional(Pagination.offset),
  },
  strict,
);
export const ResourceList = page(Resource);

// ---- initial access tokens (RFC 7591 §3; decision 20)
export const InitialAccessToken = Type.Object(
  {
    id: Type.String(),
    scopes: Type.Union([Type.Array(Type.String()), Type.Null()], {
      description:
        'The scopes the clients it registers may have; null: those open registration allows (GATEHOUSE_DYNAMIC_REGISTRATION_SCOPES)',
    }),
    created_at: Timestamp,
    expires_at: Timestamp,
    expired: Type.Boolean(),
    clients_registered: Type.Integer({ description: 'How many clients it registered so far' }),
  },
  { ...strict, description: 'An initial access token as operators see it: never the token itself' },
);
export const InitialAccessTokenCreate = Type.Object(
  {
    expires_in: Type.Optional(
      Type.Integer({
        minimum: 60,
        maximum: INITIAL_ACCESS_TOKEN_MAX_TTL,
        default: INITIAL_ACCESS_TOKEN_TTL,
        description: 'Seconds until it expires (a day unless given)',
      }),
    ),
    scopes: Type.Optional(
      Type.Array(ScopeName, {
        maxItems: 100,
        description:
          'The scopes the clients it registers may have (never admin); absent: those open registration allows',
      }),
    ),
  },
  strict,
);
export const InitialAccessTokenCreated = Type.Object(
  {
    ...InitialAccessToken.properties,
    initial_access_token: Type.String({
      description:
        'The token, shown only in this answer (stored as its SHA-256): a client presents it at /register as a Bearer token',
    }),
  },
  strict,
);
export const InitialAccessTokenQuery = Type.Object(
  { limit: Type.Optional(Pagination.limit), offset: Type.Optional(Pagination.offset) },
  strict,
);
export const InitialAccessTokenList = page(InitialAccessToken);

// ---- signing keys
export const SigningKey = Type.Object(
  {
    kid: Type.String(),
    alg: Type.Union([Type.Literal('ES256'), Type.Literal('EdDSA'), Type.Literal('RS256')], {
      description: 'The JWS algorithm the key signs with (RFC 7518)',
    }),
    status: Type.Union([Type.Literal('active'), Type.Literal('retired'), Type.Literal('revoked')], {
      description:
        'active signs new tokens; retired stays in /jwks while its tokens may live; revoked is out of ' +
        '/jwks and its tokens are refused',
    }),
    public_jwk: Type.Record(Type.String(), Type.String(), { description: 'The public key (RFC 7517)' }),
    created_at: Timestamp,
    retired_at: NullableTimestamp,
    revoked_at: NullableTimestamp,
  },
  strict,
);
export const SigningKeyList = Type.Object({ items: Type.Array(SigningKey) }, strict);
export const KidParams = Type.Object({ kid: Type.String({ minLength: 1, maxLength: 200 }) }, strict);

// ---- identity providers (decision 39)
const UpstreamUrl = (description: string) =>
  Type.String({ minLength: 1, maxLength: UPSTREAM_URL_MAX_LENGTH, description });
const NullableUpstreamUrl = (description: string) => Type.Union([UpstreamUrl(description), Type.Null()]);
const ClaimName = (description: string) =>
  Type.String({
    minLength: 1,
    maxLength: CLAIM_NAME_MAX_LENGTH,
    pattern: '^[\\x21-\\x7e]+$',
    description: `${description}: a claim name, a dotted path reaching into objects`,
  });
const claimFields = {
  subject: ClaimName(
    'The member that names the person for good: `sub` for an OpenID Provider (the default there), required for a plain OAuth 2.0 provider (GitHub: `id`)',
  ),
  username: ClaimName('The user name (default `preferred_username`)'),
  email: ClaimName('The email address (default `email`)'),
  email_verified: ClaimName(
    'Whether the provider verified the address, a boolean; only `true` counts (default `email_verified`)',
  ),
  name: ClaimName('The full name (default `name`)'),
};
const UpstreamClientAuthName = Type.Union(
  UPSTREAM_CLIENT_AUTH_METHODS.map((name) => Type.Literal(name)),
  {
    description:
      'How Gatehouse authenticates at the provider’s token endpoint: with the client secret (Basic, the default with a secret, or in the form), with a JWT signed by a key Gatehouse makes and keeps (`private_key_jwt`), or none (a public client, PKCE alone)',
  },
);
export const IdentityProvider = Type.Object(
  {
    id: Type.String({ description: 'In the redirect URI and in `idp_hint`' }),
    name: Type.String({ description: 'The sign-in page’s button says "Continue with NAME"' }),
    kind: Type.Union([Type.Literal('oidc'), Type.Literal('oauth2')], {
      description: '`oidc`: an OpenID Provider, found by discovery; `oauth2`: a plain OAuth 2.0 provider',
    }),
    issuer: Type.Union([Type.String(), Type.Null()]),
    authorization_endpoint: Type.Union([Type.String(), Type.Null()], {
      description: 'As discovery found it at creation (oidc), or as given (oauth2)',
    }),
    token_endpoint: Type.Union([Type.String(), Type.Null()]),
    userinfo_endpoint: Type.Union([Type.String(), Type.Null()]),
    client_id: Type.String(),
    client_auth: UpstreamClientAuthName,
    client_secret_set: Type.Boolean({
      description: 'A client secret is kept, sealed under the server secret; it is never returned',
    }),
    public_jwk: Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()], {
      description:
        'For private_key_jwt: the public key (RFC 7517, with kid and alg ES256) to register at the provider; the private key never leaves Gatehouse',
    }),
    scopes: Type.Array(Type.String()),
    claim_mapping: Type.Object(
      {
        subject: Type.String(),
        username: Type.String(),
        email: Type.String(),
        email_verified: Type.String(),
        name: Type.String(),
      },
      strict,
    ),
    link_by_verified_email: Type.Boolean(),
    trust_upstream_assurance: Type.Boolean(),
    required_acr: Type.Union([Type.String(), Type.Null()]),
    logo_uri: Type.Union([Type.String(), Type.Null()]),
    redirect_uri: Type.String({
      description:
        'Where the provider sends the browser back: register it there (`<issuer>/sign-in/callback/<id>`)',
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  strict,
);
const providerFields = {
  name: Type.String({
    minLength: 1,
    maxLength: IDENTITY_PROVIDER_NAME_MAX_LENGTH,
    description: 'Shown on its button; no control or bidirectional formatting characters',
  }),
  issuer: NullableUpstreamUrl(
    'An OpenID Provider’s issuer (https, no query or fragment): its metadata is discovered and checked when it is set, and a failed discovery answers 400 naming `issuer` and why. null (with the three endpoints) makes a plain OAuth 2.0 provider',
  ),
  authorization_endpoint: NullableUpstreamUrl('A plain OAuth 2.0 provider’s authorization endpoint (https)'),
  token_endpoint: NullableUpstreamUrl('A plain OAuth 2.0 provider’s token endpoint (https)'),
  userinfo_endpoint: NullableUpstreamUrl(
    'A plain OAuth 2.0 provider’s userinfo endpoint (https), where the person is read through `claim_mapping`',
  ),
  client_id: Type.String({
    minLength: 1,
    maxLength: UPSTREAM_CLIENT_ID_MAX_LENGTH,
    description: 'The client id the provider issued to Gatehouse',
  }),
  client_auth: UpstreamClientAuthName,
  client_secret: Type.String({
    minLength: 1,
    maxLength: UPSTREAM_CLIENT_SECRET_MAX_LENGTH,
    writeOnly: true,
    description:
      'Write-only: the client secret the provider issued, sealed under the server secret and never returned. Left out on a change, the one kept stays',
  }),
  scopes: Type.Array(ScopeName, {
    maxItems: UPSTREAM_SCOPES_MAX,
    description:
      'Asked of the provider; an OpenID Provider’s default `openid email profile`, and openid is required there',
  }),
  claim_mapping: Type.Partial(Type.Object(claimFields, strict), {
    ...strict,
    description:
      'Where the person’s claims are read (ID token and userinfo); a change is merged into the mapping',
  }),
  link_by_verified_email: Type.Boolean({
    description:
      'A first sign-in joins the local user with that email address when the provider says it is verified (never an unverified one); default false',
  }),
  trust_upstream_assurance: Type.Boolean({
    description: 'The provider’s `amr` and `acr` count toward this server’s; default false',
  }),
  required_acr: Type.Union(
    [Type.String({ minLength: 1, maxLength: 200, pattern: '^[\\x21-\\x7e]+$' }), Type.Null()],
    { description: 'An `acr` asked of the provider (acr_values); a sign-in without it is refused' },
  ),
  logo_uri: NullableUpstreamUrl('An https image shown on its button'),
};
const providerInputFields = {
  name: providerFields.name,
  issuer: Type.Optional(providerFields.issuer),
  authorization_endpoint: Type.Optional(providerFields.authorization_endpoint),
  token_endpoint: Type.Optional(providerFields.token_endpoint),
  userinfo_endpoint: Type.Optional(providerFields.userinfo_endpoint),
  client_id: providerFields.client_id,
  client_auth: Type.Optional(providerFields.client_auth),
  client_secret: Type.Optional(providerFields.client_secret),
  scopes: Type.Optional(providerFields.scopes),
  claim_mapping: Type.Optional(providerFields.claim_mapping),
  link_by_verified_email: Type.Optional(providerFields.link_by_verified_email),
  trust_upstream_assurance: Type.Optional(providerFields.trust_upstream_assurance),
  required_acr: Type.Optional(providerFields.required_acr),
  logo_uri: Type.Optional(providerFields.logo_uri),
};
export const IdentityProviderCreate = Type.Object(
  {
    id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        pattern: IDENTITY_PROVIDER_ID.source,
        description:
          'Lower-case letters, digits and hyphens; made from the name when left out. It is in the redirect URI, so it never changes; one taken answers 409',
      }),
    ),
    ...providerInputFields,
  },
  {
    ...strict,
    description: 'An OpenID Provider (`issuer`) or a plain OAuth 2.0 provider (the three endpoints)',
  },
);
// RFC 9110 §9.3.4: the complete provider; a field left out takes its default, but the write-only
// client secret left out is kept (as a user's password on PUT /v1/users/{id}).
export const IdentityProviderReplace = Type.Object(providerInputFields, {
  ...strict,
  description:
    'The complete provider, in the shape of POST without `id`; a field left out takes the default it would take at creation, except the write-only client_secret, which is kept',
});
export const IdentityProviderPatch = Type.Partial(Type.Object(providerFields, strict), {
  ...strict,
  minProperties: 1,
  description: 'Only the fields to change',
});
export const IdentityProviderQuery = Type.Object(
  { limit: Type.Optional(Pagination.limit), offset: Type.Optional(Pagination.offset) },
  strict,
);
export const IdentityProviderList = page(IdentityProvider);
export const FederatedLink = Type.Object(
  {
    id: Type.String(),
    provider_id: Type.String(),
    provider_name: Type.String(),
    issuer: Type.String({
      description: 'The upstream issuer, or `urn:gatehouse:idp:<provider id>` for a plain OAuth 2.0 provider',
    }),
    subject: Type.String({ description: 'The upstream person’s subject: (issuer, subject) is linked once' }),
    label: Type.Union([Type.String(), Type.Null()], {
      description: 'The upstream user name or email when it was linked',
    }),
    created_at: Timestamp,
    last_used_at: NullableTimestamp,
  },
  strict,
);
export const FederatedLinkList = Type.Object({ items: Type.Array(FederatedLink) }, strict);
export const ItemLinkParams = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 200 }),
    linkId: Type.String({ minLength: 1, maxLength: 200 }),
  },
  strict,
);

// ---- audit events (decision 41)
const EventTypeName = Type.String({
  minLength: 1,
  maxLength: 1000,
  description: 'An event type such as `client.updated`, or several joined by commas',
});
export const AuditEventQuery = Type.Object(
  {
    type: Type.Optional(
      Type.Union([EventTypeName, Type.Array(EventTypeName, { maxItems: 50 })], {
        description: 'Events of these types: repeat the parameter, or join types with commas',
      }),
    ),
    user_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Events about this user' }),
    ),
    client_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Events about this client' }),
    ),
    since: Type.Optional(
      Type.String({ minLength: 1, maxLength: 40, description: 'Events at or after this RFC 3339 time' }),
    ),
    until: Type.Optional(
      Type.String({ minLength: 1, maxLength: 40, description: 'Events before this RFC 3339 time' }),
    ),
    cursor: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'The `next_cursor` of the previous page' }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'Page size' })),
  },
  strict,
);
const AuditJsonValue = Type.Unknown({
  description: 'The thing as the API shows it (never a secret), or null',
});
export const AuditEvent = Type.Object(
  {
    id: Type.String(),
    at: Timestamp,
    type: Type.String({ description: 'What happened: `client.created`, `sign-in.failed`, …' }),
    actor: Type.Union([
      Type.Object(
        {
          type: Type.Union([Type.Literal('user'), Type.Literal('client'), Type.Literal('cli')]),
          id: Type.Union([Type.String(), Type.Null()]),
        },
        { description: 'Who made the change: a user, a client acting for itself, or the command line' },
      ),
      Type.Null(),
    ]),
    user_id: Type.Union([Type.String(), Type.Null()], { description: 'The user the event is about' }),
    client_id: Type.Union([Type.String(), Type.Null()], { description: 'The client the event is about' }),
    address: Type.Union([Type.String(), Type.Null()], { description: 'Where the request came from' }),
    before: AuditJsonValue,
    after: AuditJsonValue,
    detail: Type.Union([Type.String(), Type.Null()]),
  },
  strict,
);
export const AuditEventList = Type.Object(
  {
    items: Type.Array(AuditEvent),
    next_cursor: Type.Union([Type.String(), Type.Null()], {
      description: 'Pass as `cursor` for the next (older) page; null on the last',
    }),
  },
  strict,
);
export type AuditEventQueryString = Static<typeof AuditEventQuery>;

// ---- statistics (decision 43)
const PerMinute = Type.Array(Type.Integer({ minimum: 0 }), {
  description: 'One count per minute of `minutes`, summed over every process',
});
const PerMinuteByLabel = (label: string) =>
  Type.Record(Type.String(), PerMinute, { description: `Counts per minute, by ${label}` });
const QuantilePerMinute = Type.Array(Type.Union([Type.Number(), Type.Null()]), {
  description: 'Milliseconds, per minute; null for a minute without requests',
});
export const Statistics = Type.Object(
  {
    at: Timestamp,
    minutes: Type.Array(Timestamp, {
      description: 'The start of each minute of the last hour, oldest first; the last is the current one',
    }),
    processes: Type.Integer({ description: 'Gatehouse processes that reported figures in the last hour' }),
    token_responses: PerMinuteByLabel('grant type'),
    sign_ins: PerMinute,
    failed_sign_ins: PerMinute,
    lockouts: PerMinute,
    errors: PerMinuteByLabel('OAuth error code (`server_error` for a 5xx answer)'),
    requests: PerMinute,
    latency_ms: Type.Object(
      { p50: QuantilePerMinute, p99: QuantilePerMinute },
      {
        ...strict,
        description:
          'Request latency quantiles, from every process’s histogram buckets merged (linear within a bucket)',
      },
    ),
    active_sessions: Type.Integer({
      description: 'Browser sessions live now (counted up to `count_limit`)',
    }),
    active_sessions_per_minute: Type.Array(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]), {
      description:
        'Browser sessions live in each minute of `minutes`, as the processes read them once a minute ' +
        '(the highest reading, not a sum); null for a minute no process read it',
    }),
    signing_keys: Type.Array(
      Type.Object(
        {
          kid: Type.String(),
          alg: Type.String(),
          status: Type.Union([Type.Literal('active'), Type.Literal('retired'), Type.Literal('revoked')]),
          created_at: Timestamp,
          age_seconds: Type.Integer(),
        },
        strict,
      ),
      { description: 'Every signing key, newest first, with its age' },
    ),
    pending_migrations: Type.Array(Type.String(), {
      description: 'Migrations this version knows that the store has not applied (`gatehouse migrate`)',
    }),
    tls_certificate: Type.Union(
      [
        Type.Object(
          {
            subject: Type.String(),
            not_after: Timestamp,
            expires_in_seconds: Type.Integer({ description: 'Negative once expired' }),
          },
          strict,
        ),
        Type.Null(),
      ],
      { description: 'The certificate this server serves; null when a proxy terminates TLS' },
    ),
    purge_backlog: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
      description: 'Dead records waiting for the purge, per kind (each counted up to `count_limit`)',
    }),
    count_limit: Type.Integer({ description: 'The most any count here goes to' }),
  },
  strict,
);

function page<T extends TSchema>(item: T) {
  return Type.Object(
    {
      items: Type.Array(item),
      total: Type.Integer({ description: 'Items matching the filters, over all pages' }),
      limit: Type.Integer(),
      offset: Type.Integer(),
    },
    strict,
  );
}

export type ClientCreateBody = Static<typeof ClientCreate>;
export type IdentityProviderCreateBody = Static<typeof IdentityProviderCreate>;
export type IdentityProviderReplaceBody = Static<typeof IdentityProviderReplace>;
export type IdentityProviderPatchBody = Static<typeof IdentityProviderPatch>;
export type IdentityProviderQueryString = Static<typeof IdentityProviderQuery>;
export type ClientReplaceBody = Static<typeof ClientReplace>;
export type ClientPatchBody = Static<typeof ClientPatch>;
export type ClientQueryString = Static<typeof ClientQuery>;
export type UserCreateBody = Static<typeof UserCreate>;
export type UserReplaceBody = Static<typeof UserReplace>;
export type UserPatchBody = Static<typeof UserPatch>;
export type UserQueryString = Static<typeof UserQuery>;
export type ScopeCreateBody = Static<typeof ScopeCreate>;
export type ScopeReplaceBody = Static<typeof ScopeReplace>;
export type ScopePatchBody = Static<typeof ScopePatch>;
export type ResourceCreateBody = Static<typeof ResourceCreate>;
export type ResourceReplaceBody = Static<typeof ResourceReplace>;
export type ResourcePatchBody = Static<typeof ResourcePatch>;
export type ScopeQueryString = Static<typeof ScopeQuery>;
export type ResourceQueryString = Static<typeof ResourceQuery>;
export type InitialAccessTokenCreateBody = Static<typeof InitialAccessTokenCreate>;
export type InitialAccessTokenQueryString = Static<typeof InitialAccessTokenQuery>;
