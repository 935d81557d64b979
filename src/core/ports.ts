import type {
  AuditEvent,
  AuthorizationCode,
  BrowserSession,
  Client,
  ClientRegistration,
  DeviceAuthorization,
  FederatedLink,
  Grant,
  IdentityProvider,
  InitialAccessToken,
  Passkey,
  MailLink,
  MailLinkPurpose,
  PushedAuthorizationRequest,
  RefreshToken,
  ResourceServer,
  Scope,
  SigningKeyRecord,
  TotpCredential,
  User,
  WebAuthnChallenge,
  WebAuthnPurpose,
} from './model.js';

export interface ClientFilter {
  name?: string;
  grantType?: string;
  /**
   * How the clients came to be registered (an operator finds self-registered clients by it): one way,
   * or any of several (`token` and `open`: every client that registered itself).
   */
  registration?: ClientRegistration | readonly ClientRegistration[];
  /** Clients whose own list of identity providers names this one (not those offered every one). */
  identityProvider?: string;
  limit: number;
  offset: number;
}

export interface ClientStore {
  insert(client: Client): Promise<void>;
  get(id: string): Promise<Client | undefined>;
  list(filter: ClientFilter): Promise<{ items: Client[]; total: number }>;
  /**
   * Writes the client's settings. With `secret: 'keep'` the stored secret stays whatever the caller
   * read, so a settings change racing a secret rotation (two operators, two processes) never writes
   * the old secret back over the new one; `'replace'` writes `client.secretHash`.
   */
  update(client: Client, secret: 'keep' | 'replace'): Promise<boolean>;
  delete(id: string): Promise<boolean>;
  /**
   * Records `at` as the client's first grant unless one is recorded already (the purge keeps a client
   * registered `open` once it has been granted anything).
   */
  recordFirstGrant(id: string, at: number): Promise<void>;
}

/** RFC 7591 §3 initial access tokens (docs/decisions.md, decision 20). */
export interface InitialAccessTokenStore {
  insert(token: InitialAccessToken): Promise<void>;
  /** The token with this hash, expired or not; undefined when there is none. */
  getByHash(hash: string): Promise<InitialAccessToken | undefined>;
  /** Every token, expired ones included until the purge deletes them, oldest first. */
  list(): Promise<InitialAccessToken[]>;
  /** A page of `list`'s order, and how many there are in all. */
  page(limit: number, offset: number): Promise<{ items: InitialAccessToken[]; total: number }>;
  get(id: string): Promise<InitialAccessToken | undefined>;
  delete(id: string): Promise<boolean>;
  /** Adds one to the clients the token registered (one statement: concurrent registrations all count). */
  countRegistration(id: string): Promise<void>;
}

export interface UserStore {
  /** Returns false when the user name is taken. */
  insert(user: User): Promise<boolean>;
  get(id: string): Promise<User | undefined>;
  getByUsername(username: string): Promise<User | undefined>;
  list(limit: number, offset: number): Promise<{ items: User[]; total: number }>;
  /**
   * Writes the user. `emailVerified` is not taken from `user`: the stored value stays while the
   * address stays, and becomes false when it changes, in the same statement (so a verification
   * racing an edit of another field is never lost, and a new address is never verified by an old
   * link; docs/decisions.md, decision 35).
   */
  update(user: User): Promise<boolean>;
  delete(id: string): Promise<boolean>;
  /**
   * The users whose address is `email`, compared without regard to ASCII case (how people type
   * addresses), oldest first, at most `limit` of them (addresses are not unique).
   */
  listByEmail(email: string, limit: number): Promise<User[]>;
  /**
   * Marks the user's address verified, only while it is still `email` (exactly as a mail link
   * recorded it); false when the user is gone or has another address now.
   */
  markEmailVerified(id: string, email: string): Promise<boolean>;
}

/** Single-use links mailed to users (docs/decisions.md, decision 35). */
export interface MailLinkStore {
  insert(link: MailLink): Promise<void>;
  /** The link with this hash, used or expired or not; undefined when there is none. */
  get(hash: string): Promise<MailLink | undefined>;
  /**
   * Marks the link used at `at` if it is of `purpose`, unused and unexpired at `at`, in one step:
   * of any number of concurrent callers (in any process) exactly one gets it back.
   */
  consume(hash: string, purpose: MailLinkPurpose, at: number): Promise<MailLink | undefined>;
}

/** A mail to one person (plain text: links are written out whole, and nothing needs HTML). */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/**
 * Sends mail (src/outbound/: over SMTP, or into the log when no SMTP server is configured). Rejects
 * when the mail could not be handed over; the error never holds the server's credentials.
 */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
  /** Releases connections; sends after it are not required to work. */
  close?(): Promise<void>;
}

/**
 * A page of a listed collection (an operator's list, /v1 and the console): `search` keeps the rows
 * whose text (a scope's name; a resource's URI or name) contains it, the case of ASCII letters ignored
 * (SQLite's lower() folds those alone).
 */
export interface SearchPage {
  search?: string;
  limit: number;
  offset: number;
}

export interface ScopeStore {
  /** Adds the scopes that do not exist yet; existing descriptions are kept. */
  ensure(scopes: Scope[]): Promise<void>;
  upsert(scope: Scope): Promise<void>;
  get(name: string): Promise<Scope | undefined>;
  list(): Promise<Scope[]>;
  /** A page of the scopes by name, and how many match in all. */
  page(filter: SearchPage): Promise<{ items: Scope[]; total: number }>;
  delete(name: string): Promise<boolean>;
}

/** The registered resource servers (RFC 8707), by canonical URI. */
export interface ResourceStore {
  /** Returns false, storing nothing, when a resource with this URI is registered already. */
  insert(resource: ResourceServer): Promise<boolean>;
  get(uri: string): Promise<ResourceServer | undefined>;
  /** Those of `uris` that are registered, in one read (every token request naming resources). */
  getMany(uris: readonly string[]): Promise<ResourceServer[]>;
  /** Every resource, by URI. */
  list(): Promise<ResourceServer[]>;
  /** A page of the resources by URI, searched by URI or name, and how many match in all. */
  page(filter: SearchPage): Promise<{ items: ResourceServer[]; total: number }>;
  /** Writes name and scopes; false when no resource has this URI. */
  update(resource: ResourceServer): Promise<boolean>;
  delete(uri: string): Promise<boolean>;
}

/** Whose grants: a client's, a user's, or both at once. */
export type GrantOwnerFilter = { clientId: string; userId?: string } | { clientId?: string; userId: string };

export interface GrantStore {
  insert(grant: Grant): Promise<void>;
  get(id: string): Promise<Grant | undefined>;
  listByUser(userId: string): Promise<Grant[]>;
  listByClient(clientId: string): Promise<Grant[]>;
  /**
   * One page of the standing grants (not revoked, not expired at `at`) of a client, a user, or a user
   * at one client, newest first (ties by id), and how many there are: what operators list, never a
   * whole table. At least one of the two is given.
   */
  pageStanding(
    owner: GrantOwnerFilter,
    at: number,
    limit: number,
    offset: number,
  ): Promise<{ items: Grant[]; total: number }>;
  /** Marks the grant revoked and retires its refresh tokens, in one transaction. */
  revoke(id: string, at: number): Promise<boolean>;
}

export interface AuthorizationCodeStore {
  insert(code: AuthorizationCode): Promise<void>;
  /**
   * Marks the code consumed and returns it, in one statement, only if it was not consumed before:
   * of any number of concurrent callers exactly one gets the code.
   */
  consume(hash: string, at: number): Promise<AuthorizationCode | undefined>;
  get(hash: string): Promise<AuthorizationCode | undefined>;
  /**
   * The code with the grant it was issued under, read together: one statement on the token
   * endpoint's hot path instead of two. (A code cannot outlive its grant: deleting a grant deletes
   * its codes.)
   */
  getWithGrant(hash: string): Promise<{ code: AuthorizationCode; grant: Grant } | undefined>;
}

export interface RefreshTokenStore {
  insert(token: RefreshToken): Promise<void>;
  get(hash: string): Promise<RefreshToken | undefined>;
  /**
   * Retires `oldHash` and stores `next` atomically; returns the retired token, or undefined when it
   * was already retired (or never existed), in which case nothing is stored.
   */
  rotate(oldHash: string, next: RefreshToken, at: number): Promise<RefreshToken | undefined>;
  retire(hash: string, at: number): Promise<boolean>;
}

export interface RevocationStore {
  /** Records a revoked access token id until the token would have expired anyway. */
  revokeAccessToken(jti: string, expiresAt: number): Promise<void>;
  isAccessTokenRevoked(jti: string): Promise<boolean>;
}

export interface SigningKeyStore {
  insert(key: SigningKeyRecord): Promise<void>;
  /** Newest first. */
  list(): Promise<SigningKeyRecord[]>;
  /** Retires every key but those in `kids` (the new key of each algorithm the ring keeps). */
  retireAllExcept(kids: readonly string[], at: number): Promise<void>;
  /** Marks `kid` revoked (and retired, if it was not); false when no such key exists. Idempotent. */
  revoke(kid: string, at: number): Promise<boolean>;
}

export interface ThrottleStore {
  /** Adds one failure to `key` inside a window of `windowSeconds`; returns the failures counted so far. */
  hit(key: string, windowSeconds: number, at: number): Promise<{ count: number; resetAt: number }>;
  peek(key: string, at: number): Promise<{ count: number; resetAt: number }>;
  reset(key: string): Promise<void>;
}

/** A live browser session and its user, as BrowserSessionStore.signedIn reads them. */
export interface SignedInSession {
  session: BrowserSession;
  user: User;
}

export interface BrowserSessionStore {
  insert(session: BrowserSession): Promise<void>;
  /** The session, only while it has not expired at `at`. */
  get(hash: string, at: number): Promise<BrowserSession | undefined>;
  /**
   * The live session and the user it signs in, in one statement: every /authorize asks who is signed
   * in, and an OpenID Connect one also when (`createdAt`, Core §2 `auth_time`).
   */
  signedIn(hash: string, at: number): Promise<SignedInSession | undefined>;
  /**
   * signedIn, and in the same statement the user's grants to `clientId` (revoked and expired ones
   * too), newest first: /authorize answers from a remembered grant (consent) without another read.
   */
  signedInWithGrants(
    hash: string,
    at: number,
    clientId: string,
  ): Promise<(SignedInSession & { grants: Grant[] }) | undefined>;
  delete(hash: string): Promise<boolean>;
  /** Signs the user out of every browser (a password reset); returns how many sessions ended. */
  deleteByUser(userId: string): Promise<number>;
  /**
   * How many sessions are live at `at`, counting no further than `limit` (the dashboard's active
   * sessions, decision 43).
   */
  countLive(at: number, limit: number): Promise<number>;
  /** The user's live sessions at `at`, oldest first (the security page's list, decision 37). */
  listByUser(userId: string, at: number): Promise<BrowserSession[]>;
  /**
   * Ends the session `hash` only if it is `userId`'s: a form naming another user's session changes
   * nothing (decision 37). False when there was none.
   */
  deleteOfUser(userId: string, hash: string): Promise<boolean>;
  /** Ends every session of the user but `keepHash` ("Sign out everywhere else"); how many ended. */
  deleteOthersOfUser(userId: string, keepHash: string): Promise<number>;
  /**
   * Records that the session was used at `at`, only if its last recorded use is before `staleBefore`
   * (or none): one conditional statement, so processes reading the same session write once.
   */
  touch(hash: string, at: number, staleBefore: number): Promise<void>;
  /**
   * Renews a live session's key at a re-authentication (decision 37): the row `oldHash` takes the key
   * `renewal.hash` and the given record, `sid`, device and address, keeping its user and its times.
   * False, changing nothing, when no live session has `oldHash`.
   */
  renew(
    oldHash: string,
    at: number,
    renewal: Required<Pick<BrowserSession, 'hash' | 'authentications' | 'sid'>> &
      Pick<BrowserSession, 'userAgent' | 'address'>,
  ): Promise<boolean>;
}

/** Fixed-window request counters shared by every process (abuse limits). */
export interface RateLimitStore {
  /**
   * Adds each entry's delta to its counter (created with `resetAt` when absent) in one statement and
   * returns the totals: how processes merge the requests they counted locally.
   */
  add(
    entries: readonly { key: string; delta: number; resetAt: number }[],
  ): Promise<{ key: string; count: number }[]>;
}

/** The times before which rows are dead, computed by core/ops/purge.ts from the policy. */
export interface PurgeCutoffs {
  /**
   * Codes, refresh tokens, sessions, nonces, pushed requests, device authorizations, WebAuthn challenges,
   * mail links and throttle
   * windows that expired at or before this are dead.
   */
  now: number;
  /** Revoked access-token ids whose token expired before this (clock leeway for resource servers). */
  revokedAccessTokensExpiredBefore: number;
  /** Grants revoked before this have no live access token left. */
  grantsRevokedBefore: number;
  /**
   * Clients registered `open` before this that were never granted anything are deleted; null or
   * absent keeps them all (docs/decisions.md, decision 20).
   */
  unusedOpenClientsRegisteredBefore?: number | null;
  /**
   * Audit events recorded before this are deleted (GATEHOUSE_AUDIT_RETENTION_DAYS; decision 41); null
   * or absent keeps them all.
   */
  auditEventsBefore?: number | null;
  /**
   * The dashboard's per-minute samples of minutes before this are deleted (decision 43: two hours are
   * kept, the dashboard shows one); absent keeps them.
   */
  metricSamplesBefore?: number | null;
}

/**
 * The kinds of record the purge deletes once dead, in the order to purge them: children before the
 * grants they belong to, so that no grant delete cascades over a large set, and anonymous clients
 * last. The names are the metric's label (`gatehouse_purged_rows_total{table}`), kept as they were.
 */
export const PURGE_KINDS = [
  'authorization_codes',
  'pushed_authorization_requests',
  'device_authorizations',
  'refresh_tokens',
  'browser_sessions',
  'grants',
  'revoked_access_tokens',
  'throttle',
  'mac_nonces',
  'used_jtis',
  'initial_access_tokens',
  'webauthn_challenges',
  'mail_links',
  'clients',
  'audit_events',
  'metric_samples',
] as const;

export type PurgeKind = (typeof PURGE_KINDS)[number];

/** Deletes dead records in small batches (operations floor; docs/decisions.md, decision 5). */
export interface PurgeStore {
  /** The kinds of record this store purges, in the order to purge them (PURGE_KINDS' order). */
  readonly kinds: readonly string[];
  /**
   * How long one batch should take, by the purger's own time (the clock less its waits for a CPU):
   * what one batch may hold up of the requests beside it on this store. The purger sizes its batches
   * to it (core/ops/purge.ts); how the store arrives at it stays the store's own.
   */
  readonly batchMillis: number;
  /**
   * Deletes at most `limit` dead records of `kind` at once, with whatever upkeep the store's own
   * deletes call for; returns how many went. Concurrent callers (other processes) never work on the
   * same records at once.
   */
  purgeBatch(kind: string, cutoffs: PurgeCutoffs, limit: number): Promise<number>;
  /**
   * How many dead records of `kind` wait for the purge, counting no further than `limit` (the
   * dashboard's purge backlog, decision 43: a bounded count, never a scan of a whole table).
   */
  backlog(kind: string, cutoffs: PurgeCutoffs, limit: number): Promise<number>;
}

/** Nonces of MAC-signed requests (docs/decisions.md, decision 3), kept until their timestamp window passes. */
export interface MacNonceStore {
  /**
   * Records (jti, nonce) until `expiresAt`; true the first time, false when it was seen before (a
   * replay). Atomic in the store, so a replay is refused across processes.
   */
  remember(jti: string, nonce: string, expiresAt: number, now: number): Promise<boolean>;
}

/**
 * Identifiers a server accepts once: a client assertion's `jti` (RFC 7523 §3 item 7), and any other
 * single-use token id, each kind in a namespace of its own (e.g. `client-assertion:<client_id>`).
 */
export interface UsedJtiStore {
  /**
   * Records (namespace, jti) until `expiresAt`; true the first time, false when it was recorded
   * before and has not expired at `now` (a replay). Atomic in the store: of concurrent callers, in
   * any number of processes sharing it, exactly one gets true. A row past its expiry is taken over.
   */
  use(namespace: string, jti: string, expiresAt: number, now: number): Promise<boolean>;
}

/**
 * Reads a client's JWK Set from its `jwks_uri` (RFC 7591 §2). Network I/O, so implemented outside
 * core (src/outbound); core validates what it returns and caches it (core/clients/client-keys.ts).
 */
export interface JwksFetcher {
  /** The document at `uri`, parsed as JSON; throws when it cannot be had under the fetch policy. */
  fetch(uri: string): Promise<unknown>;
}

/** A Client ID Metadata Document as fetched: the JSON, and how long its HTTP caching says it stands. */
export interface FetchedClientMetadata {
  document: unknown;
  /**
   * Seconds the answer's `Cache-Control: max-age` (or `Expires`) lets it be used; 0 for `no-store` or
   * `no-cache`; undefined when it says nothing. Core keeps it within the bounds of decision 46.
   */
  maxAgeSeconds: number | undefined;
}

/**
 * Reads a Client ID Metadata Document from the URL that is the client's id, under the outbound rules of
 * a `jwks_uri` (decisions 21, 46). Network I/O, so implemented outside core (src/outbound).
 */
export interface ClientMetadataFetcher {
  /** Throws when the document cannot be had under the fetch policy; the message says why, for the page. */
  fetch(url: string): Promise<FetchedClientMetadata>;
}

/** Pushed authorization requests (RFC 9126), shared by every process: any one may serve the /authorize. */
export interface PushedAuthorizationRequestStore {
  insert(request: PushedAuthorizationRequest): Promise<void>;
  /**
   * The request `hash` of client `clientId`, while it is neither consumed nor expired at `now`, in one
   * statement. The first such read marks it opened at `now` and moves its expiry to
   * `expiresAtOnceOpened`; later reads change nothing.
   */
  open(
    hash: string,
    clientId: string,
    now: number,
    expiresAtOnceOpened: number,
  ): Promise<PushedAuthorizationRequest | undefined>;
  /**
   * Marks the request consumed at `at`, in one statement, only while it is unconsumed and unexpired:
   * of any number of concurrent callers exactly one gets true.
   */
  consume(hash: string, clientId: string, at: number): Promise<boolean>;
}

/** What the user decided on a device authorization request (RFC 8628 §3.3). */
export type DeviceDecision =
  | {
      status: 'approved';
      userId: string;
      grantId: string;
      /** What the user allowed: the request's scope or less. */
      scope: string[];
      authTime: number | null;
      sid: string | null;
      /** The approving sign-in's `acr` and `amr` (decision 36); absent when none is known. */
      acr?: string | null;
      amr?: string[] | null;
    }
  | { status: 'denied'; userId: string };

/** Device authorization requests (RFC 8628), shared by every process: any one may answer a poll. */
export interface DeviceAuthorizationStore {
  /**
   * Stores the request; false, storing nothing, when a stored request already has its user code hash
   * (the caller draws another code).
   */
  insert(authorization: DeviceAuthorization): Promise<boolean>;
  /** The request whose normalised user code hashes to `userCodeHash`, in whatever state (expired ones until purged). */
  getByUserCode(userCodeHash: string): Promise<DeviceAuthorization | undefined>;
  /**
   * Records the user's decision on the request `userCodeHash`, in one statement, only while it is
   * pending and unexpired at `at`: of any number of concurrent callers exactly one gets true.
   */
  decide(userCodeHash: string, decision: DeviceDecision, at: number): Promise<boolean>;
  /**
   * One poll of device code `hash` by `clientId` at `at` (RFC 8628 §3.4), in one statement: records
   * the poll's time and, when the request is pending and unexpired and this poll came sooner than its
   * interval after the last one, adds `slowDownSeconds` to the interval (§3.5). Returns the request as
   * it stands after the poll and whether this poll came too soon; undefined when `clientId` has no
   * such device code. Concurrent polls (from any process) each see the one before.
   */
  poll(
    hash: string,
    clientId: string,
    at: number,
    slowDownSeconds: number,
  ): Promise<{ authorization: DeviceAuthorization; tooSoon: boolean } | undefined>;
  /**
   * Marks the approved request consumed and returns it, in one statement, only while it is approved,
   * unconsumed and unexpired at `at`: of any number of concurrent callers exactly one gets it.
   */
  consume(hash: string, clientId: string, at: number): Promise<DeviceAuthorization | undefined>;
}

/**
 * Second factors after a password (docs/decisions.md, decision 34): the authenticator app (RFC 6238) and
 * recovery codes. Shared by every process: a code accepted in one is refused in all the others.
 */
export interface SecondFactorStore {
  /** The user's authenticator app, confirmed or only begun; undefined when there is none. */
  getTotp(userId: string): Promise<TotpCredential | undefined>;
  /**
   * Stores a set-up begun (confirmedAt and lastStep null), replacing one begun before; false, storing
   * nothing, while the user has a confirmed one (it is removed first).
   */
  beginTotp(credential: Pick<TotpCredential, 'userId' | 'secretSealed' | 'createdAt'>): Promise<boolean>;
  /**
   * Accepts a code of time step `step` (RFC 6238 §4): for `confirm`, the set-up begun (marking it
   * confirmed at `at`), otherwise the confirmed one; in one statement, only when `step` is later than
   * the last step accepted. Of any number of concurrent callers with one code exactly one gets true.
   */
  useTotpStep(userId: string, step: number, at: number, confirm: boolean): Promise<boolean>;
  /** Removes the user's authenticator app; false when there was none. */
  deleteTotp(userId: string): Promise<boolean>;
  /** Replaces every recovery code of the user by these (SHA-256 hashes), in one transaction. */
  replaceRecoveryCodes(userId: string, hashes: readonly string[], at: number): Promise<void>;
  /**
   * Marks the unused code `hash` of the user used at `at`, in one statement: of any number of
   * concurrent callers exactly one gets true.
   */
  useRecoveryCode(userId: string, hash: string, at: number): Promise<boolean>;
  /** How many unused recovery codes the user has. */
  countRecoveryCodes(userId: string): Promise<number>;
  /** Removes every recovery code of the user; returns how many there were (used or not). */
  deleteRecoveryCodes(userId: string): Promise<number>;
}

/** A verified use of a passkey, as PasskeyStore.recordUse writes it. */
export interface PasskeyUse {
  signCount: number;
  backedUp: boolean;
  at: number;
}

/** Passkeys (WebAuthn credentials) of users (docs/decisions.md, decision 33). */
export interface PasskeyStore {
  /** Stores a new passkey; false, storing nothing, when a passkey with its credential id exists. */
  insert(passkey: Passkey): Promise<boolean>;
  get(id: string): Promise<Passkey | undefined>;
  /** The user's passkeys, oldest first. */
  listByUser(userId: string): Promise<Passkey[]>;
  /**
   * Records a verified assertion, in one statement, only while the stored counter is still
   * `previousSignCount` (what the check read): of two assertions racing with one counter value, in any
   * processes, one is recorded and the other gets false, as a counter gone back would (WebAuthn §6.1.1).
   */
  recordUse(id: string, previousSignCount: number, use: PasskeyUse): Promise<boolean>;
  /** Deletes the user's passkey `id`; false when the user has no such passkey. */
  delete(userId: string, id: string): Promise<boolean>;
}

/** Upstream identity providers (model.ts IdentityProvider), few: listed whole, in name order. */
export interface IdentityProviderStore {
  /** Stores a new provider; false, storing nothing, when its id is taken. */
  insert(provider: IdentityProvider): Promise<boolean>;
  get(id: string): Promise<IdentityProvider | undefined>;
  list(limit: number, offset: number): Promise<{ items: IdentityProvider[]; total: number }>;
  /** Replaces the stored provider of that id; false when there is none. */
  update(provider: IdentityProvider): Promise<boolean>;
  /** Deletes the provider and every link through it; false when there is none. */
  delete(id: string): Promise<boolean>;
}

/** Links between local users and upstream people (model.ts FederatedLink). */
export interface FederatedLinkStore {
  /** Stores a link; false, storing nothing, when (issuer, subject) is linked already (to anyone). */
  insert(link: FederatedLink): Promise<boolean>;
  /** The link of an upstream person, whoever it is linked to. */
  find(issuer: string, subject: string): Promise<FederatedLink | undefined>;
  /** A user's links, oldest first. */
  listByUser(userId: string): Promise<FederatedLink[]>;
  /** A provider's links, oldest first (what deleting it would remove). */
  countByProvider(providerId: string): Promise<number>;
  recordUse(id: string, at: number): Promise<void>;
  /** Deletes the user's link `id`; false when the user has no such link. */
  delete(userId: string, id: string): Promise<boolean>;
}

/** WebAuthn challenges, shared by every process: any one may receive the answer to one. */
export interface WebAuthnChallengeStore {
  insert(challenge: WebAuthnChallenge): Promise<void>;
  /**
   * Takes the challenge `hash` issued to `browserHash` for `purpose`, while unexpired at `at`, and
   * deletes it, in one statement: of any number of concurrent callers exactly one gets it, and a
   * challenge of another browser or purpose is not taken (nor deleted).
   */
  consume(
    hash: string,
    browserHash: string,
    purpose: WebAuthnPurpose,
    at: number,
  ): Promise<WebAuthnChallenge | undefined>;
}

/** What GET /v1/audit-events and `gatehouse audit list` ask for (decision 41). */
export interface AuditEventFilter {
  /** Any of these types; absent or empty: every type. */
  types?: readonly string[];
  /** Events about this user (the subject, not the actor). */
  userId?: string;
  /** Events about this client. */
  clientId?: string;
  /** Events at or after this (epoch seconds). */
  since?: number;
  /** Events before this (epoch seconds). */
  until?: number;
  /** Events after this one in the list's order (newest first): a previous page's last. */
  after?: { at: number; id: string };
  limit: number;
}

/** The audit log's records (docs/decisions.md, decision 41). */
export interface AuditEventStore {
  append(event: AuditEvent): Promise<void>;
  /**
   * The events the filter selects, newest first by (at, id), at most `limit`: one indexed range read
   * (keyset pagination), so events appended meanwhile (all newer) never shift a later page.
   */
  list(filter: AuditEventFilter): Promise<AuditEvent[]>;
}

/**
 * What one process counted in one minute of one series (decision 43): `minute` is the epoch second the
 * minute starts at, `label` one of the series' bounded set (a grant type, an error code, a latency
 * bucket's upper bound).
 */
export interface MetricSample {
  processId: string;
  minute: number;
  series: string;
  label: string;
  value: number;
}

/** The dashboard's figures, written by every process of a deployment (decision 43). */
export interface MetricSampleStore {
  /**
   * Adds each sample's value to the stored one of its (minute, process, series, label), created when
   * absent, in one statement: a process flushes what it counted since its last flush.
   */
  add(samples: readonly MetricSample[]): Promise<void>;
  /** The samples of minutes at or after `minute`, every process's, at most `limit`. */
  since(minute: number, limit: number): Promise<MetricSample[]>;
}

export interface Storage {
  readonly clients: ClientStore;
  readonly users: UserStore;
  readonly scopes: ScopeStore;
  readonly resources: ResourceStore;
  readonly grants: GrantStore;
  readonly codes: AuthorizationCodeStore;
  readonly refreshTokens: RefreshTokenStore;
  readonly revocations: RevocationStore;
  readonly signingKeys: SigningKeyStore;
  readonly throttle: ThrottleStore;
  readonly browserSessions: BrowserSessionStore;
  readonly purge: PurgeStore;
  readonly rateLimits: RateLimitStore;
  readonly macNonces: MacNonceStore;
  readonly usedJtis: UsedJtiStore;
  readonly initialAccessTokens: InitialAccessTokenStore;
  readonly pushedRequests: PushedAuthorizationRequestStore;
  readonly deviceAuthorizations: DeviceAuthorizationStore;
  readonly passkeys: PasskeyStore;
  readonly webAuthnChallenges: WebAuthnChallengeStore;
  readonly mailLinks: MailLinkStore;
  readonly secondFactors: SecondFactorStore;
  readonly identityProviders: IdentityProviderStore;
  readonly federatedLinks: FederatedLinkStore;
  readonly auditEvents: AuditEventStore;
  readonly metricSamples: MetricSampleStore;
  /**
   * Runs `work` in one transaction and returns its result: every write it makes through the storage
   * it is given is kept if it resolves and undone if it rejects (the change and its audit event, both
   * or neither; decision 41). `work` must use that storage only: on SQLite the transaction holds the
   * one connection, and a query through this storage would wait for it forever.
   */
  atomically<T>(work: (storage: Storage) => Promise<T>): Promise<T>;
  /** Round-trips to the store; throws when it is unreachable. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The value derived from the server secret that the store keeps, to refuse a process started with
 * another secret (compose/secret-check.ts). One per store.
 */
export interface SecretCheckStore {
  /** The stored value; undefined when there is none yet (or the store has no place for one yet). */
  read(): Promise<string | undefined>;
  /**
   * Stores `value` (made at `at`) unless a value is stored already, in one step, and returns the
   * value stored now: of two first writers racing on an empty store, both read the winner's.
   */
  write(value: string, at: number): Promise<string | undefined>;
}

/** How long one operation on the store took (the store-latency metric). */
export interface StoreOperationEvent {
  /** What kind of operation (a store's own names, e.g. `select`, `insert`, `raw`). */
  operation: string;
  durationMs: number;
  failed: boolean;
}

/**
 * A store's lifecycle, beside what the engine reads and writes (Storage): its schema, the secret
 * check value, observation and closing. What the composition root asks of a store it opened by URL
 * (src/storage/open-store.ts).
 */
export interface StoreLifecycle {
  /** Brings the store to this version's schema; returns the names of the steps applied. */
  migrate(): Promise<string[]>;
  /** Names of the steps migrate() would apply, in order; empty when the store is current. */
  pendingMigrations(): Promise<string[]>;
  /** Whether a Gatehouse store exists here at all (at any schema version). */
  exists(): Promise<boolean>;
  readonly secretCheck: SecretCheckStore;
  /** Calls `listener` after every operation (metrics: store latency); returns a function that stops it. */
  observeOperations(listener: (event: StoreOperationEvent) => void): () => void;
  /** Calls `listener` when an idle connection to the store fails (it is replaced on demand). */
  observeConnectionErrors(listener: (error: Error) => void): () => void;
}

/** A store as compose opens it: the engine's Storage and its lifecycle. */
export type GatehouseStore = Storage & StoreLifecycle;
