/** Table shapes as stored. Times are epoch seconds (BIGINT); lists are JSON text; scopes space-delimited. */
export interface ClientsTable {
  id: string;
  name: string;
  secret_hash: string | null;
  redirect_uris: string;
  grant_types: string;
  scopes: string;
  token_type: string;
  is_public: number;
  created_at: number;
  updated_at: number;
  id_token_signed_response_alg: string;
  /** JSON array, like redirect_uris. */
  post_logout_redirect_uris: string;
  token_endpoint_auth_method: string;
  /** A JSON JWK Set, or null. */
  jwks: string | null;
  jwks_uri: string | null;
  /** operator | token | open | document. */
  registration: string;
  registration_access_token_hash: string | null;
  /** Space-delimited: the scopes a self-registered client's registration was made under; null otherwise. */
  registration_scopes: string | null;
  first_granted_at: number | null;
  /** RFC 9126 §6; 0 or 1, like is_public. */
  require_pushed_authorization_requests: number;
  /** RFC 9449 §5.2; 0 or 1, like is_public. */
  dpop_bound_access_tokens: number;
  /** RFC 8693 targets the client may exchange tokens for (decision 23): JSON array of resource URIs. */
  token_exchange_targets: string;
  /** Decision 34; 0 or 1, like is_public. */
  require_mfa: number;
  /** Decision 39: JSON array of the identity provider ids its sign-in page offers; null offers every one. */
  identity_providers: string | null;
  /** Decision 46: a `document` client's stored metadata stands until then (seconds); null otherwise. */
  document_expires_at: number | null;
}

export interface InitialAccessTokensTable {
  id: string;
  hash: string;
  /** Space-delimited; null: the scopes open registration allows. */
  scopes: string | null;
  created_at: number;
  expires_at: number;
  clients_registered: number;
}

export interface UsersTable {
  id: string;
  username: string;
  password_hash: string;
  created_at: number;
  updated_at: number;
  email: string | null;
  name: string | null;
  /** Decision 29: 0 or 1, like is_public. */
  admin: number;
  /** Decision 35: 0 or 1; 0 again whenever email changes (repositories/users.ts). */
  email_verified: number;
  /** Decision 37: 0 or 1; a disabled user cannot sign in. */
  disabled: number;
}

/** Decision 35: single-use links mailed to users (migration 0019). */
export interface MailLinksTable {
  hash: string;
  purpose: 'password-reset' | 'email-verification';
  user_id: string;
  address: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

export interface ScopesTable {
  name: string;
  description: string;
  created_at: number;
}

export interface ResourcesTable {
  /** Canonical URI (core/scopes/resources.ts). */
  uri: string;
  name: string | null;
  /** Space-delimited; empty: any scope. */
  scopes: string;
  created_at: number;
}

export interface GrantsTable {
  id: string;
  client_id: string;
  user_id: string;
  scope: string;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
}

export interface AuthorizationCodesTable {
  hash: string;
  client_id: string;
  user_id: string;
  grant_id: string;
  redirect_uri: string;
  scope: string;
  code_challenge: string | null;
  code_challenge_method: string | null;
  created_at: number;
  expires_at: number;
  consumed_at: number | null;
  nonce: string | null;
  auth_time: number | null;
  sid: string | null;
  /** JSON array of canonical resource URIs (RFC 8707); '[]' for none. */
  resources: string;
  /** RFC 9449: the JWK thumbprint the row is bound to, or null. */
  dpop_jkt: string | null;
  /** The sign-in's reported acr and its amr as a JSON array (migration 0021); NULL when unknown. */
  acr: string | null;
  amr: string | null;
}

export interface RefreshTokensTable {
  hash: string;
  grant_id: string;
  client_id: string;
  user_id: string;
  scope: string;
  created_at: number;
  expires_at: number | null;
  retired_at: number | null;
  auth_time: number | null;
  sid: string | null;
  /** JSON array of canonical resource URIs (RFC 8707); '[]' for none. */
  resources: string;
  /** RFC 9449: the JWK thumbprint the row is bound to, or null. */
  dpop_jkt: string | null;
  /** The sign-in's reported acr and its amr as a JSON array (migration 0021); NULL when unknown. */
  acr: string | null;
  amr: string | null;
}

export interface RevokedAccessTokensTable {
  jti: string;
  expires_at: number;
}

export interface SigningKeysTable {
  kid: string;
  alg: string;
  public_jwk: string;
  private_key_sealed: string;
  created_at: number;
  retired_at: number | null;
  revoked_at: number | null;
}

export interface ThrottleTable {
  key: string;
  count: number;
  reset_at: number;
}

export interface BrowserSessionsTable {
  hash: string;
  user_id: string;
  created_at: number;
  expires_at: number;
  /** JSON array of SessionAuthentication; NULL on sessions stored before migration 0016. */
  authentications: string | null;
  /** Decision 37 (migration 0020): NULL on sessions stored before it, and then derived from the hash. */
  sid: string | null;
  user_agent: string | null;
  address: string | null;
  last_active_at: number | null;
}

export interface MacNoncesTable {
  jti: string;
  nonce: string;
  expires_at: number;
}

export interface UsedJtisTable {
  namespace: string;
  jti: string;
  expires_at: number;
}

export interface PushedAuthorizationRequestsTable {
  hash: string;
  client_id: string;
  /** The request's parameters, form-encoded. */
  params: string;
  created_at: number;
  expires_at: number;
  opened_at: number | null;
  consumed_at: number | null;
}

export interface DeviceAuthorizationsTable {
  hash: string;
  user_code_hash: string;
  client_id: string;
  scope: string;
  /** JSON array of canonical URIs. */
  resources: string;
  created_at: number;
  expires_at: number;
  poll_interval: number;
  last_polled_at: number | null;
  /** 1 when the last poll was answered slow_down. */
  polled_too_soon: number;
  status: 'pending' | 'approved' | 'denied';
  user_id: string | null;
  grant_id: string | null;
  auth_time: number | null;
  sid: string | null;
  /** The sign-in's reported acr and its amr as a JSON array (migration 0021); NULL when unknown. */
  acr: string | null;
  amr: string | null;
  decided_at: number | null;
  consumed_at: number | null;
}

/** Decision 34: one authenticator app per user, its secret sealed. */
export interface TotpCredentialsTable {
  user_id: string;
  secret_sealed: string;
  created_at: number;
  confirmed_at: number | null;
  last_step: number | null;
}

/** Decision 34: single-use recovery codes, SHA-256 only. */
export interface RecoveryCodesTable {
  user_id: string;
  code_hash: string;
  created_at: number;
  used_at: number | null;
}

export interface PasskeysTable {
  id: string;
  user_id: string;
  name: string;
  public_key: string;
  sign_count: number;
  /** JSON array of transports. */
  transports: string;
  /** 1 or 0 (the BE flag at registration). */
  backup_eligible: number;
  /** 1 or 0 (the BS flag last seen). */
  backed_up: number;
  created_at: number;
  last_used_at: number | null;
}

export interface WebAuthnChallengesTable {
  hash: string;
  browser_hash: string;
  purpose: string;
  user_id: string | null;
  created_at: number;
  expires_at: number;
}

export interface IdentityProvidersTable {
  id: string;
  name: string;
  kind: string;
  issuer: string | null;
  authorization_endpoint: string | null;
  token_endpoint: string | null;
  userinfo_endpoint: string | null;
  client_id: string;
  client_auth: string;
  client_secret_sealed: string | null;
  private_key_sealed: string | null;
  /** JSON of the public JWK, or null. */
  public_jwk: string | null;
  /** JSON array of scope names. */
  scopes: string;
  /** JSON of the UpstreamClaimMapping. */
  claim_mapping: string;
  /** 1 or 0. */
  link_by_verified_email: number;
  /** 1 or 0. */
  trust_upstream_assurance: number;
  required_acr: string | null;
  logo_uri: string | null;
  created_at: number;
  updated_at: number;
}

export interface FederatedLinksTable {
  id: string;
  user_id: string;
  provider_id: string;
  issuer: string;
  subject: string;
  label: string | null;
  created_at: number;
  last_used_at: number | null;
}

export interface AuditEventsTable {
  id: string;
  at: number;
  type: string;
  actor_type: string | null;
  actor_id: string | null;
  user_id: string | null;
  client_id: string | null;
  address: string | null;
  /** JSON text. */
  before: string | null;
  /** JSON text. */
  after: string | null;
  detail: string | null;
}

/** Decision 43: what one process counted in one minute, per series and label. */
export interface MetricSamplesTable {
  minute: number;
  process_id: string;
  series: string;
  label: string;
  value: number;
}

export interface Database {
  clients: ClientsTable;
  users: UsersTable;
  scopes: ScopesTable;
  resources: ResourcesTable;
  grants: GrantsTable;
  authorization_codes: AuthorizationCodesTable;
  refresh_tokens: RefreshTokensTable;
  revoked_access_tokens: RevokedAccessTokensTable;
  signing_keys: SigningKeysTable;
  throttle: ThrottleTable;
  browser_sessions: BrowserSessionsTable;
  mac_nonces: MacNoncesTable;
  used_jtis: UsedJtisTable;
  initial_access_tokens: InitialAccessTokensTable;
  pushed_authorization_requests: PushedAuthorizationRequestsTable;
  device_authorizations: DeviceAuthorizationsTable;
  passkeys: PasskeysTable;
  webauthn_challenges: WebAuthnChallengesTable;
  mail_links: MailLinksTable;
  totp_credentials: TotpCredentialsTable;
  recovery_codes: RecoveryCodesTable;
  identity_providers: IdentityProvidersTable;
  federated_links: FederatedLinksTable;
  audit_events: AuditEventsTable;
  metric_samples: MetricSamplesTable;
}
