/** Domain records. Times are seconds since the epoch; scopes are arrays of scope names. */

export const GRANT_TYPES = [
  'authorization_code',
  'implicit',
  'password',
  'client_credentials',
  'refresh_token',
  'urn:ietf:params:oauth:grant-type:token-exchange',
  'urn:ietf:params:oauth:grant-type:device_code',
] as const;
export type GrantType = (typeof GRANT_TYPES)[number];

/** RFC 8693 §2.1: the grant type of a token exchange. */
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';

/** RFC 8628 §3.4: the device authorization grant's `grant_type`. */
export const DEVICE_CODE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

export const TOKEN_TYPES = ['bearer', 'mac'] as const;
export type TokenType = (typeof TOKEN_TYPES)[number];

/**
 * How a client authenticates at the token, introspection and revocation endpoints (RFC 7591 §2
 * `token_endpoint_auth_method`). A client with a secret accepts both secret methods whichever it was
 * registered with (RFC 6749 §2.3.1); `private_key_jwt` is RFC 7523 §2.2; `none` is a public client.
 */
export const CLIENT_AUTH_METHODS = [
  'client_secret_basic',
  'client_secret_post',
  'private_key_jwt',
  'none',
] as const;
export type ClientAuthMethod = (typeof CLIENT_AUTH_METHODS)[number];

/** A JWK Set (RFC 7517 §5) of public keys; its members were checked by core/clients/client-keys.ts. */
export interface PublicJwkSet {
  keys: Array<Record<string, unknown>>;
}

/**
 * How a client came to be registered: by an operator (`gatehouse clients create`, /v1/clients), or by
 * itself at the RFC 7591 registration endpoint, with an initial access token or with none (docs/decisions.md,
 * decision 20), or not at all: `document`, a client whose id is the https URL of its Client ID Metadata
 * Document, stored as last fetched (decision 46).
 */
export const CLIENT_REGISTRATIONS = ['operator', 'token', 'open', 'document'] as const;
export type ClientRegistration = (typeof CLIENT_REGISTRATIONS)[number];

export interface Client {
  id: string;
  name: string;
  /** SHA-256 of the secret; null for a public client. */
  secretHash: string | null;
  redirectUris: string[];
  grantTypes: GrantType[];
  scopes: string[];
  tokenType: TokenType;
  isPublic: boolean;
  /** The JWS algorithm of the client's ID tokens (OpenID Connect Registration §2); RS256 by default. */
  idTokenSignedResponseAlg: 'RS256' | 'ES256';
  /** Where RP-initiated logout may send the browser back to (exact match, like redirect URIs). */
  postLogoutRedirectUris: string[];
  /** `none` exactly when public; `private_key_jwt` has no secret and exactly one of jwks / jwksUri. */
  tokenEndpointAuthMethod: ClientAuthMethod;
  /** The client's public keys for `private_key_jwt` (RFC 7591 §2 `jwks`), or null. */
  jwks: PublicJwkSet | null;
  /** Where the client publishes them instead (RFC 7591 §2 `jwks_uri`, https), or null. */
  jwksUri: string | null;
  /** Who registered it; a client that registered itself has a name nobody checked. */
  registration: ClientRegistration;
  /**
   * SHA-256 of the RFC 7592 registration access token that manages the client at its configuration
   * endpoint; null for a client an operator made (it cannot be managed there).
   */
  registrationAccessTokenHash: string | null;
  /**
   * The scopes a self-registered client's registration was made under: its initial access token's, or
   * the open list, when it registered. Every RFC 7592 update is held to them (docs/decisions.md,
   * decision 20). Null for an operator's client, and for one registered before they were recorded.
   */
  registrationScopes: string[] | null;
  /**
   * When a user first granted the client anything. Recorded for clients registered `open` only: the
   * purge deletes those that were never granted anything (core/ops/purge.ts).
   */
  firstGrantedAt: number | null;
  /**
   * RFC 9126 §6 `require_pushed_authorization_requests`: /authorize answers this client only with a
   * `request_uri` from the pushed authorization request endpoint.
   */
  requirePushedAuthorizationRequests: boolean;
  /**
   * RFC 9449 §5.2 `dpop_bound_access_tokens`: the token endpoint refuses this client's requests that
   * carry no DPoP proof, so its access tokens are always sender-constrained.
   */
  dpopBoundAccessTokens: boolean;
  /**
   * RFC 8693 §2.1: the registered resources (canonical URIs) this client may name as `resource` or
   * `audience` when it exchanges a token; empty, it may keep only the subject token's own audience
   * (docs/decisions.md, decision 23).
   */
  tokenExchangeTargets: string[];
  /**
   * Its users sign in with two factors: a user without a second factor sets one up right after the
   * password (docs/decisions.md, decision 34).
   */
  requireMfa: boolean;
  /**
   * The upstream identity providers (IdentityProvider ids) its sign-in page offers, in this order;
   * null offers every one there is (docs/decisions.md, decision 39). An empty list offers none.
   */
  identityProviders: string[] | null;
  /**
   * A `document` client: until when (seconds) its stored metadata stands for the document at its id
   * without a fetch (the document's HTTP caching, within the bounds of decision 46); null for others.
   */
  documentExpiresAt: number | null;
  createdAt: number;
  updatedAt: number;
}

export interface User {
  id: string;
  username: string;
  /** PHC string: algorithm and cost parameters travel with each hash. */
  passwordHash: string;
  /** OpenID Connect Core §5.1 `email`. */
  email: string | null;
  /**
   * OpenID Connect Core §5.1 `email_verified`: the person followed a link mailed to `email`
   * (docs/decisions.md, decision 35). A store's update makes it false whenever the address changes.
   */
  emailVerified: boolean;
  /** OpenID Connect Core §5.1 `name`: the full name to display. */
  name: string | null;
  /**
   * An administrator: a token issued for this user may carry the `admin` scope, and /v1 accepts such a
   * token only while this holds (docs/decisions.md, decision 29).
   */
  admin: boolean;
  /**
   * Disabled by an operator (docs/decisions.md, decision 37): no method signs the user in, no password
   * grant issues tokens for them, and disabling ended their sessions and grants.
   */
  disabled: boolean;
  createdAt: number;
  /** Also UserInfo's `updated_at` (Core §5.1). */
  updatedAt: number;
}

export interface Scope {
  name: string;
  description: string;
  createdAt: number;
}

/**
 * A registered resource server (RFC 8707): what a `resource` parameter may name, and so the `aud` of
 * the access tokens issued for it.
 */
export interface ResourceServer {
  /** Absolute https URI (http only on loopback), no fragment, in canonical form (core/scopes/resources.ts). */
  uri: string;
  /** What operators call it; null when none was given. */
  name: string | null;
  /** The scopes it offers; empty: it accepts any scope the client has. */
  scopes: string[];
  createdAt: number;
}

/**
 * What a resource owner (or, for the password grant, a login) authorized a client to do.
 * Every refresh and access token is issued under a grant and dies with it.
 */
export interface Grant {
  id: string;
  clientId: string;
  userId: string;
  scope: string[];
  createdAt: number;
  /** The lifetime the user chose; null means "until I revoke it". */
  expiresAt: number | null;
  revokedAt: number | null;
}

export interface AuthorizationCode {
  hash: string;
  clientId: string;
  userId: string;
  grantId: string;
  redirectUri: string;
  scope: string[];
  codeChallenge: string | null;
  codeChallengeMethod: 'S256' | 'plain' | null;
  /** The OpenID Connect request's `nonce`, for the ID token (Core §3.1.2.1); null when none was sent. */
  nonce: string | null;
  /** When the user authenticated, for the ID token's `auth_time` (Core §2); null outside OpenID Connect. */
  authTime: number | null;
  /** The browser session of that authentication, the ID token's `sid`; null outside OpenID Connect. */
  sid: string | null;
  /**
   * The `acr` the response reports for that sign-in (docs/decisions.md, decision 36), for the ID token
   * and the access tokens the code leads to; null or absent when the code was issued without one
   * (before migration 0021).
   */
  acr?: string | null;
  /** The sign-in's RFC 8176 `amr` values, for the ID token; null or absent as `acr`. */
  amr?: string[] | null;
  /**
   * The resources the authorization request named (RFC 8707 §2), canonical URIs; empty when it named
   * none. The token request may narrow them, never widen them.
   */
  resources: string[];
  /**
   * RFC 9449 §10: the `dpop_jkt` of the authorization request, the JWK thumbprint (RFC 7638) of the
   * key whose DPoP proof the token request must carry; null when none was sent.
   */
  dpopJkt: string | null;
  createdAt: number;
  expiresAt: number;
  consumedAt: number | null;
}

export interface RefreshToken {
  hash: string;
  grantId: string;
  clientId: string;
  userId: string;
  scope: string[];
  createdAt: number;
  expiresAt: number | null;
  /** Set when the token was rotated or revoked; a retired token never issues again. */
  retiredAt: number | null;
  /**
   * The authentication the token descends from, for the ID token a refresh issues (OpenID Connect
   * Core §12.2: the original `auth_time`, the same `sid`); copied on rotation, null outside OpenID
   * Connect. Kept on the token, not the grant: a grant outlives sign-ins (a remembered consent, a
   * standing grant answers later requests), each of which has its own time and session.
   */
  authTime: number | null;
  sid: string | null;
  /**
   * The `acr` and `amr` of that sign-in (decision 36): what the access tokens (`acr`) and ID tokens of
   * its refreshes repeat, never a newer sign-in's; copied on rotation. Null or absent: none known.
   */
  acr?: string | null;
  amr?: string[] | null;
  /**
   * The resources of the grant (RFC 8707 §2.2), canonical URIs, empty for none: a refresh may
   * narrow its access token to some of them, never widen; copied unchanged on rotation.
   */
  resources: string[];
  /**
   * RFC 9449 §5: the JWK thumbprint of the DPoP key a public client's refresh token is bound to (each
   * refresh must carry a proof made with it); copied on rotation. Null: not bound (a confidential
   * client's, whose authentication already binds it, or one issued without a proof).
   */
  dpopJkt: string | null;
}

/**
 * An authorization request pushed to POST /par (RFC 9126 §2), kept until /authorize answers it. The
 * `request_uri` handed out holds a random value; only its SHA-256 is stored.
 */
export interface PushedAuthorizationRequest {
  hash: string;
  clientId: string;
  /** The request's parameters, form-encoded as pushed (client credentials left out). */
  params: string;
  createdAt: number;
  /** Until it is first used, the pushed request's own lifetime; from then on the flow's. */
  expiresAt: number;
  /** When /authorize first read it (docs/decisions.md, decision 18); null before. */
  openedAt: number | null;
  /** When an authorization response was produced for it: it is never used again. */
  consumedAt: number | null;
}

/**
 * A device authorization request (RFC 8628 §3.1), from POST /device_authorization until its device code
 * expires. Only SHA-256 hashes are stored: of the device code, and of the normalised user code (the
 * verification page finds the request by it; core/device/user-code.ts).
 */
export interface DeviceAuthorization {
  /** SHA-256 of the device_code. */
  hash: string;
  /** SHA-256 of the user code in normal form; no two stored requests share one. */
  userCodeHash: string;
  clientId: string;
  /**
   * The scope asked for, resolved against the client's; once approved, what the user allowed (the
   * consent page may narrow it, never widen it).
   */
  scope: string[];
  /** The resources the request named (RFC 8707 §2), canonical URIs; empty when it named none. */
  resources: string[];
  createdAt: number;
  expiresAt: number;
  /** Seconds the device must leave between polls (RFC 8628 §3.2); 5 more after each slow_down (§3.5). */
  interval: number;
  /** When the device last polled; null before its first poll. */
  lastPolledAt: number | null;
  status: 'pending' | 'approved' | 'denied';
  /** Who decided, once someone has. */
  userId: string | null;
  /** The grant the user's consent made or confirmed (approved only): the tokens live under it. */
  grantId: string | null;
  /** The sign-in that approved an OpenID Connect request: the ID token's auth_time and sid (Core §2). */
  authTime: number | null;
  sid: string | null;
  /** That sign-in's `acr` and `amr` (decision 36); null or absent when none is known. */
  acr?: string | null;
  amr?: string[] | null;
  decidedAt: number | null;
  /** When the device redeemed it for tokens; it never issues again. */
  consumedAt: number | null;
}

/** One method a browser session's person used, and when (docs/decisions.md, decision 30). */
export interface SessionAuthentication {
  /** An AuthenticationMethod's name (core/sign-in/methods.ts): `password`, `passkey`, `federated`, … */
  method: string;
  at: number;
  /** For `federated`: the IdentityProvider's id the person came through. */
  provider?: string;
  /**
   * For `federated`, only when the provider is trusted for it (IdentityProvider.trustUpstreamAssurance):
   * the upstream ID token's `amr` and `acr`, as the upstream sent them.
   */
  upstream?: { amr?: string[]; acr?: string };
}

/**
 * How Gatehouse authenticates itself at an upstream provider's token endpoint (RFC 6749 §2.3, OpenID
 * Connect Core §9): a client secret (Basic or in the form), a JWT signed with a key Gatehouse keeps for
 * that provider (`private_key_jwt`), or nothing (a public client, PKCE alone).
 */
export type UpstreamClientAuth = 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none';

/**
 * Where the upstream's claims are read from (ID token claims merged over userinfo's, or a plain OAuth
 * 2.0 provider's userinfo JSON): claim names, a dotted path reaching into nested objects.
 */
export interface UpstreamClaimMapping {
  /** The stable id of the person at the upstream: `sub` for OpenID Providers. */
  subject: string;
  username: string;
  email: string;
  /** A boolean claim; absent or not `true` means unverified. */
  emailVerified: string;
  name: string;
}

/**
 * An upstream identity provider people may sign in through (docs/decisions.md, upstream identity
 * providers): an OpenID Provider found by discovery (`kind` `oidc`, `issuer` set, endpoints null until
 * discovered), or a plain OAuth 2.0 provider (`oauth2`, endpoints given, claims mapped from userinfo).
 */
export interface IdentityProvider {
  /** A slug ([a-z0-9-], from the name unless given): in the redirect URI and in `idp_hint`. */
  id: string;
  /** What the sign-in page's button says: "Continue with NAME". */
  name: string;
  kind: 'oidc' | 'oauth2';
  /** The OpenID Provider's issuer (oidc); null for a plain OAuth 2.0 provider. */
  issuer: string | null;
  authorizationEndpoint: string | null;
  tokenEndpoint: string | null;
  userinfoEndpoint: string | null;
  clientId: string;
  clientAuth: UpstreamClientAuth;
  /** The client secret, sealed under the server secret's key-encryption key (sealed-box.ts); never in the clear. */
  clientSecretSealed: string | null;
  /** For private_key_jwt: the private key (PKCS#8 DER), sealed like signing keys. */
  privateKeySealed: string | null;
  /** Its public JWK (with `kid` and `alg`), what the operator registers at the upstream. */
  publicJwk: Record<string, unknown> | null;
  scopes: string[];
  claimMapping: UpstreamClaimMapping;
  /** Links a first sign-in to the local user with that address when the upstream says it is verified. */
  linkByVerifiedEmail: boolean;
  /** The upstream's `amr`/`acr` count toward this server's (decision on federated assurance). */
  trustUpstreamAssurance: boolean;
  /** An `acr` the upstream must deliver (sent as `acr_values`; a sign-in without it is refused). */
  requiredAcr: string | null;
  /** An https URL of its logo, shown on its button. */
  logoUri: string | null;
  createdAt: number;
  updatedAt: number;
}

/**
 * A local user's link to a person at an upstream provider: (issuer, subject) names the upstream person,
 * once across all users; the user's own `sub` here stays theirs and stable whatever is linked.
 */
export interface FederatedLink {
  id: string;
  userId: string;
  providerId: string;
  /** The upstream issuer (oidc), or for a plain OAuth 2.0 provider `urn:gatehouse:idp:<provider id>`. */
  issuer: string;
  subject: string;
  /** The upstream user name or email at the time of linking, to name the link on the security page. */
  label: string | null;
  createdAt: number;
  lastUsedAt: number | null;
}

/**
 * A user's authenticator app (RFC 6238, decision 34). The secret is sealed, never stored in the clear;
 * `confirmedAt` null is a set-up begun, not yet proved by a code; `lastStep` the time step of the last
 * code accepted (a code is accepted once).
 */
export interface TotpCredential {
  userId: string;
  secretSealed: string;
  createdAt: number;
  confirmedAt: number | null;
  lastStep: number | null;
}

/** A signed-in browser. The cookie holds a random id; only its SHA-256 is stored. */
export interface BrowserSession {
  hash: string;
  userId: string;
  createdAt: number;
  expiresAt: number;
  /**
   * Each method used in this session and when, oldest first; `auth_time`, `amr` and `acr` are derived
   * from it (core/sign-in/assurance.ts). Absent on a session stored before migration 0016.
   */
  authentications?: SessionAuthentication[];
  /**
   * The session's OpenID Connect `sid`, stable for its life: kept when its cookie is renewed at a
   * re-authentication (decision 37). Absent on a session stored before migration 0020, whose `sid` is
   * derived from its hash (sessionId in core/sign-in/browser-sessions.ts).
   */
  sid?: string;
  /** The User-Agent it was signed in with, cut short (decision 37): what the security page calls it. */
  userAgent?: string;
  /** The address it was signed in from (decision 37). */
  address?: string;
  /** When it was last used, written at most every few minutes (decision 37). */
  lastActiveAt?: number;
}

export interface SigningKeyRecord {
  kid: string;
  alg: 'ES256' | 'EdDSA' | 'RS256';
  publicJwk: Record<string, string>;
  /** AES-256-GCM sealed PKCS#8 DER, base64url(iv | tag | ciphertext). */
  privateKeySealed: string;
  createdAt: number;
  retiredAt: number | null;
  /** Set when an operator revoked the key (compromised): it no longer signs or verifies anything. */
  revokedAt: number | null;
}

/**
 * An RFC 7591 §3 initial access token: lets whoever holds it register clients while the policy is
 * `token`, until it expires or an operator deletes it (docs/decisions.md, decision 20). Only the
 * token's SHA-256 is stored.
 */
export interface InitialAccessToken {
  id: string;
  hash: string;
  /** The scopes the clients it registers may have; null: those open registration allows. */
  scopes: string[] | null;
  createdAt: number;
  expiresAt: number;
  /** How many clients were registered with it. */
  clientsRegistered: number;
}

/**
 * A passkey: a WebAuthn credential registered to a user (docs/decisions.md, decision 33). Nothing
 * here is secret: the private key never leaves the authenticator.
 */
export interface Passkey {
  /** The credential id, base64url (WebAuthn §4 "Credential ID"). */
  id: string;
  userId: string;
  /** The name the person gave it on the security page. */
  name: string;
  /** The credential public key, COSE-encoded (WebAuthn §6.5.1), base64url. */
  publicKey: string;
  /** The signature counter last seen (WebAuthn §6.1.1); 0 for authenticators that keep none. */
  signCount: number;
  /** Transports the browser reported at registration (WebAuthn §5.8.4), as hints for later requests. */
  transports: string[];
  /**
   * The BE flag at registration (WebAuthn §6.1.3): the credential may be synced to other devices (a
   * synced passkey, RFC 8176 `swk`), or never leaves its device (`hwk`). Fixed for the credential's life.
   */
  backupEligible: boolean;
  /** The BS flag last seen: the credential is backed up (synced) now. */
  backedUp: boolean;
  createdAt: number;
  lastUsedAt: number | null;
}

/** What a WebAuthn challenge was issued for: one ceremony each, never accepted for another. */
export type WebAuthnPurpose = 'register' | 'sign-in' | 'second-factor';

/** A WebAuthn challenge (WebAuthn §13.4.3), single use, for one browser and one purpose. */
export interface WebAuthnChallenge {
  /** SHA-256 of the challenge (base64url, as it travels). */
  hash: string;
  /** SHA-256 of the browser id it was issued to (the cookie; BrowserSessions). */
  browserHash: string;
  purpose: WebAuthnPurpose;
  /** The user a registration or a second factor is for; null for a passwordless sign-in. */
  userId: string | null;
  createdAt: number;
  expiresAt: number;
}

/** Why a mail link was sent (docs/decisions.md, decision 35). */
export type MailLinkPurpose = 'password-reset' | 'email-verification';

/**
 * A single-use link mailed to a user: only the SHA-256 of its token is kept, so a leaked store opens
 * nothing. `address` is where it was sent: a verification counts only while the user still has it.
 */
export interface MailLink {
  hash: string;
  purpose: MailLinkPurpose;
  userId: string;
  address: string;
  createdAt: number;
  expiresAt: number;
  /** When it was followed; null while unused. */
  usedAt: number | null;
}

/**
 * Who made a change an audit event records (docs/decisions.md, decision 41): a user (through a token
 * issued for them), a client acting for itself (client_credentials, or an RFC 7591 registration), the
 * operator at the command line, or nobody known (a failed sign-in by an unknown name).
 */
export type AuditActorType = 'user' | 'client' | 'cli';

export interface AuditActor {
  type: AuditActorType;
  /** The user's or the client's id; null for `cli`. */
  id: string | null;
}

/** A JSON value as an audit event keeps it (the views of core's registries, never a secret). */
export type AuditJson = string | number | boolean | null | AuditJson[] | { [key: string]: AuditJson };

/**
 * One recorded change or sign-in (docs/decisions.md, decision 41). Immutable once written; purged
 * after the retention. `before` and `after` are the registries' views (viewClient, viewUser, …),
 * which never hold a secret: what an event may say is decided by what a view shows.
 */
export interface AuditEvent {
  /**
   * Time-ordered: within a second (`at`) the events of one process sort in the order they were
   * made, and the list's cursor is (at, id).
   */
  id: string;
  /** Epoch seconds. */
  at: number;
  /** Dotted, `<thing>.<what happened>`: `client.created`, `sign-in.failed`, … */
  type: string;
  actor: AuditActor | null;
  /** The user the event is about, when one is. */
  userId: string | null;
  /** The client the event is about, when one is. */
  clientId: string | null;
  /** The address the request came from (null at the command line). */
  address: string | null;
  before: AuditJson | null;
  after: AuditJson | null;
  /** A short note (a sign-in method, why a sign-in failed), never a secret. */
  detail: string | null;
}
