import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { MAX_CLIENT_KEYS } from '../../../core/clients/client-keys.js';
import { CLIENT_AUTH_METHODS, CLIENT_REGISTRATIONS, GRANT_TYPES, TOKEN_TYPES } from '../../../core/model.js';
import { ID_TOKEN_SIGNING_ALGORITHMS } from '../../../core/tokens/id-token.js';
import { RESOURCE_NAME_MAX_LENGTH, RESOURCE_SCOPES_MAX } from '../../../core/scopes/resource-registry.js';
import { MAX_RESOURCE_URI_LENGTH } from '../../../core/scopes/resources.js';
import { EMAIL_MAX_LENGTH, NAME_MAX_LENGTH } from '../../../core/users/user-registry.js';

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
      '/register (RFC 7591) with an initial access token (`token`) or with none (`open`)',
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
    token_exchange_targets: Type.Array(Type.String(), {
      description:
        'RFC 8693 §2.1: the resources this client may name as `resource` or `audience` in a token exchange',
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
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
  token_exchange_targets: Type.Optional(clientFields.token_exchange_targets),
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
    registration: Type.Optional(Registration),
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
    created_at: Timestamp,
    updated_at: Timestamp,
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
  },
  {
    ...strict,
    description:
      'The complete user; the write-only password may be left out to keep it, an email or name ' +
      'left out is removed, and admin left out is false',
  },
);
export const UserPatch = Type.Object(
  {
    username: Type.Optional(Username),
    password: Type.Optional(Password),
    email: Type.Optional(NullableEmail),
    name: Type.Optional(NullableName),
    admin: Type.Optional(Admin),
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
export const UserList = page(User);

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
export const GrantList = Type.Object({ items: Type.Array(Grant) }, strict);

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
export const ScopeList = Type.Object({ items: Type.Array(Scope) }, strict);

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
export const ResourceList = Type.Object({ items: Type.Array(Resource) }, strict);

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
