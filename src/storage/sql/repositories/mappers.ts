import type {
  AuthorizationCode,
  Client,
  ClientAuthMethod,
  ClientRegistration,
  DeviceAuthorization,
  Grant,
  InitialAccessToken,
  GrantType,
  PublicJwkSet,
  PushedAuthorizationRequest,
  RefreshToken,
  ResourceServer,
  SigningKeyRecord,
  TokenType,
  MailLink,
  User,
} from '../../../core/model.js';
import type {
  AuthorizationCodesTable,
  ClientsTable,
  DeviceAuthorizationsTable,
  GrantsTable,
  InitialAccessTokensTable,
  PushedAuthorizationRequestsTable,
  RefreshTokensTable,
  ResourcesTable,
  SigningKeysTable,
  UsersTable,
  MailLinksTable,
} from '../schema.js';

const splitScope = (value: string): string[] => (value === '' ? [] : value.split(' '));
const joinScope = (scope: readonly string[]): string => scope.join(' ');
// Migration 0021: the sign-in's acr, and its amr as a JSON array; NULL when unknown, which reads as
// absent (as on a row written before the columns were).
const assuranceFromColumns = (row: {
  acr: string | null;
  amr: string | null;
}): { acr?: string; amr?: string[] } => ({
  ...(row.acr === null ? {} : { acr: row.acr }),
  ...(row.amr === null ? {} : { amr: JSON.parse(row.amr) as string[] }),
});
const amrToColumn = (value: readonly string[] | null | undefined): string | null =>
  value === null || value === undefined ? null : JSON.stringify(value);

export const clientFromRow = (row: ClientsTable): Client => ({
  id: row.id,
  name: row.name,
  secretHash: row.secret_hash,
  redirectUris: JSON.parse(row.redirect_uris) as string[],
  grantTypes: JSON.parse(row.grant_types) as GrantType[],
  scopes: splitScope(row.scopes),
  tokenType: row.token_type as TokenType,
  isPublic: row.is_public === 1,
  idTokenSignedResponseAlg: row.id_token_signed_response_alg as Client['idTokenSignedResponseAlg'],
  postLogoutRedirectUris: JSON.parse(row.post_logout_redirect_uris) as string[],
  tokenEndpointAuthMethod: row.token_endpoint_auth_method as ClientAuthMethod,
  jwks: row.jwks === null ? null : (JSON.parse(row.jwks) as PublicJwkSet),
  jwksUri: row.jwks_uri,
  registration: row.registration as ClientRegistration,
  registrationAccessTokenHash: row.registration_access_token_hash,
  registrationScopes: row.registration_scopes === null ? null : splitScope(row.registration_scopes),
  firstGrantedAt: row.first_granted_at === null ? null : Number(row.first_granted_at),
  requirePushedAuthorizationRequests: row.require_pushed_authorization_requests === 1,
  dpopBoundAccessTokens: row.dpop_bound_access_tokens === 1,
  tokenExchangeTargets: JSON.parse(row.token_exchange_targets) as string[],
  requireMfa: row.require_mfa === 1,
  identityProviders:
    row.identity_providers === null ? null : (JSON.parse(row.identity_providers) as string[]),
  documentExpiresAt: row.document_expires_at === null ? null : Number(row.document_expires_at),
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export const clientToRow = (client: Client): ClientsTable => ({
  id: client.id,
  name: client.name,
  secret_hash: client.secretHash,
  redirect_uris: JSON.stringify(client.redirectUris),
  grant_types: JSON.stringify(client.grantTypes),
  scopes: joinScope(client.scopes),
  token_type: client.tokenType,
  is_public: client.isPublic ? 1 : 0,
  created_at: client.createdAt,
  updated_at: client.updatedAt,
  id_token_signed_response_alg: client.idTokenSignedResponseAlg,
  post_logout_redirect_uris: JSON.stringify(client.postLogoutRedirectUris),
  token_endpoint_auth_method: client.tokenEndpointAuthMethod,
  jwks: client.jwks === null ? null : JSON.stringify(client.jwks),
  jwks_uri: client.jwksUri,
  registration: client.registration,
  registration_access_token_hash: client.registrationAccessTokenHash,
  registration_scopes: client.registrationScopes === null ? null : joinScope(client.registrationScopes),
  first_granted_at: client.firstGrantedAt,
  require_pushed_authorization_requests: client.requirePushedAuthorizationRequests ? 1 : 0,
  dpop_bound_access_tokens: client.dpopBoundAccessTokens ? 1 : 0,
  token_exchange_targets: JSON.stringify(client.tokenExchangeTargets),
  require_mfa: client.requireMfa ? 1 : 0,
  identity_providers: client.identityProviders === null ? null : JSON.stringify(client.identityProviders),
  document_expires_at: client.documentExpiresAt,
});

export const initialAccessTokenFromRow = (row: InitialAccessTokensTable): InitialAccessToken => ({
  id: row.id,
  hash: row.hash,
  scopes: row.scopes === null ? null : splitScope(row.scopes),
  createdAt: Number(row.created_at),
  expiresAt: Number(row.expires_at),
  clientsRegistered: Number(row.clients_registered),
});

export const initialAccessTokenToRow = (token: InitialAccessToken): InitialAccessTokensTable => ({
  id: token.id,
  hash: token.hash,
  scopes: token.scopes === null ? null : joinScope(token.scopes),
  created_at: token.createdAt,
  expires_at: token.expiresAt,
  clients_registered: token.clientsRegistered,
});

export const userFromRow = (row: UsersTable): User => ({
  id: row.id,
  username: row.username,
  passwordHash: row.password_hash,
  email: row.email,
  name: row.name,
  admin: row.admin === 1,
  emailVerified: Number(row.email_verified) === 1,
  disabled: row.disabled === 1,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export const userToRow = (user: User): UsersTable => ({
  id: user.id,
  username: user.username,
  password_hash: user.passwordHash,
  created_at: user.createdAt,
  updated_at: user.updatedAt,
  email: user.email,
  name: user.name,
  admin: user.admin ? 1 : 0,
  email_verified: user.emailVerified ? 1 : 0,
  disabled: user.disabled ? 1 : 0,
});

export const grantFromRow = (row: GrantsTable): Grant => ({
  id: row.id,
  clientId: row.client_id,
  userId: row.user_id,
  scope: splitScope(row.scope),
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  revokedAt: row.revoked_at,
});

export const grantToRow = (grant: Grant): GrantsTable => ({
  id: grant.id,
  client_id: grant.clientId,
  user_id: grant.userId,
  scope: joinScope(grant.scope),
  created_at: grant.createdAt,
  expires_at: grant.expiresAt,
  revoked_at: grant.revokedAt,
});

export const codeFromRow = (row: AuthorizationCodesTable): AuthorizationCode => ({
  hash: row.hash,
  clientId: row.client_id,
  userId: row.user_id,
  grantId: row.grant_id,
  redirectUri: row.redirect_uri,
  scope: splitScope(row.scope),
  codeChallenge: row.code_challenge,
  codeChallengeMethod: row.code_challenge_method as AuthorizationCode['codeChallengeMethod'],
  nonce: row.nonce,
  authTime: row.auth_time === null ? null : Number(row.auth_time),
  sid: row.sid,
  ...assuranceFromColumns(row),
  resources: JSON.parse(row.resources) as string[],
  dpopJkt: row.dpop_jkt,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  consumedAt: row.consumed_at,
});

export const codeToRow = (code: AuthorizationCode): AuthorizationCodesTable => ({
  hash: code.hash,
  client_id: code.clientId,
  user_id: code.userId,
  grant_id: code.grantId,
  redirect_uri: code.redirectUri,
  scope: joinScope(code.scope),
  code_challenge: code.codeChallenge,
  code_challenge_method: code.codeChallengeMethod,
  created_at: code.createdAt,
  expires_at: code.expiresAt,
  consumed_at: code.consumedAt,
  nonce: code.nonce,
  auth_time: code.authTime,
  sid: code.sid,
  acr: code.acr ?? null,
  amr: amrToColumn(code.amr),
  resources: JSON.stringify(code.resources),
  dpop_jkt: code.dpopJkt,
});

export const refreshTokenFromRow = (row: RefreshTokensTable): RefreshToken => ({
  hash: row.hash,
  grantId: row.grant_id,
  clientId: row.client_id,
  userId: row.user_id,
  scope: splitScope(row.scope),
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  retiredAt: row.retired_at,
  authTime: row.auth_time === null ? null : Number(row.auth_time),
  sid: row.sid,
  ...assuranceFromColumns(row),
  resources: JSON.parse(row.resources) as string[],
  dpopJkt: row.dpop_jkt,
});

export const refreshTokenToRow = (token: RefreshToken): RefreshTokensTable => ({
  hash: token.hash,
  grant_id: token.grantId,
  client_id: token.clientId,
  user_id: token.userId,
  scope: joinScope(token.scope),
  created_at: token.createdAt,
  expires_at: token.expiresAt,
  retired_at: token.retiredAt,
  auth_time: token.authTime,
  sid: token.sid,
  acr: token.acr ?? null,
  amr: amrToColumn(token.amr),
  resources: JSON.stringify(token.resources),
  dpop_jkt: token.dpopJkt,
});

export const resourceFromRow = (row: ResourcesTable): ResourceServer => ({
  uri: row.uri,
  name: row.name,
  scopes: splitScope(row.scopes),
  createdAt: Number(row.created_at),
});

export const resourceToRow = (resource: ResourceServer): ResourcesTable => ({
  uri: resource.uri,
  name: resource.name,
  scopes: joinScope(resource.scopes),
  created_at: resource.createdAt,
});

export const signingKeyFromRow = (row: SigningKeysTable): SigningKeyRecord => ({
  kid: row.kid,
  alg: row.alg as SigningKeyRecord['alg'],
  publicJwk: JSON.parse(row.public_jwk) as Record<string, string>,
  privateKeySealed: row.private_key_sealed,
  createdAt: row.created_at,
  retiredAt: row.retired_at,
  revokedAt: row.revoked_at,
});

export const signingKeyToRow = (key: SigningKeyRecord): SigningKeysTable => ({
  kid: key.kid,
  alg: key.alg,
  public_jwk: JSON.stringify(key.publicJwk),
  private_key_sealed: key.privateKeySealed,
  created_at: key.createdAt,
  retired_at: key.retiredAt,
  revoked_at: key.revokedAt,
});

/** A code row joined with the columns of its grant, as one statement reads them. */
export interface CodeWithGrantRow extends AuthorizationCodesTable {
  grant_client_id: string;
  grant_user_id: string;
  grant_scope: string;
  grant_created_at: number;
  grant_expires_at: number | null;
  grant_revoked_at: number | null;
}

export const codeWithGrantFromRow = (row: CodeWithGrantRow): { code: AuthorizationCode; grant: Grant } => ({
  code: codeFromRow(row),
  grant: grantFromRow({
    id: row.grant_id,
    client_id: row.grant_client_id,
    user_id: row.grant_user_id,
    scope: row.grant_scope,
    created_at: row.grant_created_at,
    expires_at: row.grant_expires_at,
    revoked_at: row.grant_revoked_at,
  }),
});

export const pushedRequestFromRow = (row: PushedAuthorizationRequestsTable): PushedAuthorizationRequest => ({
  hash: row.hash,
  clientId: row.client_id,
  params: row.params,
  createdAt: Number(row.created_at),
  expiresAt: Number(row.expires_at),
  openedAt: row.opened_at === null ? null : Number(row.opened_at),
  consumedAt: row.consumed_at === null ? null : Number(row.consumed_at),
});

export const pushedRequestToRow = (
  request: PushedAuthorizationRequest,
): PushedAuthorizationRequestsTable => ({
  hash: request.hash,
  client_id: request.clientId,
  params: request.params,
  created_at: request.createdAt,
  expires_at: request.expiresAt,
  opened_at: request.openedAt,
  consumed_at: request.consumedAt,
});

const nullableNumber = (value: number | null): number | null => (value === null ? null : Number(value));

export const deviceAuthorizationFromRow = (row: DeviceAuthorizationsTable): DeviceAuthorization => ({
  hash: row.hash,
  userCodeHash: row.user_code_hash,
  clientId: row.client_id,
  scope: splitScope(row.scope),
  resources: JSON.parse(row.resources) as string[],
  createdAt: Number(row.created_at),
  expiresAt: Number(row.expires_at),
  interval: Number(row.poll_interval),
  lastPolledAt: nullableNumber(row.last_polled_at),
  status: row.status,
  userId: row.user_id,
  grantId: row.grant_id,
  authTime: nullableNumber(row.auth_time),
  sid: row.sid,
  ...assuranceFromColumns(row),
  decidedAt: nullableNumber(row.decided_at),
  consumedAt: nullableNumber(row.consumed_at),
});

export const deviceAuthorizationToRow = (authorization: DeviceAuthorization): DeviceAuthorizationsTable => ({
  hash: authorization.hash,
  user_code_hash: authorization.userCodeHash,
  client_id: authorization.clientId,
  scope: joinScope(authorization.scope),
  resources: JSON.stringify(authorization.resources),
  created_at: authorization.createdAt,
  expires_at: authorization.expiresAt,
  poll_interval: authorization.interval,
  last_polled_at: authorization.lastPolledAt,
  polled_too_soon: 0,
  status: authorization.status,
  user_id: authorization.userId,
  grant_id: authorization.grantId,
  auth_time: authorization.authTime,
  sid: authorization.sid,
  acr: authorization.acr ?? null,
  amr: amrToColumn(authorization.amr),
  decided_at: authorization.decidedAt,
  consumed_at: authorization.consumedAt,
});

export const mailLinkFromRow = (row: MailLinksTable): MailLink => ({
  hash: row.hash,
  purpose: row.purpose,
  userId: row.user_id,
  address: row.address,
  createdAt: Number(row.created_at),
  expiresAt: Number(row.expires_at),
  usedAt: nullableNumber(row.used_at),
});

export const mailLinkToRow = (link: MailLink): MailLinksTable => ({
  hash: link.hash,
  purpose: link.purpose,
  user_id: link.userId,
  address: link.address,
  created_at: link.createdAt,
  expires_at: link.expiresAt,
  used_at: link.usedAt,
});
