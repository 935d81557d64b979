import { isDeepStrictEqual } from 'node:util';
import type {
  AuditEvent,
  AuthorizationCode,
  BrowserSession,
  Client,
  DeviceAuthorization,
  Grant,
  InitialAccessToken,
  MailLink,
  PushedAuthorizationRequest,
  RefreshToken,
  ResourceServer,
  Scope,
  SigningKeyRecord,
  TotpCredential,
  User,
  FederatedLink,
  IdentityProvider,
  Passkey,
  WebAuthnChallenge,
} from '../../../src/core/model.js';
import type {
  AuditEventFilter,
  AuditEventStore,
  AuthorizationCodeStore,
  BrowserSessionStore,
  ClientStore,
  DeviceAuthorizationStore,
  GrantStore,
  InitialAccessTokenStore,
  MacNonceStore,
  FederatedLinkStore,
  IdentityProviderStore,
  PasskeyStore,
  MailLinkStore,
  MetricSample,
  MetricSampleStore,
  PurgeStore,
  PushedAuthorizationRequestStore,
  RateLimitStore,
  RefreshTokenStore,
  ResourceStore,
  RevocationStore,
  ScopeStore,
  SigningKeyStore,
  GatehouseStore,
  SecretCheckStore,
  SecondFactorStore,
  Storage,
  ThrottleStore,
  UsedJtiStore,
  UserStore,
  WebAuthnChallengeStore,
} from '../../../src/core/ports.js';

/**
 * In-memory fakes of the storage ports (src/core/ports.ts), for unit tests of the engine without a
 * database. Each follows the doc comment on its interface and what the storage contract test
 * (test/storage/contract.test.ts) holds the SQL stores to: records are copied in and out (a caller
 * never holds a reference into the store), foreign keys are checked and deletes cascade as in the
 * schema. Every method does its reads and writes without awaiting in between, so it is atomic
 * against concurrent callers, as the one-statement SQL versions are: consume() hands a code out
 * once, rotate() retires a refresh token once.
 */

const copy = <T>(value: T): T => structuredClone(value);

/** The rows, shared by the stores that join or cascade across them. */
interface Tables {
  clients: Map<string, Client>;
  users: Map<string, User>;
  scopes: Map<string, Scope>;
  resources: Map<string, ResourceServer>;
  grants: Map<string, Grant>;
  codes: Map<string, AuthorizationCode>;
  refreshTokens: Map<string, RefreshToken>;
  revokedAccessTokens: Map<string, number>;
  signingKeys: Map<string, SigningKeyRecord>;
  throttle: Map<string, { count: number; resetAt: number }>;
  browserSessions: Map<string, BrowserSession>;
  rateLimits: Map<string, { count: number; resetAt: number }>;
  macNonces: Map<string, number>;
  usedJtis: Map<string, number>;
  initialAccessTokens: Map<string, InitialAccessToken>;
  pushedRequests: Map<string, PushedAuthorizationRequest>;
  deviceAuthorizations: Map<string, DeviceAuthorization>;
  passkeys: Map<string, Passkey>;
  identityProviders: Map<string, IdentityProvider>;
  federatedLinks: Map<string, FederatedLink>;
  webAuthnChallenges: Map<string, WebAuthnChallenge>;
  mailLinks: Map<string, MailLink>;
  totp: Map<string, TotpCredential>;
  /** By user id, then by code hash: when each was used (null: unused). */
  recoveryCodes: Map<string, Map<string, number | null>>;
  auditEvents: Map<string, AuditEvent>;
  /** Keyed by minute, process, series and label, NUL-separated. */
  metricSamples: Map<string, MetricSample>;
}

function references(table: Map<string, unknown>, key: string, what: string): void {
  if (!table.has(key)) throw new Error(`foreign key: no ${what} ${key}`);
}

function insertNew<T>(table: Map<string, T>, key: string, row: T, what: string): void {
  if (table.has(key)) throw new Error(`unique: ${what} ${key} exists`);
  table.set(key, copy(row));
}

/** Deletes a grant and, as the schema's ON DELETE CASCADE does, its codes and refresh tokens. */
function deleteGrant(t: Tables, id: string): void {
  t.grants.delete(id);
  for (const [hash, code] of t.codes) if (code.grantId === id) t.codes.delete(hash);
  for (const [hash, token] of t.refreshTokens) if (token.grantId === id) t.refreshTokens.delete(hash);
  for (const [hash, device] of t.deviceAuthorizations)
    if (device.grantId === id) t.deviceAuthorizations.delete(hash);
}

function clients(t: Tables): ClientStore {
  return {
    async insert(client) {
      insertNew(t.clients, client.id, client, 'client');
    },
    async get(id) {
      const client = t.clients.get(id);
      return client && copy(client);
    },
    async list({ name, grantType, registration, identityProvider, limit, offset }) {
      const matching = [...t.clients.values()]
        .filter((c) => name === undefined || c.name === name)
        .filter((c) => grantType === undefined || (c.grantTypes as string[]).includes(grantType))
        .filter(
          (c) =>
            registration === undefined ||
            (typeof registration === 'string' ? [registration] : registration).includes(c.registration),
        )
        .filter(
          (c) => identityProvider === undefined || (c.identityProviders ?? []).includes(identityProvider),
        )
        .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      return { items: matching.slice(offset, offset + limit).map(copy), total: matching.length };
    },
    async update(client, secret) {
      const stored = t.clients.get(client.id);
      if (stored === undefined) return false;
      // 'keep': the stored secret stays, whatever the caller read (ClientStore.update).
      t.clients.set(client.id, {
        ...copy(client),
        secretHash: secret === 'replace' ? client.secretHash : stored.secretHash,
      });
      return true;
    },
    async delete(id) {
      if (!t.clients.delete(id)) return false;
      for (const grant of [...t.grants.values()]) if (grant.clientId === id) deleteGrant(t, grant.id);
      for (const [hash, pushed] of t.pushedRequests)
        if (pushed.clientId === id) t.pushedRequests.delete(hash);
      for (const [hash, device] of t.deviceAuthorizations)
        if (device.clientId === id) t.deviceAuthorizations.delete(hash);
      return true;
    },
    async recordFirstGrant(id, at) {
      const client = t.clients.get(id);
      if (client !== undefined && client.firstGrantedAt === null) client.firstGrantedAt = at;
    },
  };
}

function initialAccessTokens(t: Tables): InitialAccessTokenStore {
  return {
    async insert(token) {
      if ([...t.initialAccessTokens.values()].some((other) => other.hash === token.hash)) {
        throw new Error('unique: initial access token hash exists');
      }
      insertNew(t.initialAccessTokens, token.id, token, 'initial access token');
    },
    async getByHash(hash) {
      const token = [...t.initialAccessTokens.values()].find((other) => other.hash === hash);
      return token && copy(token);
    },
    async list() {
      return [...t.initialAccessTokens.values()]
        .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .map(copy);
    },
    async page(limit, offset) {
      const all = [...t.initialAccessTokens.values()].sort(
        (a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
      );
      return { items: all.slice(offset, offset + limit).map(copy), total: all.length };
    },
    async get(id) {
      const token = t.initialAccessTokens.get(id);
      return token && copy(token);
    },
    async delete(id) {
      return t.initialAccessTokens.delete(id);
    },
    async countRegistration(id) {
      const token = t.initialAccessTokens.get(id);
      if (token !== undefined) token.clientsRegistered += 1;
    },
  };
}

function users(t: Tables): UserStore {
  const byName = (username: string) => [...t.users.values()].find((u) => u.username === username);
  return {
    async insert(user) {
      if (byName(user.username) !== undefined) return false;
      insertNew(t.users, user.id, user, 'user');
      return true;
    },
    async get(id) {
      const user = t.users.get(id);
      return user && copy(user);
    },
    async getByUsername(username) {
      const user = byName(username);
      return user && copy(user);
    },
    async list(limit, offset) {
      const all = [...t.users.values()].sort(
        (a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
      );
      return { items: all.slice(offset, offset + limit).map(copy), total: all.length };
    },
    async update(user) {
      if (!t.users.has(user.id)) return false;
      const holder = byName(user.username);
      if (holder !== undefined && holder.id !== user.id) throw new Error('unique: user name taken');
      const stored = t.users.get(user.id);
      // Verified only while the address stays (UserStore.update; a null address is never verified).
      const emailVerified =
        stored?.emailVerified === true && stored.email !== null && stored.email === user.email;
      t.users.set(user.id, { ...copy(user), emailVerified });
      return true;
    },
    async listByEmail(email, limit) {
      // ASCII case only, as SQLite's lower() (UserStore.listByEmail).
      const lower = (text: string) => text.replace(/[A-Z]/g, (c) => c.toLowerCase());
      return [...t.users.values()]
        .filter((u) => u.email !== null && lower(u.email) === lower(email))
        .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .slice(0, limit)
        .map(copy);
    },
    async markEmailVerified(id, email) {
      const user = t.users.get(id);
      if (user === undefined || user.email !== email) return false;
      user.emailVerified = true;
      return true;
    },
    async delete(id) {
      if (!t.users.delete(id)) return false;
      for (const grant of [...t.grants.values()]) if (grant.userId === id) deleteGrant(t, grant.id);
      for (const [hash, session] of t.browserSessions) {
        if (session.userId === id) t.browserSessions.delete(hash);
      }
      for (const [hash, device] of t.deviceAuthorizations)
        if (device.userId === id) t.deviceAuthorizations.delete(hash);
      for (const [key, passkey] of t.passkeys) if (passkey.userId === id) t.passkeys.delete(key);
      for (const [key, link] of t.federatedLinks) if (link.userId === id) t.federatedLinks.delete(key);
      for (const [hash, challenge] of t.webAuthnChallenges)
        if (challenge.userId === id) t.webAuthnChallenges.delete(hash);
      for (const [hash, link] of t.mailLinks) if (link.userId === id) t.mailLinks.delete(hash);
      t.totp.delete(id);
      t.recoveryCodes.delete(id);
      return true;
    },
  };
}

/** SearchPage's match (ports.ts): contains, the case of ASCII letters ignored, as SQLite's lower(). */
function contains(text: string, search: string): boolean {
  const lower = (value: string) => value.replace(/[A-Z]/g, (c) => c.toLowerCase());
  return lower(text).includes(lower(search));
}

function scopes(t: Tables): ScopeStore {
  return {
    async ensure(list) {
      for (const scope of list) if (!t.scopes.has(scope.name)) t.scopes.set(scope.name, copy(scope));
    },
    async upsert(scope) {
      const stored = t.scopes.get(scope.name);
      t.scopes.set(scope.name, stored ? { ...stored, description: scope.description } : copy(scope));
    },
    async get(name) {
      const scope = t.scopes.get(name);
      return scope && copy(scope);
    },
    async list() {
      return [...t.scopes.values()].sort((a, b) => (a.name < b.name ? -1 : 1)).map(copy);
    },
    async page({ search, limit, offset }) {
      const all = [...t.scopes.values()]
        .filter((scope) => search === undefined || contains(scope.name, search))
        .sort((a, b) => (a.name < b.name ? -1 : 1));
      return { items: all.slice(offset, offset + limit).map(copy), total: all.length };
    },
    async delete(name) {
      return t.scopes.delete(name);
    },
  };
}

function resources(t: Tables): ResourceStore {
  return {
    async insert(resource) {
      if (t.resources.has(resource.uri)) return false;
      t.resources.set(resource.uri, copy(resource));
      return true;
    },
    async get(uri) {
      const resource = t.resources.get(uri);
      return resource && copy(resource);
    },
    async getMany(uris) {
      return [...new Set(uris)].flatMap((uri) => {
        const resource = t.resources.get(uri);
        return resource === undefined ? [] : [copy(resource)];
      });
    },
    async list() {
      return [...t.resources.values()].sort((a, b) => (a.uri < b.uri ? -1 : 1)).map(copy);
    },
    async page({ search, limit, offset }) {
      const all = [...t.resources.values()]
        .filter(
          (resource) =>
            search === undefined ||
            contains(resource.uri, search) ||
            (resource.name !== null && contains(resource.name, search)),
        )
        .sort((a, b) => (a.uri < b.uri ? -1 : 1));
      return { items: all.slice(offset, offset + limit).map(copy), total: all.length };
    },
    async update(resource) {
      const stored = t.resources.get(resource.uri);
      if (stored === undefined) return false;
      t.resources.set(resource.uri, { ...stored, name: resource.name, scopes: [...resource.scopes] });
      return true;
    },
    async delete(uri) {
      return t.resources.delete(uri);
    },
  };
}

function grants(t: Tables): GrantStore {
  const newestFirst = (list: Grant[]) => list.sort((a, b) => b.createdAt - a.createdAt).map(copy);
  return {
    async insert(grant) {
      references(t.clients, grant.clientId, 'client');
      references(t.users, grant.userId, 'user');
      insertNew(t.grants, grant.id, grant, 'grant');
    },
    async get(id) {
      const grant = t.grants.get(id);
      return grant && copy(grant);
    },
    async listByUser(userId) {
      return newestFirst([...t.grants.values()].filter((g) => g.userId === userId));
    },
    async listByClient(clientId) {
      return newestFirst([...t.grants.values()].filter((g) => g.clientId === clientId));
    },
    async pageStanding(owner, at, limit, offset) {
      const standing = [...t.grants.values()]
        .filter((g) => owner.clientId === undefined || g.clientId === owner.clientId)
        .filter((g) => owner.userId === undefined || g.userId === owner.userId)
        .filter((g) => g.revokedAt === null && (g.expiresAt === null || g.expiresAt > at))
        .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .map(copy);
      return { items: standing.slice(offset, offset + limit), total: standing.length };
    },
    async revoke(id, at) {
      // One step: the grant and its live refresh tokens (GrantStore.revoke).
      const grant = t.grants.get(id);
      if (grant === undefined || grant.revokedAt !== null) return false;
      grant.revokedAt = at;
      for (const token of t.refreshTokens.values()) {
        if (token.grantId === id && token.retiredAt === null) token.retiredAt = at;
      }
      return true;
    },
  };
}

function codes(t: Tables): AuthorizationCodeStore {
  return {
    async insert(code) {
      references(t.clients, code.clientId, 'client');
      references(t.users, code.userId, 'user');
      references(t.grants, code.grantId, 'grant');
      insertNew(t.codes, code.hash, code, 'code');
    },
    async consume(hash, at) {
      // Check and mark with no await between: of concurrent callers exactly one gets the code.
      const code = t.codes.get(hash);
      if (code === undefined || code.consumedAt !== null) return undefined;
      code.consumedAt = at;
      return copy(code);
    },
    async get(hash) {
      const code = t.codes.get(hash);
      return code && copy(code);
    },
    async getWithGrant(hash) {
      const code = t.codes.get(hash);
      const grant = code && t.grants.get(code.grantId);
      return code && grant && { code: copy(code), grant: copy(grant) };
    },
  };
}

function refreshTokens(t: Tables): RefreshTokenStore {
  const insert = (token: RefreshToken) => {
    references(t.grants, token.grantId, 'grant');
    references(t.clients, token.clientId, 'client');
    references(t.users, token.userId, 'user');
    insertNew(t.refreshTokens, token.hash, token, 'refresh token');
  };
  return {
    async insert(token) {
      insert(token);
    },
    async get(hash) {
      const token = t.refreshTokens.get(hash);
      return token && copy(token);
    },
    async rotate(oldHash, next, at) {
      // Retire and store together, or neither (RefreshTokenStore.rotate).
      const old = t.refreshTokens.get(oldHash);
      if (old === undefined || old.retiredAt !== null) return undefined;
      insert(next);
      old.retiredAt = at;
      return copy(old);
    },
    async retire(hash, at) {
      const token = t.refreshTokens.get(hash);
      if (token === undefined || token.retiredAt !== null) return false;
      token.retiredAt = at;
      return true;
    },
  };
}

function revocations(t: Tables): RevocationStore {
  return {
    async revokeAccessToken(jti, expiresAt) {
      if (!t.revokedAccessTokens.has(jti)) t.revokedAccessTokens.set(jti, expiresAt);
    },
    async isAccessTokenRevoked(jti) {
      return t.revokedAccessTokens.has(jti);
    },
  };
}

function signingKeys(t: Tables): SigningKeyStore {
  return {
    async insert(key) {
      insertNew(t.signingKeys, key.kid, key, 'signing key');
    },
    async list() {
      return [...t.signingKeys.values()]
        .sort((a, b) => b.createdAt - a.createdAt || (a.kid < b.kid ? 1 : a.kid > b.kid ? -1 : 0))
        .map(copy);
    },
    async retireAllExcept(kids, at) {
      for (const key of t.signingKeys.values())
        if (!kids.includes(key.kid) && key.retiredAt === null) key.retiredAt = at;
    },
    async revoke(kid, at) {
      const key = t.signingKeys.get(kid);
      if (key === undefined) return false;
      // A key revoked twice keeps its first revocation time, and a retired one its retirement time.
      if (key.revokedAt === null) {
        key.revokedAt = at;
        key.retiredAt ??= at;
      }
      return true;
    },
  };
}

function throttle(t: Tables): ThrottleStore {
  return {
    async hit(key, windowSeconds, at) {
      const stored = t.throttle.get(key);
      // A window has passed at its resetAt: the hit opens a new one.
      const next =
        stored === undefined || stored.resetAt <= at
          ? { count: 1, resetAt: at + windowSeconds }
          : { count: stored.count + 1, resetAt: stored.resetAt };
      t.throttle.set(key, next);
      return { ...next };
    },
    async peek(key, at) {
      const stored = t.throttle.get(key);
      return stored !== undefined && stored.resetAt > at ? { ...stored } : { count: 0, resetAt: at };
    },
    async reset(key) {
      t.throttle.delete(key);
    },
  };
}

function browserSessions(t: Tables): BrowserSessionStore {
  const live = (hash: string, at: number) => {
    const session = t.browserSessions.get(hash);
    return session !== undefined && session.expiresAt > at ? session : undefined;
  };
  const signedIn = (hash: string, at: number) => {
    const session = live(hash, at);
    const user = session && t.users.get(session.userId);
    return session && user && { session: copy(session), user: copy(user) };
  };
  return {
    async insert(session) {
      references(t.users, session.userId, 'user');
      insertNew(t.browserSessions, session.hash, session, 'browser session');
    },
    async get(hash, at) {
      const session = live(hash, at);
      return session && copy(session);
    },
    async signedIn(hash, at) {
      return signedIn(hash, at);
    },
    async signedInWithGrants(hash, at, clientId) {
      const found = signedIn(hash, at);
      if (found === undefined) return undefined;
      const grants = [...t.grants.values()].filter(
        (g) => g.userId === found.user.id && g.clientId === clientId,
      );
      return { ...found, grants: grants.sort((a, b) => b.createdAt - a.createdAt).map(copy) };
    },
    async delete(hash) {
      return t.browserSessions.delete(hash);
    },
    async deleteByUser(userId) {
      let ended = 0;
      for (const [hash, session] of t.browserSessions) {
        if (session.userId === userId) ended += t.browserSessions.delete(hash) ? 1 : 0;
      }
      return ended;
    },
    async countLive(at, limit) {
      return Math.min(limit, [...t.browserSessions.values()].filter((s) => s.expiresAt > at).length);
    },
    async listByUser(userId, at) {
      return [...t.browserSessions.values()]
        .filter((session) => session.userId === userId && session.expiresAt > at)
        .sort((a, b) => a.createdAt - b.createdAt || (a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0))
        .map(copy);
    },
    async deleteOfUser(userId, hash) {
      return t.browserSessions.get(hash)?.userId === userId && t.browserSessions.delete(hash);
    },
    async deleteOthersOfUser(userId, keepHash) {
      let ended = 0;
      for (const [hash, session] of t.browserSessions) {
        if (session.userId === userId && hash !== keepHash) ended += t.browserSessions.delete(hash) ? 1 : 0;
      }
      return ended;
    },
    async touch(hash, at, staleBefore) {
      const session = t.browserSessions.get(hash);
      if (
        session !== undefined &&
        (session.lastActiveAt === undefined || session.lastActiveAt < staleBefore)
      ) {
        session.lastActiveAt = at;
      }
    },
    async renew(oldHash, at, renewal) {
      const session = live(oldHash, at);
      if (session === undefined) return false;
      if (t.browserSessions.has(renewal.hash)) throw new Error('duplicate browser session');
      t.browserSessions.delete(oldHash);
      t.browserSessions.set(renewal.hash, {
        hash: renewal.hash,
        userId: session.userId,
        createdAt: session.createdAt,
        expiresAt: session.expiresAt,
        authentications: copy(renewal.authentications),
        sid: renewal.sid,
        ...(renewal.userAgent === undefined ? {} : { userAgent: renewal.userAgent }),
        ...(renewal.address === undefined ? {} : { address: renewal.address }),
        lastActiveAt: at,
      });
      return true;
    },
  };
}

function rateLimits(t: Tables): RateLimitStore {
  return {
    async add(entries) {
      // The key names its window (RateLimitStore), so there is no reset here.
      return entries.map(({ key, delta, resetAt }) => {
        const stored = t.rateLimits.get(key) ?? { count: 0, resetAt };
        stored.count += delta;
        t.rateLimits.set(key, stored);
        return { key, count: stored.count };
      });
    },
  };
}

function macNonces(t: Tables): MacNonceStore {
  return {
    async remember(jti, nonce, expiresAt, now) {
      const key = JSON.stringify([jti, nonce]);
      const seenUntil = t.macNonces.get(key);
      // A nonce seen before is a replay, unless its row outlived its window (then it is taken over).
      if (seenUntil !== undefined && seenUntil > now) return false;
      t.macNonces.set(key, expiresAt);
      return true;
    },
  };
}

function usedJtis(t: Tables): UsedJtiStore {
  return {
    async use(namespace, jti, expiresAt, now) {
      const key = JSON.stringify([namespace, jti]);
      const seenUntil = t.usedJtis.get(key);
      // Seen before and not yet expired: a replay (UsedJtiStore.use); an expired row is taken over.
      if (seenUntil !== undefined && seenUntil > now) return false;
      t.usedJtis.set(key, expiresAt);
      return true;
    },
  };
}

function pushedRequests(t: Tables): PushedAuthorizationRequestStore {
  /** The row while unconsumed and unexpired at `now`, for its client only. */
  const live = (hash: string, clientId: string, now: number) => {
    const row = t.pushedRequests.get(hash);
    return row !== undefined && row.clientId === clientId && row.consumedAt === null && row.expiresAt > now
      ? row
      : undefined;
  };
  return {
    async insert(request) {
      references(t.clients, request.clientId, 'client');
      insertNew(t.pushedRequests, request.hash, request, 'pushed request');
    },
    async open(hash, clientId, now, expiresAtOnceOpened) {
      // Check and mark with no await between, as the one UPDATE does.
      const row = live(hash, clientId, now);
      if (row === undefined) return undefined;
      if (row.openedAt === null) {
        row.openedAt = now;
        row.expiresAt = expiresAtOnceOpened;
      }
      return copy(row);
    },
    async consume(hash, clientId, at) {
      const row = live(hash, clientId, at);
      if (row === undefined) return false;
      row.consumedAt = at;
      return true;
    },
  };
}

function deviceAuthorizations(t: Tables): DeviceAuthorizationStore {
  const byUserCode = (userCodeHash: string) =>
    [...t.deviceAuthorizations.values()].find((row) => row.userCodeHash === userCodeHash);
  return {
    async insert(authorization) {
      references(t.clients, authorization.clientId, 'client');
      // The user code hash is unique, as the table's index makes it: a taken one stores nothing.
      if (byUserCode(authorization.userCodeHash) !== undefined) return false;
      insertNew(t.deviceAuthorizations, authorization.hash, authorization, 'device authorization');
      return true;
    },
    async getByUserCode(userCodeHash) {
      const row = byUserCode(userCodeHash);
      return row && copy(row);
    },
    async decide(userCodeHash, decision, at) {
      // Check and mark with no await between, as the one UPDATE does.
      const row = byUserCode(userCodeHash);
      if (row === undefined || row.status !== 'pending' || row.expiresAt <= at) return false;
      references(t.users, decision.userId, 'user');
      if (decision.status === 'approved') {
        references(t.grants, decision.grantId, 'grant');
        Object.assign(row, {
          status: 'approved',
          userId: decision.userId,
          grantId: decision.grantId,
          scope: [...decision.scope],
          authTime: decision.authTime,
          sid: decision.sid,
          // As the store reads NULL: absent (migration 0021).
          ...(decision.acr === undefined || decision.acr === null ? {} : { acr: decision.acr }),
          ...(decision.amr === undefined || decision.amr === null ? {} : { amr: [...decision.amr] }),
        });
      } else {
        Object.assign(row, { status: 'denied', userId: decision.userId });
      }
      row.decidedAt = at;
      return true;
    },
    async poll(hash, clientId, at, slowDownSeconds) {
      const row = t.deviceAuthorizations.get(hash);
      if (row === undefined || row.clientId !== clientId) return undefined;
      // Judged on the row as it was, then the poll recorded: one step, like the UPDATE.
      const tooSoon =
        row.status === 'pending' &&
        row.expiresAt > at &&
        row.lastPolledAt !== null &&
        at - row.lastPolledAt < row.interval;
      if (tooSoon) row.interval += slowDownSeconds;
      row.lastPolledAt = at;
      return { authorization: copy(row), tooSoon };
    },
    async consume(hash, clientId, at) {
      const row = t.deviceAuthorizations.get(hash);
      if (
        row === undefined ||
        row.clientId !== clientId ||
        row.status !== 'approved' ||
        row.consumedAt !== null ||
        row.expiresAt <= at
      ) {
        return undefined;
      }
      row.consumedAt = at;
      return copy(row);
    },
  };
}

function identityProviders(t: Tables): IdentityProviderStore {
  return {
    async insert(provider) {
      if (t.identityProviders.has(provider.id)) return false;
      t.identityProviders.set(provider.id, copy(provider));
      return true;
    },
    async get(id) {
      const provider = t.identityProviders.get(id);
      return provider && copy(provider);
    },
    async list(limit, offset) {
      const all = [...t.identityProviders.values()].sort((a, b) =>
        a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0,
      );
      return { items: all.slice(offset, offset + limit).map(copy), total: all.length };
    },
    async update(provider) {
      const stored = t.identityProviders.get(provider.id);
      if (stored === undefined) return false;
      t.identityProviders.set(provider.id, { ...copy(provider), createdAt: stored.createdAt });
      return true;
    },
    async delete(id) {
      if (!t.identityProviders.delete(id)) return false;
      for (const [key, link] of t.federatedLinks) if (link.providerId === id) t.federatedLinks.delete(key);
      return true;
    },
  };
}

function federatedLinks(t: Tables): FederatedLinkStore {
  return {
    async insert(link) {
      references(t.users, link.userId, 'user');
      references(t.identityProviders, link.providerId, 'identity provider');
      for (const held of t.federatedLinks.values()) {
        if (held.issuer === link.issuer && held.subject === link.subject) return false;
      }
      if (t.federatedLinks.has(link.id)) return false;
      t.federatedLinks.set(link.id, copy(link));
      return true;
    },
    async find(issuer, subject) {
      for (const link of t.federatedLinks.values()) {
        if (link.issuer === issuer && link.subject === subject) return copy(link);
      }
      return undefined;
    },
    async listByUser(userId) {
      return [...t.federatedLinks.values()]
        .filter((link) => link.userId === userId)
        .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .map(copy);
    },
    async countByProvider(providerId) {
      return [...t.federatedLinks.values()].filter((link) => link.providerId === providerId).length;
    },
    async recordUse(id, at) {
      const link = t.federatedLinks.get(id);
      if (link !== undefined) link.lastUsedAt = at;
    },
    async delete(userId, id) {
      if (t.federatedLinks.get(id)?.userId !== userId) return false;
      return t.federatedLinks.delete(id);
    },
  };
}

function passkeys(t: Tables): PasskeyStore {
  return {
    async insert(passkey) {
      references(t.users, passkey.userId, 'user');
      // The credential id is the key: one registered already (to anyone) stores nothing.
      if (t.passkeys.has(passkey.id)) return false;
      t.passkeys.set(passkey.id, copy(passkey));
      return true;
    },
    async get(id) {
      const passkey = t.passkeys.get(id);
      return passkey && copy(passkey);
    },
    async listByUser(userId) {
      return [...t.passkeys.values()]
        .filter((passkey) => passkey.userId === userId)
        .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .map(copy);
    },
    async recordUse(id, previousSignCount, use) {
      // Compare and set with no await between, as the one UPDATE does.
      const passkey = t.passkeys.get(id);
      if (passkey === undefined || passkey.signCount !== previousSignCount) return false;
      Object.assign(passkey, { signCount: use.signCount, backedUp: use.backedUp, lastUsedAt: use.at });
      return true;
    },
    async delete(userId, id) {
      if (t.passkeys.get(id)?.userId !== userId) return false;
      return t.passkeys.delete(id);
    },
  };
}

function webAuthnChallenges(t: Tables): WebAuthnChallengeStore {
  return {
    async insert(challenge) {
      if (challenge.userId !== null) references(t.users, challenge.userId, 'user');
      insertNew(t.webAuthnChallenges, challenge.hash, challenge, 'webauthn challenge');
    },
    async consume(hash, browserHash, purpose, at) {
      // Check and delete with no await between, as the one DELETE … RETURNING does.
      const row = t.webAuthnChallenges.get(hash);
      if (row === undefined || row.browserHash !== browserHash || row.purpose !== purpose) return undefined;
      if (row.expiresAt <= at) return undefined;
      t.webAuthnChallenges.delete(hash);
      return row;
    },
  };
}

function mailLinks(t: Tables): MailLinkStore {
  return {
    async insert(link) {
      references(t.users, link.userId, 'user');
      insertNew(t.mailLinks, link.hash, link, 'mail link');
    },
    async get(hash) {
      const link = t.mailLinks.get(hash);
      return link && copy(link);
    },
    async consume(hash, purpose, at) {
      const link = t.mailLinks.get(hash);
      if (link === undefined || link.purpose !== purpose || link.usedAt !== null || link.expiresAt <= at) {
        return undefined;
      }
      link.usedAt = at;
      return copy(link);
    },
  };
}

/** Nothing to purge: the engine's rules never call it, and a test's store lives for one test. */
function auditEvents(t: Tables): AuditEventStore {
  return {
    async append(event) {
      insertNew(t.auditEvents, event.id, event, 'audit event');
    },
    async list(filter: AuditEventFilter) {
      const { types, userId, clientId, since, until, after } = filter;
      return [...t.auditEvents.values()]
        .filter(
          (e) =>
            (types === undefined || types.length === 0 || types.includes(e.type)) &&
            (userId === undefined || e.userId === userId) &&
            (clientId === undefined || e.clientId === clientId) &&
            (since === undefined || e.at >= since) &&
            (until === undefined || e.at < until) &&
            (after === undefined || e.at < after.at || (e.at === after.at && e.id < after.id)),
        )
        .sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
        .slice(0, filter.limit)
        .map(copy);
    },
  };
}

function metricSamples(t: Tables): MetricSampleStore {
  return {
    async add(samples) {
      for (const sample of samples) {
        const key = [sample.minute, sample.processId, sample.series, sample.label].join('\u0000');
        const stored = t.metricSamples.get(key);
        t.metricSamples.set(key, { ...sample, value: (stored?.value ?? 0) + sample.value });
      }
    },
    async since(minute, limit) {
      return [...t.metricSamples.values()]
        .filter((sample) => sample.minute >= minute)
        .sort((a, b) => a.minute - b.minute)
        .slice(0, limit)
        .map(copy);
    },
  };
}

const noPurge: PurgeStore = {
  kinds: [],
  batchMillis: 1,
  async purgeBatch(kind) {
    throw new Error(`the in-memory store does not purge ${kind}`);
  },
  async backlog(kind) {
    throw new Error(`the in-memory store does not purge ${kind}`);
  },
};

/** The one check value of the server secret: the first written stays. */
function secretCheck(): SecretCheckStore {
  let stored: string | undefined;
  return {
    async read() {
      return stored;
    },
    async write(value) {
      stored ??= value;
      return stored;
    },
  };
}

function secondFactors(t: Tables): SecondFactorStore {
  return {
    async getTotp(userId) {
      const row = t.totp.get(userId);
      return row && copy(row);
    },
    async beginTotp({ userId, secretSealed, createdAt }) {
      if (!t.users.has(userId)) throw new Error('foreign key: no such user');
      if (t.totp.get(userId)?.confirmedAt != null) return false;
      t.totp.set(userId, { userId, secretSealed, createdAt, confirmedAt: null, lastStep: null });
      return true;
    },
    async useTotpStep(userId, step, at, confirm) {
      const row = t.totp.get(userId);
      if (row === undefined || (row.confirmedAt === null) !== confirm) return false;
      if (row.lastStep !== null && row.lastStep >= step) return false;
      t.totp.set(userId, { ...row, lastStep: step, ...(confirm ? { confirmedAt: at } : {}) });
      return true;
    },
    async deleteTotp(userId) {
      return t.totp.delete(userId);
    },
    async replaceRecoveryCodes(userId, hashes) {
      if (!t.users.has(userId)) throw new Error('foreign key: no such user');
      t.recoveryCodes.set(userId, new Map(hashes.map((hash) => [hash, null])));
    },
    async useRecoveryCode(userId, hash, at) {
      const codes = t.recoveryCodes.get(userId);
      if (codes === undefined || codes.get(hash) !== null) return false;
      codes.set(hash, at);
      return true;
    },
    async countRecoveryCodes(userId) {
      return [...(t.recoveryCodes.get(userId)?.values() ?? [])].filter((used) => used === null).length;
    },
    async deleteRecoveryCodes(userId) {
      const count = t.recoveryCodes.get(userId)?.size ?? 0;
      t.recoveryCodes.delete(userId);
      return count;
    },
  };
}

/**
 * A fresh, empty in-memory store behind the Storage interface, with its lifecycle (StoreLifecycle):
 * it has no schema to migrate, so it exists and is current from the start.
 */
export function memoryStorage(): GatehouseStore {
  const t: Tables = {
    clients: new Map(),
    users: new Map(),
    scopes: new Map(),
    resources: new Map(),
    grants: new Map(),
    codes: new Map(),
    refreshTokens: new Map(),
    revokedAccessTokens: new Map(),
    signingKeys: new Map(),
    throttle: new Map(),
    browserSessions: new Map(),
    rateLimits: new Map(),
    macNonces: new Map(),
    usedJtis: new Map(),
    initialAccessTokens: new Map(),
    pushedRequests: new Map(),
    deviceAuthorizations: new Map(),
    passkeys: new Map(),
    identityProviders: new Map(),
    federatedLinks: new Map(),
    webAuthnChallenges: new Map(),
    mailLinks: new Map(),
    totp: new Map(),
    recoveryCodes: new Map(),
    auditEvents: new Map(),
    metricSamples: new Map(),
  };
  const storage = storageOver(t);
  return {
    ...storage,
    secretCheck: secretCheck(),
    async migrate() {
      return [];
    },
    async pendingMigrations() {
      return [];
    },
    async exists() {
      return true;
    },
    observeOperations: () => () => undefined,
    observeConnectionErrors: () => () => undefined,
  };
}

/**
 * Storage.atomically on the fake: the work runs on a copy of the tables, and on success the rows it
 * changed (compared with a snapshot taken at the start) are written back; on failure the copy is
 * dropped. Rows other callers changed meanwhile stay as they wrote them, unless the work wrote the same.
 * Transactions take turns, as SQLite's (begun IMMEDIATE) do: one that starts while another runs sees
 * what the other wrote, so a conditional write in both (a device request decided in two tabs) holds
 * for one only, as a row lock makes it on PostgreSQL.
 */
const transactionTurns = new WeakMap<Tables, Promise<unknown>>();

function atomicallyOver(t: Tables) {
  return <T>(work: (storage: Storage) => Promise<T>): Promise<T> => {
    const turn = (transactionTurns.get(t) ?? Promise.resolve()).then(() => runAtomically(t, work));
    transactionTurns.set(
      t,
      turn.catch(() => undefined),
    );
    return turn;
  };
}

async function runAtomically<T>(t: Tables, work: (storage: Storage) => Promise<T>): Promise<T> {
  const snapshot = copy(t);
  const working = copy(t);
  const result = await work(storageOver(working));
  for (const name of Object.keys(t) as (keyof Tables)[]) {
    const target = t[name] as Map<string, unknown>;
    const before = snapshot[name] as Map<string, unknown>;
    const after = working[name] as Map<string, unknown>;
    for (const key of new Set([...before.keys(), ...after.keys()])) {
      if (isDeepStrictEqual(before.get(key), after.get(key))) continue;
      if (after.has(key)) target.set(key, after.get(key));
      else target.delete(key);
    }
  }
  return result;
}

function storageOver(t: Tables): Storage {
  return {
    clients: clients(t),
    users: users(t),
    scopes: scopes(t),
    resources: resources(t),
    grants: grants(t),
    codes: codes(t),
    refreshTokens: refreshTokens(t),
    revocations: revocations(t),
    signingKeys: signingKeys(t),
    throttle: throttle(t),
    browserSessions: browserSessions(t),
    purge: noPurge,
    rateLimits: rateLimits(t),
    macNonces: macNonces(t),
    usedJtis: usedJtis(t),
    initialAccessTokens: initialAccessTokens(t),
    pushedRequests: pushedRequests(t),
    deviceAuthorizations: deviceAuthorizations(t),
    passkeys: passkeys(t),
    identityProviders: identityProviders(t),
    federatedLinks: federatedLinks(t),
    webAuthnChallenges: webAuthnChallenges(t),
    mailLinks: mailLinks(t),
    secondFactors: secondFactors(t),
    auditEvents: auditEvents(t),
    metricSamples: metricSamples(t),
    atomically: atomicallyOver(t),
    async ping() {},
    async close() {},
  };
}
