import { isDeepStrictEqual } from 'node:util';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it, type TestContext } from 'node:test';
import type {
  AuditEvent,
  AuthorizationCode,
  Client,
  DeviceAuthorization,
  Grant,
  GrantType,
  FederatedLink,
  IdentityProvider,
  Passkey,
  MailLink,
  PushedAuthorizationRequest,
  RefreshToken,
  SigningKeyRecord,
  User,
} from '../../src/core/model.js';
import type { AuditEventFilter, GatehouseStore, GrantOwnerFilter, Storage } from '../../src/core/ports.js';
import { createSqlStorage, type SqlStorage } from '../../src/storage/sql/index.js';
import { randomToken, sha256 } from '../../src/shared/crypto.js';
import { backends, createTestStore, type Backend, type TestStore } from '../helpers/backends.js';
import { memoryStorage } from '../helpers/fakes/memory-storage.js';
import { inTransaction, runSql } from '../helpers/store-sql.js';
import { waitFor } from '../helpers/wait.js';

/**
 * One contract for every Storage implementation, exercised through the Storage interface only
 * (src/core/ports.ts). Each backend runs the same cases on a fresh store.
 */
const NOW = 1_800_000_000;

function makeClient(overrides: Partial<Client> = {}): Client {
  return {
    id: randomUUID(),
    name: 'contract client',
    secretHash: sha256(randomToken('cs_')),
    redirectUris: ['https://app.example/cb'],
    grantTypes: ['authorization_code', 'refresh_token'],
    scopes: ['read', 'write'],
    tokenType: 'bearer',
    isPublic: false,
    idTokenSignedResponseAlg: 'RS256',
    postLogoutRedirectUris: [],
    tokenEndpointAuthMethod: overrides.isPublic === true ? 'none' : 'client_secret_basic',
    jwks: null,
    jwksUri: null,
    registration: 'operator',
    registrationAccessTokenHash: null,
    registrationScopes: null,
    firstGrantedAt: null,
    documentExpiresAt: null,
    requirePushedAuthorizationRequests: false,
    dpopBoundAccessTokens: false,
    requireMfa: false,
    identityProviders: null,
    tokenExchangeTargets: [],
    createdAt: NOW,
    updatedAt: NOW,
    ...overrides,
  };
}

function makeUser(overrides: Partial<User> = {}): User {
  return {
    id: randomUUID(),
    username: `user-${randomUUID()}`,
    passwordHash: '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2g',
    email: null,
    name: null,
    admin: false,
    emailVerified: false,
    disabled: false,
    createdAt: NOW,
    updatedAt: NOW,
    ...overrides,
  };
}

function makeGrant(client: Client, user: User, overrides: Partial<Grant> = {}): Grant {
  return {
    id: randomUUID(),
    clientId: client.id,
    userId: user.id,
    scope: ['read'],
    createdAt: NOW,
    expiresAt: null,
    revokedAt: null,
    ...overrides,
  };
}

function makeCode(grant: Grant, overrides: Partial<AuthorizationCode> = {}): AuthorizationCode {
  return {
    hash: sha256(randomToken('ac_')),
    clientId: grant.clientId,
    userId: grant.userId,
    grantId: grant.id,
    redirectUri: 'https://app.example/cb',
    scope: grant.scope,
    codeChallenge: null,
    codeChallengeMethod: null,
    createdAt: NOW,
    expiresAt: NOW + 600,
    consumedAt: null,
    nonce: null,
    authTime: null,
    sid: null,
    resources: [],
    dpopJkt: null,
    ...overrides,
  };
}

function makeRefreshToken(grant: Grant, overrides: Partial<RefreshToken> = {}): RefreshToken {
  return {
    hash: sha256(randomToken('rt_')),
    grantId: grant.id,
    clientId: grant.clientId,
    userId: grant.userId,
    scope: grant.scope,
    authTime: null,
    sid: null,
    resources: [],
    dpopJkt: null,
    createdAt: NOW,
    expiresAt: NOW + 86400,
    retiredAt: null,
    ...overrides,
  };
}

function makeSigningKey(createdAt: number): SigningKeyRecord {
  const kid = randomUUID();
  return {
    kid,
    alg: 'ES256',
    publicJwk: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y', kid, alg: 'ES256', use: 'sig' },
    privateKeySealed: 'sealed-' + kid,
    createdAt,
    retiredAt: null,
    revokedAt: null,
  };
}

/**
 * SQLite, PostgreSQL, and the in-memory fake every unit test runs on (test/helpers/fakes/memory-storage.ts),
 * held to the same contract.
 */
const contractBackends: (Backend | 'memory')[] = [...backends(), 'memory'];

for (const backend of contractBackends) {
  describe(`storage contract (${backend})`, () => {
    /**
     * Cases about SQL itself (migration tables, transactions, rows as an older version wrote them):
     * registered for SQLite and PostgreSQL only.
     */
    const sqlIt = (name: string, body: () => Promise<void>) => {
      if (backend !== 'memory') it(name, body);
    };
    /** The SQL store (unset on the in-memory one, where only `storage` and `other` exist). */
    let store: TestStore;
    let storage: GatehouseStore;
    /** A second handle on the same database: what another process sees. */
    let other: GatehouseStore;
    /**
     * The handles concurrent calls are spread over. PostgreSQL: both, each a pool of connections.
     * SQLite: one, whose driver queues every statement; two better-sqlite3 connections in ONE process
     * cannot race transactions (the waiting one blocks the event loop the holder needs to commit, then
     * fails with SQLITE_BUSY), which only separate processes can do, where busy_timeout handles it.
     */
    let racers: GatehouseStore[];
    before(async () => {
      if (backend === 'memory') {
        // One process's memory: every handle is the same store.
        storage = memoryStorage();
        other = storage;
        racers = [storage];
        return;
      }
      store = await createTestStore(backend);
      storage = store.storage;
      other = store.reopen();
      racers = backend === 'postgres' ? [storage, other] : [storage];
    });
    after(async () => {
      if (backend !== 'memory') await store.cleanup();
    });

    const racer = (i: number): GatehouseStore => racers[i % racers.length] ?? storage;

    /** Makes `times` calls at once, spread over the racers; their answers, in the calls' order. */
    function race<T>(call: (store: GatehouseStore, i: number) => Promise<T>, times = 20): Promise<T[]> {
      return Promise.all(Array.from({ length: times }, (_, i) => call(racer(i), i)));
    }

    /**
     * Rows as a version before a migration wrote them, without the columns it added, to show they read
     * with the columns' defaults. Each returns the row's key.
     */
    async function insertOldClient(): Promise<string> {
      const id = randomUUID();
      await runSql(
        store.storage,
        sql`INSERT INTO clients (id, name, secret_hash, redirect_uris, grant_types, scopes, token_type,
          is_public, created_at, updated_at) VALUES (${id}, 'old', ${sha256('s')}, '[]',
          '["client_credentials"]', '', 'bearer', 0, ${NOW}, ${NOW})`,
      );
      return id;
    }
    async function insertOldCode(grant: Grant): Promise<string> {
      const hash = sha256(randomToken('ac_'));
      await runSql(
        store.storage,
        sql`INSERT INTO authorization_codes (hash, client_id, user_id, grant_id, redirect_uri, scope,
          created_at, expires_at) VALUES (${hash}, ${grant.clientId}, ${grant.userId}, ${grant.id},
          'https://app.example/cb', 'read', ${NOW}, ${NOW + 600})`,
      );
      return hash;
    }
    async function insertOldRefreshToken(grant: Grant): Promise<string> {
      const hash = sha256(randomToken('rt_'));
      await runSql(
        store.storage,
        sql`INSERT INTO refresh_tokens (hash, grant_id, client_id, user_id, scope, created_at)
          VALUES (${hash}, ${grant.id}, ${grant.clientId}, ${grant.userId}, 'read', ${NOW})`,
      );
      return hash;
    }

    /** A stored client, user and grant to hang codes and tokens on. */
    async function seedGrant(overrides: Partial<Grant> = {}) {
      const client = makeClient();
      const user = makeUser();
      await storage.clients.insert(client);
      assert.equal(await storage.users.insert(user), true);
      const grant = makeGrant(client, user, overrides);
      await storage.grants.insert(grant);
      return { client, user, grant };
    }

    sqlIt('names the migrations not applied yet', async () => {
      const another = store.reopen();
      assert.deepEqual(await store.storage.pendingMigrations(), []);
      const rows = await runSql(
        store.storage,
        sql<{ name: string; timestamp: string }>`
          SELECT name, timestamp FROM kysely_migration ORDER BY name DESC LIMIT 1`,
      );
      const last = rows[0];
      assert.ok(last !== undefined);
      await runSql(store.storage, sql`DELETE FROM kysely_migration WHERE name = ${last.name}`);
      try {
        assert.deepEqual(await another.pendingMigrations(), [last.name]);
      } finally {
        await runSql(
          store.storage,
          sql`INSERT INTO kysely_migration (name, timestamp) VALUES (${last.name}, ${last.timestamp})`,
        );
      }
      assert.deepEqual(await another.pendingMigrations(), []);
    });

    sqlIt('migrates a current store at once and refuses one a newer Gatehouse migrated', async () => {
      assert.deepEqual(await store.reopen().migrate(), []);
      await runSql(
        store.storage,
        sql`INSERT INTO kysely_migration (name, timestamp) VALUES ('9999-from-a-newer-release', ${new Date().toISOString()})`,
      );
      try {
        await assert.rejects(store.reopen().migrate(), /9999-from-a-newer-release|missing/);
      } finally {
        await runSql(
          store.storage,
          sql`DELETE FROM kysely_migration WHERE name = '9999-from-a-newer-release'`,
        );
      }
    });

    it('answers ping', async () => {
      await storage.ping();
    });

    describe('lifecycle', () => {
      it('a migrated store exists, has nothing pending, and migrating it again applies nothing', async () => {
        assert.equal(await storage.exists(), true);
        assert.deepEqual(await other.pendingMigrations(), []);
        assert.deepEqual(await storage.migrate(), []);
      });

      it('keeps the first secret check value written: writers racing on a store without one all read the winner', async () => {
        assert.equal(await storage.secretCheck.read(), undefined);
        const stored = await race((store, i) => store.secretCheck.write(`check-${i}`, NOW + i), 10);
        const winner = stored[0];
        assert.ok(winner !== undefined && /^check-\d$/.test(winner), String(winner));
        assert.deepEqual(
          stored,
          stored.map(() => winner),
        );
        assert.equal(await other.secretCheck.read(), winner);
        assert.equal(await storage.secretCheck.write('later', NOW + 100), winner);
      });
    });

    describe('clients', () => {
      it('round-trips every field, including a public client without secret', async () => {
        const confidential = makeClient({ tokenType: 'mac', scopes: [] });
        const pub = makeClient({
          secretHash: null,
          isPublic: true,
          redirectUris: ['http://127.0.0.1/cb', 'https://a.example/x'],
        });
        await storage.clients.insert(confidential);
        await storage.clients.insert(pub);
        assert.deepEqual(await storage.clients.get(confidential.id), confidential);
        assert.deepEqual(await other.clients.get(pub.id), pub);
        assert.equal(await storage.clients.get('no-such-client'), undefined);
      });

      it('refuses a second client with the same id', async () => {
        const client = makeClient();
        await storage.clients.insert(client);
        await assert.rejects(storage.clients.insert({ ...client, name: 'copy' }));
        assert.equal((await storage.clients.get(client.id))?.name, client.name);
      });

      it('lists with name and grant-type filters, totals and pagination', async () => {
        const name = `list-${randomUUID()}`;
        const grantTypes: GrantType[][] = [
          ['client_credentials'],
          ['password'],
          ['client_credentials', 'password'],
        ];
        const made: Client[] = [];
        for (let i = 0; i < 5; i++) {
          const client = makeClient({
            name,
            grantTypes: grantTypes[i % 3] ?? ['client_credentials'],
            createdAt: NOW + i,
          });
          made.push(client);
          await storage.clients.insert(client);
        }
        const all = await storage.clients.list({ name, limit: 100, offset: 0 });
        assert.equal(all.total, 5);
        assert.deepEqual(
          all.items.map((c) => c.id),
          made.map((c) => c.id),
          'ordered by creation time',
        );
        const page = await storage.clients.list({ name, limit: 2, offset: 2 });
        assert.equal(page.total, 5, 'the total ignores pagination');
        assert.deepEqual(
          page.items.map((c) => c.id),
          made.slice(2, 4).map((c) => c.id),
        );
        const beyond = await storage.clients.list({ name, limit: 2, offset: 10 });
        assert.deepEqual(beyond, { items: [], total: 5 });

        const password = await storage.clients.list({ name, grantType: 'password', limit: 100, offset: 0 });
        assert.equal(password.total, 3);
        assert.ok(password.items.every((c) => c.grantTypes.includes('password')));
        // "password" must not match a longer grant-type name, nor a substring one.
        const code = await storage.clients.list({
          name,
          grantType: 'authorization_code',
          limit: 100,
          offset: 0,
        });
        assert.equal(code.total, 0);
        const none = await storage.clients.list({ name: `${name}-absent`, limit: 100, offset: 0 });
        assert.deepEqual(none, { items: [], total: 0 });
        const unfiltered = await storage.clients.list({ limit: 1000, offset: 0 });
        assert.ok(unfiltered.total >= 5);
      });

      it('updates and deletes, answering false for an unknown id', async () => {
        const client = makeClient();
        await storage.clients.insert(client);
        const changed = { ...client, name: 'renamed', scopes: ['read'], updatedAt: NOW + 10 };
        assert.equal(await storage.clients.update(changed, 'keep'), true);
        assert.deepEqual(await other.clients.get(client.id), changed);
        assert.equal(await storage.clients.update(makeClient(), 'keep'), false);
        assert.equal(await storage.clients.delete(client.id), true);
        assert.equal(await storage.clients.get(client.id), undefined);
        assert.equal(await storage.clients.delete(client.id), false);
      });

      it('keeps a secret rotated meanwhile when settings read before it are written', async () => {
        const client = makeClient();
        await storage.clients.insert(client);
        // Another process rotates the secret between this one's read and its write of new settings.
        const rotated = { ...client, secretHash: sha256('the new secret'), updatedAt: NOW + 5 };
        assert.equal(await other.clients.update(rotated, 'replace'), true);
        assert.equal(await storage.clients.update({ ...client, name: 'renamed' }, 'keep'), true);
        const stored = await other.clients.get(client.id);
        assert.equal(stored?.name, 'renamed');
        assert.equal(stored?.secretHash, sha256('the new secret'), 'the rotated secret survives');
      });

      it('deleting a client removes its grants, codes and refresh tokens', async () => {
        const { client, grant } = await seedGrant();
        const code = makeCode(grant);
        const token = makeRefreshToken(grant);
        await storage.codes.insert(code);
        await storage.refreshTokens.insert(token);
        assert.equal(await storage.clients.delete(client.id), true);
        assert.equal(await storage.grants.get(grant.id), undefined);
        assert.equal(await storage.codes.get(code.hash), undefined);
        assert.equal(await storage.refreshTokens.get(token.hash), undefined);
      });
    });

    describe('users', () => {
      it('inserts, and answers false (storing nothing) for a duplicate user name', async () => {
        const user = makeUser();
        assert.equal(await storage.users.insert(user), true);
        const duplicate = makeUser({ username: user.username });
        assert.equal(await storage.users.insert(duplicate), false);
        assert.equal(await other.users.insert(makeUser({ username: user.username })), false);
        assert.equal(await storage.users.get(duplicate.id), undefined);
        assert.deepEqual(await storage.users.get(user.id), user);
        assert.deepEqual(await storage.users.getByUsername(user.username), user);
        assert.equal(await storage.users.getByUsername(user.username + 'x'), undefined);
      });

      it('lists with totals and pagination, updates and deletes', async () => {
        const before = await storage.users.list(1000, 0);
        const made = [makeUser({ createdAt: NOW + 100 }), makeUser({ createdAt: NOW + 101 })];
        for (const user of made) assert.equal(await storage.users.insert(user), true);
        const after = await storage.users.list(1000, 0);
        assert.equal(after.total, before.total + 2);
        const last = await storage.users.list(1, after.total - 1);
        assert.equal(last.items.length, 1);
        assert.equal(last.total, after.total);
        const [first] = made;
        assert.ok(first);
        const updated = { ...first, passwordHash: 'new-hash', updatedAt: NOW + 200 };
        assert.equal(await storage.users.update(updated), true);
        assert.deepEqual(await other.users.get(first.id), updated);
        assert.equal(await storage.users.update(makeUser()), false);
        assert.equal(await storage.users.delete(first.id), true);
        assert.equal(await storage.users.get(first.id), undefined);
        assert.equal(await storage.users.delete(first.id), false);
      });

      it('deleting a user removes their grants', async () => {
        const { user, grant } = await seedGrant();
        assert.equal(await storage.users.delete(user.id), true);
        assert.equal(await storage.grants.get(grant.id), undefined);
      });
    });

    describe('scopes', () => {
      it('ensure adds missing scopes and keeps existing descriptions; upsert replaces them', async () => {
        const name = `scope-${randomUUID().slice(0, 8)}`;
        await storage.scopes.ensure([{ name, description: 'first', createdAt: NOW }]);
        await storage.scopes.ensure([
          { name, description: 'second', createdAt: NOW },
          { name: `${name}-b`, description: 'b', createdAt: NOW },
        ]);
        await storage.scopes.ensure([]);
        assert.equal((await storage.scopes.get(name))?.description, 'first');
        assert.equal((await storage.scopes.get(`${name}-b`))?.description, 'b');
        await storage.scopes.upsert({ name, description: 'third', createdAt: NOW });
        assert.equal((await other.scopes.get(name))?.description, 'third');
        const names = (await storage.scopes.list()).map((s) => s.name);
        assert.deepEqual(names, [...names].sort(), 'listed by name');
        assert.ok(names.includes(name));
        assert.equal(await storage.scopes.delete(name), true);
        assert.equal(await storage.scopes.get(name), undefined);
        assert.equal(await storage.scopes.delete(name), false);
      });

      it('pages scopes by name, searched by a part of the name (ASCII case ignored, wildcards literal)', async () => {
        const tag = `pg${randomUUID().slice(0, 8)}`;
        const names = ['a', 'b', 'c', 'd_x', 'dyx'].map((suffix) => `${tag}:${suffix}`);
        await storage.scopes.ensure(names.map((name) => ({ name, description: name, createdAt: NOW })));
        const first = await other.scopes.page({ search: tag.toUpperCase(), limit: 2, offset: 0 });
        assert.deepEqual(
          first.items.map((s) => s.name),
          names.slice(0, 2),
        );
        assert.equal(first.total, 5);
        const last = await other.scopes.page({ search: tag, limit: 2, offset: 4 });
        assert.deepEqual(
          last.items.map((s) => s.name),
          [names[4]],
        );
        // `_` and `%` are themselves, not LIKE's wildcards.
        const literal = await storage.scopes.page({ search: `${tag}:d_`, limit: 10, offset: 0 });
        assert.deepEqual(
          literal.items.map((s) => s.name),
          [`${tag}:d_x`],
        );
        assert.equal((await storage.scopes.page({ search: `${tag}%`, limit: 10, offset: 0 })).total, 0);
        assert.equal((await storage.scopes.page({ search: 'a\u0000b', limit: 10, offset: 0 })).total, 0);
        const all = await storage.scopes.page({ limit: 100, offset: 0 });
        assert.ok(all.total >= 5);
        assert.deepEqual(
          all.items.map((s) => s.name),
          (await storage.scopes.list()).map((s) => s.name).slice(0, 100),
        );
        for (const name of names) await storage.scopes.delete(name);
      });
    });

    describe('grants', () => {
      it('round-trips and lists by user and by client, newest first', async () => {
        const { client, user, grant } = await seedGrant({ expiresAt: NOW + 3600, scope: ['read', 'write'] });
        assert.deepEqual(await storage.grants.get(grant.id), grant);
        const newer = makeGrant(client, user, { createdAt: NOW + 5 });
        await storage.grants.insert(newer);
        assert.deepEqual(
          (await storage.grants.listByUser(user.id)).map((g) => g.id),
          [newer.id, grant.id],
        );
        assert.deepEqual(
          (await other.grants.listByClient(client.id)).map((g) => g.id),
          [newer.id, grant.id],
        );
        assert.deepEqual(await storage.grants.listByUser('nobody'), []);
        assert.equal(await storage.grants.get('no-such-grant'), undefined);
      });

      it('pages the standing grants of a client or a user, newest first, with their total', async () => {
        const { client, user, grant } = await seedGrant({ createdAt: NOW });
        const otherUser = makeUser();
        await storage.users.insert(otherUser);
        const newer = makeGrant(client, user, { createdAt: NOW + 5 });
        const newest = makeGrant(client, otherUser, { createdAt: NOW + 9 });
        const revoked = makeGrant(client, user, { createdAt: NOW + 7, revokedAt: NOW + 8 });
        const expired = makeGrant(client, user, { createdAt: NOW + 6, expiresAt: NOW + 100 });
        const lasting = makeGrant(client, user, { createdAt: NOW + 1, expiresAt: NOW + 101 });
        for (const g of [newer, newest, revoked, expired, lasting]) await storage.grants.insert(g);
        const at = NOW + 100;
        const ids = async (owner: GrantOwnerFilter, limit: number, offset: number) => {
          const page = await other.grants.pageStanding(owner, at, limit, offset);
          return { ids: page.items.map((g) => g.id), total: page.total };
        };
        assert.deepEqual(await ids({ clientId: client.id }, 2, 0), { ids: [newest.id, newer.id], total: 4 });
        assert.deepEqual(await ids({ clientId: client.id }, 2, 2), { ids: [lasting.id, grant.id], total: 4 });
        assert.deepEqual(await ids({ userId: user.id }, 10, 0), {
          ids: [newer.id, lasting.id, grant.id],
          total: 3,
        });
        assert.deepEqual(await ids({ userId: 'nobody' }, 10, 0), { ids: [], total: 0 });
        assert.deepEqual(await ids({ userId: otherUser.id, clientId: client.id }, 10, 0), {
          ids: [newest.id],
          total: 1,
        });
        assert.deepEqual((await other.grants.pageStanding({ clientId: client.id }, at, 1, 0)).items, [
          newest,
        ]);
      });

      it('revoke marks the grant and retires its live refresh tokens, once', async () => {
        const { client, user, grant } = await seedGrant();
        const live = makeRefreshToken(grant);
        const alreadyRetired = makeRefreshToken(grant, { retiredAt: NOW + 1 });
        const otherGrant = makeGrant(client, user);
        await storage.grants.insert(otherGrant);
        const untouched = makeRefreshToken(otherGrant);
        for (const token of [live, alreadyRetired, untouched]) await storage.refreshTokens.insert(token);

        assert.equal(await storage.grants.revoke(grant.id, NOW + 50), true);
        assert.equal((await other.grants.get(grant.id))?.revokedAt, NOW + 50);
        assert.equal((await storage.refreshTokens.get(live.hash))?.retiredAt, NOW + 50);
        assert.equal((await storage.refreshTokens.get(alreadyRetired.hash))?.retiredAt, NOW + 1);
        assert.equal((await storage.refreshTokens.get(untouched.hash))?.retiredAt, null);
        assert.equal((await storage.grants.get(otherGrant.id))?.revokedAt, null);

        // A second revocation changes nothing and says so.
        assert.equal(await storage.grants.revoke(grant.id, NOW + 99), false);
        assert.equal((await storage.grants.get(grant.id))?.revokedAt, NOW + 50);
        assert.equal(await storage.grants.revoke('no-such-grant', NOW), false);
      });
    });

    describe('authorization codes', () => {
      it('round-trips and is consumed once', async () => {
        const { grant } = await seedGrant();
        const code = makeCode(grant, { codeChallenge: 'c'.repeat(43), codeChallengeMethod: 'S256' });
        await storage.codes.insert(code);
        assert.deepEqual(await storage.codes.get(code.hash), code);
        const consumed = await storage.codes.consume(code.hash, NOW + 1);
        assert.deepEqual(consumed, { ...code, consumedAt: NOW + 1 });
        assert.equal(await storage.codes.consume(code.hash, NOW + 2), undefined);
        assert.equal((await other.codes.get(code.hash))?.consumedAt, NOW + 1);
        assert.equal(await storage.codes.consume(sha256('unknown'), NOW), undefined);
        assert.equal(await storage.codes.get(sha256('unknown')), undefined);
      });

      it('reads a code together with its grant, as the grant stands now', async () => {
        const { grant } = await seedGrant({ scope: ['read', 'write'], expiresAt: NOW + 600 });
        const code = makeCode(grant);
        await storage.codes.insert(code);
        assert.deepEqual(await storage.codes.getWithGrant(code.hash), { code, grant });
        await storage.grants.revoke(grant.id, NOW + 5);
        assert.deepEqual(await other.codes.getWithGrant(code.hash), {
          code,
          grant: { ...grant, revokedAt: NOW + 5 },
        });
        assert.equal(await storage.codes.getWithGrant(sha256('unknown')), undefined);
      });

      // PostgreSQL's only: a SQLite connection is the process's own, and its statements follow the schema.
      if (backend === 'postgres')
        it('reads on beside a newer version adding a column and taking it away, and through a pooler that loses its prepared statements', async () => {
          // One connection, so that its prepared statements can be listed (they are per session).
          const single = createSqlStorage({
            databaseUrl: store.databaseUrl,
            dataDir: store.dataDir,
            schema: store.schema,
            poolSize: 1,
          });
          const prepared = async () =>
            (
              await runSql(
                single,
                sql<{
                  name: string;
                }>`SELECT name FROM pg_prepared_statements WHERE name LIKE 'gatehouse%' ORDER BY name`,
              )
            ).map((row) => row.name.replace(/^gatehouse_[0-9a-f]+_/, 'generation '));
          try {
            const { grant } = await seedGrant();
            const [first, second] = [makeCode(grant), makeCode(grant)];
            await storage.codes.insert(first!);
            await storage.codes.insert(second!);
            // Its `c.*` is the statement's result type, fixed when it was prepared.
            assert.deepEqual(await single.codes.getWithGrant(first!.hash), { code: first, grant });
            assert.deepEqual(await prepared(), ['generation 0']);
            // What `gatehouse migrate` of a newer version does while this one serves (docs/deployment.md).
            await runSql(store.storage, sql`ALTER TABLE authorization_codes ADD COLUMN added_later integer`);
            assert.deepEqual(await single.codes.getWithGrant(first!.hash), { code: first, grant });
            // Prepared again under its next name (whatever became of the refused one).
            assert.ok((await prepared()).includes('generation 1'));
            // A write returning every column, refused the same way, runs once, then again: once in all.
            await runSql(store.storage, sql`ALTER TABLE authorization_codes DROP COLUMN added_later`);
            assert.deepEqual(await single.codes.consume(second!.hash, NOW + 1), {
              ...second,
              consumedAt: NOW + 1,
            });
            assert.equal(await single.codes.consume(second!.hash, NOW + 2), undefined);
            assert.deepEqual(await single.codes.getWithGrant(first!.hash), { code: first, grant });
            // A pooler in transaction mode that does not track prepared statements hands a statement
            // a server connection that never prepared it: what DEALLOCATE makes of this one.
            await runSql(single, sql`DEALLOCATE ALL`);
            assert.deepEqual(await single.codes.getWithGrant(first!.hash), { code: first, grant });
            // From then on this store sends its statements unnamed: none is prepared again.
            assert.deepEqual(
              await single.clients.get(grant.clientId),
              await storage.clients.get(grant.clientId),
            );
            assert.deepEqual(await single.grants.listByUser(grant.userId), [grant]);
            assert.deepEqual(await prepared(), []);
          } finally {
            await single.close();
          }
        });

      sqlIt(
        'answers the same while a transaction is open (by Kysely) as otherwise (SQLite: by prepared queries)',
        async () => {
          const { client, user, grant } = await seedGrant();
          const session = {
            hash: sha256(randomUUID()),
            userId: user.id,
            createdAt: NOW,
            expiresAt: NOW + 60,
          };
          await storage.browserSessions.insert(session);
          const [first, second, third, fourth] = [1, 2, 3, 4].map(() => makeCode(grant));
          await storage.codes.insert(first!);
          await storage.codes.insert(second!);
          // Each read and write of the code flow, on one handle, started at once.
          const flow = (on: Storage, code: AuthorizationCode, fresh: AuthorizationCode) =>
            Promise.all([
              on.clients.get(client.id),
              on.grants.listByUser(user.id),
              on.browserSessions.signedIn(session.hash, NOW),
              on.codes.getWithGrant(code.hash),
              on.codes.consume(code.hash, NOW + 1),
              on.codes.insert(fresh),
              on.browserSessions.signedInWithGrants(session.hash, NOW, client.id),
            ]);
          // Started while a transaction is open on the connection: they wait for it to end (SQLite).
          let during: ReturnType<typeof flow> | undefined;
          await inTransaction(store.storage, async (run) => {
            await run(sql`UPDATE users SET updated_at = updated_at WHERE id = ${user.id}`);
            during = flow(storage, first!, third!);
            await new Promise((resolve) => setTimeout(resolve, 20));
          });
          // The other handle has read none of these yet (no client cached).
          const answers = [await during!, await flow(other, second!, fourth!)];
          for (const [i, code] of [first!, second!].entries()) {
            const [read, ...rest] = (answers[i] ?? []).splice(3, 1);
            assert.deepEqual(rest, []);
            // Started together, the read and the consume of one code may run in either order (PostgreSQL
            // gives them two connections): the read sees the code as it was before or after.
            const consumed = { ...code, consumedAt: NOW + 1 };
            assert.ok(
              isDeepStrictEqual(read, { code, grant }) || isDeepStrictEqual(read, { code: consumed, grant }),
              JSON.stringify(read),
            );
            assert.deepEqual(answers[i], [
              client,
              [grant],
              { session, user },
              consumed,
              undefined,
              { session, user, grants: [grant] },
            ]);
            assert.equal(await storage.codes.consume(code.hash, NOW + 2), undefined);
          }
          assert.deepEqual(await other.codes.getWithGrant(third!.hash), { code: third, grant });
          assert.deepEqual(await storage.codes.getWithGrant(fourth!.hash), { code: fourth, grant });
          assert.equal(await other.browserSessions.signedIn(session.hash, NOW + 60), undefined);
          assert.equal(await other.browserSessions.signedIn(sha256('unknown'), NOW), undefined);
          assert.equal(
            await other.browserSessions.signedInWithGrants(session.hash, NOW + 60, client.id),
            undefined,
          );
          assert.equal(await other.clients.get('no-such-client'), undefined);
        },
      );

      sqlIt('keeps statements made while another transaction is open out of that transaction', async () => {
        const { grant } = await seedGrant();
        const code = makeCode(grant);
        let pending: Promise<unknown> | undefined;
        await assert.rejects(
          inTransaction(store.storage, async (run) => {
            await run(sql`UPDATE grants SET revoked_at = ${NOW} WHERE id = ${grant.id}`);
            // Another request's statements, started while the transaction waits on I/O.
            pending = Promise.all([storage.codes.insert(code), storage.grants.listByUser(grant.userId)]);
            await new Promise((resolve) => setTimeout(resolve, 20));
            throw new Error('rolled back');
          }),
          /rolled back/,
        );
        const [, seen] = (await pending) as [void, Grant[]];
        // Neither undone by the rollback nor reading the transaction's uncommitted update.
        assert.deepEqual(await storage.codes.getWithGrant(code.hash), { code, grant });
        assert.equal(seen[0]?.revokedAt, null);
      });

      it('consume is atomic: of 20 concurrent calls exactly one gets the code', async () => {
        const { grant } = await seedGrant();
        const code = makeCode(grant);
        await storage.codes.insert(code);
        const results = await race((store, i) => store.codes.consume(code.hash, NOW + i));
        const winners = results.filter((r) => r !== undefined);
        assert.equal(winners.length, 1);
        assert.equal((await storage.codes.get(code.hash))?.consumedAt, winners[0]?.consumedAt);
      });
    });

    describe('browser sessions', () => {
      it('names the signed-in user only while the session lives', async () => {
        const { user } = await seedGrant();
        const session = {
          hash: sha256(`bs-${user.id}`),
          userId: user.id,
          createdAt: NOW,
          expiresAt: NOW + 60,
        };
        await storage.browserSessions.insert(session);
        assert.deepEqual(await storage.browserSessions.get(session.hash, NOW), session);
        assert.deepEqual(await other.browserSessions.signedIn(session.hash, NOW + 59), { session, user });
        assert.equal(await storage.browserSessions.signedIn(session.hash, NOW + 60), undefined);
        assert.equal(await storage.browserSessions.signedIn(sha256('unknown'), NOW), undefined);
        assert.equal(await storage.browserSessions.delete(session.hash), true);
        assert.equal(await storage.browserSessions.signedIn(session.hash, NOW), undefined);
        assert.equal(await storage.browserSessions.delete(session.hash), false);
      });

      it('keeps the methods a session records, and none on a session that records none (decision 30)', async () => {
        const { client, user } = await seedGrant();
        const session = {
          hash: sha256(randomUUID()),
          userId: user.id,
          createdAt: NOW,
          expiresAt: NOW + 60,
          authentications: [
            { method: 'password', at: NOW - 5 },
            { method: 'one-time-code', at: NOW },
          ],
        };
        await storage.browserSessions.insert(session);
        assert.deepEqual(await other.browserSessions.get(session.hash, NOW), session);
        assert.deepEqual(await other.browserSessions.signedIn(session.hash, NOW), { session, user });
        assert.deepEqual(
          (await other.browserSessions.signedInWithGrants(session.hash, NOW, client.id))?.session,
          session,
        );
        const bare = { hash: sha256(randomUUID()), userId: user.id, createdAt: NOW, expiresAt: NOW + 60 };
        await storage.browserSessions.insert(bare);
        const read = await other.browserSessions.signedIn(bare.hash, NOW);
        assert.deepEqual(read?.session, bare);
        assert.equal(read !== undefined && 'authentications' in read.session, false);
      });

      it('reads with the session the user’s grants to one client, newest first, revoked and expired too', async () => {
        const { client, user, grant: older } = await seedGrant({ revokedAt: NOW - 5, expiresAt: NOW + 600 });
        const newer = makeGrant(client, user, { createdAt: older.createdAt + 10, expiresAt: NOW - 1 });
        await storage.grants.insert(newer);
        // Another client's grant, and another user's grant to this client: neither is read.
        const { client: otherClient } = await seedGrant();
        await storage.grants.insert(makeGrant(otherClient, user));
        const { user: stranger } = await seedGrant();
        await storage.grants.insert(makeGrant(client, stranger));
        const session = { hash: sha256(randomUUID()), userId: user.id, createdAt: NOW, expiresAt: NOW + 60 };
        await storage.browserSessions.insert(session);

        assert.deepEqual(await other.browserSessions.signedInWithGrants(session.hash, NOW, client.id), {
          session,
          user,
          grants: [newer, older],
        });
        const unconsented = makeClient();
        await storage.clients.insert(unconsented);
        assert.deepEqual(
          await storage.browserSessions.signedInWithGrants(session.hash, NOW + 59, unconsented.id),
          { session, user, grants: [] },
        );
        assert.equal(
          await storage.browserSessions.signedInWithGrants(session.hash, NOW + 60, client.id),
          undefined,
        );
        assert.equal(
          await storage.browserSessions.signedInWithGrants(sha256('unknown'), NOW, client.id),
          undefined,
        );
      });
      it('keeps a session’s sid, device, address and last activity (decision 37), and lists the user’s live ones', async () => {
        const { user } = await seedGrant();
        const { user: stranger } = await seedGrant();
        const device = {
          sid: sha256(randomUUID()),
          userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0 Safari/537.36 “ü”',
          address: '2001:db8::7',
          lastActiveAt: NOW,
        };
        const first = {
          hash: sha256(randomUUID()),
          userId: user.id,
          createdAt: NOW,
          expiresAt: NOW + 60,
          ...device,
        };
        const second = {
          hash: sha256(randomUUID()),
          userId: user.id,
          createdAt: NOW + 1,
          expiresAt: NOW + 120,
        };
        const gone = { hash: sha256(randomUUID()), userId: user.id, createdAt: NOW - 100, expiresAt: NOW };
        const theirs = {
          hash: sha256(randomUUID()),
          userId: stranger.id,
          createdAt: NOW,
          expiresAt: NOW + 60,
        };
        for (const session of [second, first, gone, theirs]) await storage.browserSessions.insert(session);
        assert.deepEqual(await other.browserSessions.get(first.hash, NOW), first);
        assert.deepEqual((await other.browserSessions.signedIn(first.hash, NOW))?.session, first);
        assert.deepEqual(await other.browserSessions.listByUser(user.id, NOW), [first, second]);
        assert.deepEqual(await other.browserSessions.listByUser(user.id, NOW + 60), [second]);
        assert.deepEqual(await other.browserSessions.listByUser(randomUUID(), NOW), []);
      });

      it('touch writes the last activity only when the recorded one is older than asked', async () => {
        const { user } = await seedGrant();
        const session = {
          hash: sha256(randomUUID()),
          userId: user.id,
          createdAt: NOW,
          expiresAt: NOW + 3600,
        };
        await storage.browserSessions.insert(session);
        await storage.browserSessions.touch(session.hash, NOW + 10, NOW - 290);
        assert.equal((await other.browserSessions.get(session.hash, NOW))?.lastActiveAt, NOW + 10);
        // Not older than staleBefore: unchanged (another process wrote it a moment ago).
        await storage.browserSessions.touch(session.hash, NOW + 20, NOW + 10);
        assert.equal((await other.browserSessions.get(session.hash, NOW))?.lastActiveAt, NOW + 10);
        await storage.browserSessions.touch(session.hash, NOW + 400, NOW + 100);
        assert.equal((await other.browserSessions.get(session.hash, NOW))?.lastActiveAt, NOW + 400);
        await storage.browserSessions.touch(sha256('unknown'), NOW, NOW);
      });

      it('renew moves a live session to a new key with its record, keeping its user and times', async () => {
        const { user } = await seedGrant();
        const session = {
          hash: sha256(randomUUID()),
          userId: user.id,
          createdAt: NOW,
          expiresAt: NOW + 60,
          authentications: [{ method: 'password', at: NOW }],
          userAgent: 'old agent',
          address: '192.0.2.1',
          lastActiveAt: NOW,
        };
        await storage.browserSessions.insert(session);
        const renewal = {
          hash: sha256(randomUUID()),
          sid: 'sid-kept',
          authentications: [
            { method: 'password', at: NOW },
            { method: 'password', at: NOW + 30 },
          ],
          userAgent: 'new agent',
          address: '192.0.2.2',
        };
        assert.equal(await storage.browserSessions.renew(session.hash, NOW + 30, renewal), true);
        assert.equal(await other.browserSessions.get(session.hash, NOW + 30), undefined);
        assert.deepEqual(await other.browserSessions.get(renewal.hash, NOW + 30), {
          userId: user.id,
          createdAt: NOW,
          expiresAt: NOW + 60,
          ...renewal,
          lastActiveAt: NOW + 30,
        });
        // The old key names nothing now; an expired session is not renewed.
        const again = { ...renewal, hash: sha256(randomUUID()) };
        assert.equal(await storage.browserSessions.renew(session.hash, NOW + 31, again), false);
        assert.equal(await storage.browserSessions.renew(renewal.hash, NOW + 60, again), false);
        assert.equal(await other.browserSessions.get(again.hash, NOW), undefined);
      });

      it('ends one of the user’s own sessions only, or all but one (decision 37)', async () => {
        const { user } = await seedGrant();
        const { user: stranger } = await seedGrant();
        const make = (userId: string) => ({
          hash: sha256(randomUUID()),
          userId,
          createdAt: NOW,
          expiresAt: NOW + 60,
        });
        const [a, b, c] = [make(user.id), make(user.id), make(user.id)];
        const theirs = make(stranger.id);
        for (const session of [a, b, c, theirs]) await storage.browserSessions.insert(session);
        // Another user's session is not this user's to end.
        assert.equal(await storage.browserSessions.deleteOfUser(user.id, theirs.hash), false);
        assert.deepEqual(await other.browserSessions.get(theirs.hash, NOW), theirs);
        assert.equal(await storage.browserSessions.deleteOfUser(user.id, b.hash), true);
        assert.equal(await storage.browserSessions.deleteOfUser(user.id, b.hash), false);
        assert.equal(await storage.browserSessions.deleteOthersOfUser(user.id, a.hash), 1);
        assert.deepEqual(await other.browserSessions.listByUser(user.id, NOW), [a]);
        assert.deepEqual(await other.browserSessions.listByUser(stranger.id, NOW), [theirs]);
        assert.equal(await storage.browserSessions.deleteOthersOfUser(user.id, a.hash), 0);
      });
    });

    describe('refresh tokens', () => {
      it('round-trips, rotates and retires', async () => {
        const { grant } = await seedGrant();
        const token = makeRefreshToken(grant, { scope: ['read', 'write'], expiresAt: null });
        await storage.refreshTokens.insert(token);
        assert.deepEqual(await storage.refreshTokens.get(token.hash), token);

        const next = makeRefreshToken(grant, { createdAt: NOW + 10 });
        const retired = await storage.refreshTokens.rotate(token.hash, next, NOW + 10);
        assert.deepEqual(retired, { ...token, retiredAt: NOW + 10 });
        assert.deepEqual(await other.refreshTokens.get(next.hash), next);
        assert.equal((await storage.refreshTokens.get(token.hash))?.retiredAt, NOW + 10);

        // Rotating a retired token stores nothing.
        const late = makeRefreshToken(grant);
        assert.equal(await storage.refreshTokens.rotate(token.hash, late, NOW + 11), undefined);
        assert.equal(await storage.refreshTokens.get(late.hash), undefined);
        const ghost = makeRefreshToken(grant);
        assert.equal(await storage.refreshTokens.rotate(sha256('unknown'), ghost, NOW), undefined);
        assert.equal(await storage.refreshTokens.get(ghost.hash), undefined);

        assert.equal(await storage.refreshTokens.retire(next.hash, NOW + 12), true);
        assert.equal(await storage.refreshTokens.retire(next.hash, NOW + 13), false);
        assert.equal((await storage.refreshTokens.get(next.hash))?.retiredAt, NOW + 12);
      });

      it('rotate is atomic: of 20 concurrent rotations exactly one succeeds and one successor exists', async () => {
        const { grant } = await seedGrant();
        const token = makeRefreshToken(grant);
        await storage.refreshTokens.insert(token);
        const successors = Array.from({ length: 20 }, () => makeRefreshToken(grant));
        const results = await Promise.all(
          successors.map((next, i) => racer(i).refreshTokens.rotate(token.hash, next, NOW + 1)),
        );
        assert.equal(results.filter((r) => r !== undefined).length, 1);
        const stored = await Promise.all(successors.map((next) => storage.refreshTokens.get(next.hash)));
        assert.equal(stored.filter((s) => s !== undefined).length, 1);
        const winner = successors[results.findIndex((r) => r !== undefined)];
        assert.ok(winner);
        assert.deepEqual(await storage.refreshTokens.get(winner.hash), winner);
      });
    });

    describe('dynamic registration (migration 0010-dynamic-registration)', () => {
      it('round-trips how a client was registered, and lists clients by it', async () => {
        const open = makeClient({
          registration: 'open',
          registrationAccessTokenHash: sha256('rat_x'),
          name: `open-${randomUUID()}`,
        });
        const viaToken = makeClient({
          registration: 'token',
          registrationAccessTokenHash: sha256('rat_y'),
          // Migration 0014: the limits the registration was made under.
          registrationScopes: ['openid', 'profile'],
        });
        await storage.clients.insert(open);
        await storage.clients.insert(viaToken);
        assert.deepEqual(await other.clients.get(open.id), open);
        assert.deepEqual(await other.clients.get(viaToken.id), viaToken);
        const listed = await storage.clients.list({ registration: 'open', limit: 1000, offset: 0 });
        assert.ok(listed.items.some((client) => client.id === open.id));
        assert.ok(listed.items.every((client) => client.registration === 'open'));
        assert.equal(listed.total, listed.items.length);
        const named = await storage.clients.list({
          registration: 'token',
          name: open.name,
          limit: 10,
          offset: 0,
        });
        assert.equal(named.total, 0);
        // Any of several ways: every self-registered client, and none for no way at all.
        const selfRegistered = await other.clients.list({
          registration: ['token', 'open'],
          limit: 1000,
          offset: 0,
        });
        assert.ok(selfRegistered.items.some((client) => client.id === open.id));
        assert.ok(selfRegistered.items.some((client) => client.id === viaToken.id));
        assert.ok(selfRegistered.items.every((client) => client.registration !== 'operator'));
        assert.equal((await other.clients.list({ registration: [], limit: 10, offset: 0 })).total, 0);
      });

      it('records a client’s first grant once', async () => {
        const client = makeClient({ registration: 'open' });
        await storage.clients.insert(client);
        await storage.clients.recordFirstGrant(client.id, NOW + 5);
        await other.clients.recordFirstGrant(client.id, NOW + 9);
        assert.equal((await storage.clients.get(client.id))?.firstGrantedAt, NOW + 5);
        await storage.clients.recordFirstGrant('no-such-client', NOW);
      });

      sqlIt(
        'reads a client written before 0010 as an operator’s, with no registration access token',
        async () => {
          const id = await insertOldClient();
          const client = await other.clients.get(id);
          assert.deepEqual(
            [client?.registration, client?.registrationAccessTokenHash, client?.firstGrantedAt],
            ['operator', null, null],
          );
        },
      );

      it('stores initial access tokens by hash, counts registrations under concurrency, deletes them', async () => {
        const token = {
          id: randomUUID(),
          hash: sha256(randomToken('iat_')),
          scopes: ['openid', 'payments'],
          createdAt: NOW,
          expiresAt: NOW + 86_400,
          clientsRegistered: 0,
        };
        const unscoped = {
          ...token,
          id: randomUUID(),
          hash: sha256(randomToken('iat_')),
          scopes: null,
          createdAt: NOW + 1,
        };
        await storage.initialAccessTokens.insert(token);
        await storage.initialAccessTokens.insert(unscoped);
        await assert.rejects(
          storage.initialAccessTokens.insert({ ...unscoped, id: randomUUID() }),
          'hashes are unique',
        );
        assert.deepEqual(await other.initialAccessTokens.getByHash(token.hash), token);
        assert.deepEqual(await other.initialAccessTokens.getByHash(unscoped.hash), unscoped);
        assert.equal(await storage.initialAccessTokens.getByHash(sha256('other')), undefined);
        assert.equal(await storage.initialAccessTokens.getByHash('a\u0000b'), undefined);
        const ids = (await storage.initialAccessTokens.list()).map((t) => t.id);
        assert.ok(ids.indexOf(token.id) < ids.indexOf(unscoped.id), 'oldest first');
        await race((store) => store.initialAccessTokens.countRegistration(token.id));
        assert.equal((await storage.initialAccessTokens.getByHash(token.hash))?.clientsRegistered, 20);
        assert.equal(await storage.initialAccessTokens.delete(token.id), true);
        assert.equal(await other.initialAccessTokens.delete(token.id), false);
        assert.equal(await storage.initialAccessTokens.delete('a\u0000b'), false);
        assert.equal(await storage.initialAccessTokens.getByHash(token.hash), undefined);
      });

      it('reads an initial access token by id, and pages them oldest first', async () => {
        const made = [0, 1, 2].map((i) => ({
          id: randomUUID(),
          hash: sha256(randomToken('iat_')),
          scopes: i === 0 ? null : ['read'],
          createdAt: NOW + 10 + i,
          expiresAt: NOW + 86_400,
          clientsRegistered: 0,
        }));
        for (const token of made) await storage.initialAccessTokens.insert(token);
        assert.deepEqual(await other.initialAccessTokens.get(made[1]!.id), made[1]);
        assert.equal(await other.initialAccessTokens.get(randomUUID()), undefined);
        assert.equal(await other.initialAccessTokens.get('a\u0000b'), undefined);
        const all = await other.initialAccessTokens.list();
        const { items, total } = await other.initialAccessTokens.page(2, 1);
        assert.equal(total, all.length);
        assert.deepEqual(items, all.slice(1, 3));
        for (const token of made) await storage.initialAccessTokens.delete(token.id);
      });
    });

    describe('OpenID Connect fields (migration 0007-openid-connect)', () => {
      it('round-trips a client’s ID token algorithm and post-logout redirect URIs, and updates them', async () => {
        const client = makeClient({
          idTokenSignedResponseAlg: 'ES256',
          postLogoutRedirectUris: ['https://app.example/bye', 'com.example.app:/signed-out'],
        });
        await storage.clients.insert(client);
        assert.deepEqual(await other.clients.get(client.id), client);
        const changed = { ...client, idTokenSignedResponseAlg: 'RS256' as const, postLogoutRedirectUris: [] };
        assert.equal(await storage.clients.update(changed, 'keep'), true);
        assert.deepEqual(await storage.clients.get(client.id), changed);
      });

      sqlIt(
        'reads a client written without the new columns with their defaults: RS256, no post-logout URIs',
        async () => {
          const id = await insertOldClient();
          const client = await other.clients.get(id);
          assert.deepEqual([client?.idTokenSignedResponseAlg, client?.postLogoutRedirectUris], ['RS256', []]);
        },
      );

      it('round-trips a user’s email and name, and clears them', async () => {
        const user = makeUser({ email: 'jörg@bücher.example', name: 'Jörg “J” Müller 李' });
        assert.equal(await storage.users.insert(user), true);
        assert.deepEqual(await other.users.get(user.id), user);
        assert.deepEqual(await other.users.getByUsername(user.username), user);
        const cleared = { ...user, email: null, name: null, updatedAt: NOW + 1 };
        assert.equal(await storage.users.update(cleared), true);
        assert.deepEqual(await other.users.get(user.id), cleared);
      });

      it('round-trips a user’s disabled flag (decision 37)', async () => {
        const user = makeUser();
        assert.equal(await storage.users.insert(user), true);
        assert.equal((await other.users.get(user.id))?.disabled, false);
        const disabled = { ...user, disabled: true, updatedAt: NOW + 1 };
        assert.equal(await storage.users.update(disabled), true);
        assert.deepEqual(await other.users.get(user.id), disabled);
        assert.deepEqual(await other.users.getByUsername(user.username), disabled);
      });

      sqlIt('round-trips a code’s nonce, auth_time and sid on every read and on consumption', async () => {
        const { grant } = await seedGrant({ scope: ['openid'] });
        const code = makeCode(grant, { nonce: 'n-0S6_WzA2Mj', authTime: NOW - 60, sid: 'sid-1' });
        await storage.codes.insert(code);
        assert.deepEqual(await storage.codes.get(code.hash), code);
        assert.deepEqual(await other.codes.getWithGrant(code.hash), { code, grant });
        assert.deepEqual(await storage.codes.consume(code.hash, NOW + 1), { ...code, consumedAt: NOW + 1 });

        // Written while a transaction is open: the Kysely path, not SQLite's prepared statements.
        const other2 = makeCode(grant, { nonce: null, authTime: NOW, sid: 'sid-2' });
        let pending: Promise<void> | undefined;
        await inTransaction(store.storage, async (run) => {
          await run(sql`SELECT id FROM grants WHERE id = ${grant.id}`);
          pending = storage.codes.insert(other2);
          await new Promise((resolve) => setTimeout(resolve, 20));
        });
        await pending;
        assert.deepEqual(await storage.codes.getWithGrant(other2.hash), { code: other2, grant });
      });

      it('keeps a refresh token’s auth_time and sid, on the retired token and its successor', async () => {
        const { grant } = await seedGrant({ scope: ['openid', 'offline_access'] });
        const token = makeRefreshToken(grant, { authTime: NOW - 60, sid: 'sid-1' });
        await storage.refreshTokens.insert(token);
        assert.deepEqual(await other.refreshTokens.get(token.hash), token);
        const next = makeRefreshToken(grant, {
          authTime: token.authTime,
          sid: token.sid,
          createdAt: NOW + 1,
        });
        assert.deepEqual(await storage.refreshTokens.rotate(token.hash, next, NOW + 1), {
          ...token,
          retiredAt: NOW + 1,
        });
        assert.deepEqual(await other.refreshTokens.get(next.hash), next);
      });
    });

    describe('sign-in assurance on tokens (migration 0021-token-assurance)', () => {
      const MFA = 'urn:gatehouse:acr:multi-factor';
      it('round-trips a code’s acr and amr, also on consumption and with its grant; none stays none', async () => {
        const { grant } = await seedGrant({ scope: ['openid'] });
        const code = makeCode(grant, {
          authTime: NOW - 60,
          sid: 'sid-1',
          acr: MFA,
          amr: ['pwd', 'otp', 'mfa'],
        });
        await storage.codes.insert(code);
        assert.deepEqual(await other.codes.get(code.hash), code);
        assert.deepEqual((await other.codes.getWithGrant(code.hash))?.code, code);
        assert.deepEqual(await other.codes.consume(code.hash, NOW + 1), { ...code, consumedAt: NOW + 1 });
        const plain = makeCode(grant);
        await storage.codes.insert(plain);
        const read = await other.codes.get(plain.hash);
        assert.equal(read?.acr ?? null, null);
        assert.equal(read?.amr ?? null, null);
      });

      it('keeps a refresh token’s acr and amr, on the retired token and its successor', async () => {
        const { grant } = await seedGrant({ scope: ['read'] });
        const token = makeRefreshToken(grant, {
          authTime: NOW - 60,
          sid: null,
          acr: 'phr',
          amr: ['hwk', 'user'],
        });
        await storage.refreshTokens.insert(token);
        assert.deepEqual(await other.refreshTokens.get(token.hash), token);
        const next = makeRefreshToken(grant, {
          authTime: token.authTime,
          sid: null,
          acr: token.acr ?? null,
          amr: token.amr ?? null,
          createdAt: NOW + 1,
        });
        assert.deepEqual(await storage.refreshTokens.rotate(token.hash, next, NOW + 1), {
          ...token,
          retiredAt: NOW + 1,
        });
        assert.deepEqual(await other.refreshTokens.get(next.hash), next);
      });

      it('records the approving sign-in’s acr and amr on a device authorization', async () => {
        const { client, user, grant } = await seedGrant();
        const device: DeviceAuthorization = {
          hash: sha256(randomToken('dc_')),
          userCodeHash: sha256(randomToken('uc_')),
          clientId: client.id,
          scope: ['read'],
          resources: [],
          createdAt: NOW,
          expiresAt: NOW + 600,
          interval: 5,
          lastPolledAt: null,
          status: 'pending',
          userId: null,
          grantId: null,
          authTime: null,
          sid: null,
          decidedAt: null,
          consumedAt: null,
        };
        await storage.deviceAuthorizations.insert(device);
        const approval = {
          status: 'approved' as const,
          userId: user.id,
          grantId: grant.id,
          scope: ['read'],
          authTime: NOW - 5,
          sid: null,
          acr: MFA,
          amr: ['pwd', 'otp', 'mfa'],
        };
        assert.equal(await other.deviceAuthorizations.decide(device.userCodeHash, approval, NOW + 10), true);
        const decided = await storage.deviceAuthorizations.getByUserCode(device.userCodeHash);
        assert.equal(decided?.acr, MFA);
        assert.deepEqual(decided?.amr, ['pwd', 'otp', 'mfa']);
        const consumed = await other.deviceAuthorizations.consume(device.hash, client.id, NOW + 11);
        assert.equal(consumed?.acr, MFA);
        assert.deepEqual(consumed?.amr, ['pwd', 'otp', 'mfa']);
      });
    });

    describe('resource indicators (migration 0008-resource-indicators)', () => {
      it('inserts a resource once, reads it in one or many, lists by URI, updates and deletes', async () => {
        const api = { uri: 'https://api.example', name: 'API', scopes: ['read', 'write'], createdAt: NOW };
        const any = { uri: 'http://localhost:9000/mcp', name: null, scopes: [], createdAt: NOW + 1 };
        assert.equal(await storage.resources.insert(api), true);
        assert.equal(await other.resources.insert({ ...api, name: 'another' }), false, 'a URI once');
        assert.equal(await storage.resources.insert(any), true);
        assert.deepEqual(await other.resources.get(api.uri), api);
        assert.deepEqual(await other.resources.get(any.uri), any);
        assert.equal(await storage.resources.get('https://nowhere.example'), undefined);
        const many = await other.resources.getMany([any.uri, 'https://nowhere.example', api.uri]);
        assert.deepEqual(
          [...many].sort((a, b) => (a.uri < b.uri ? -1 : 1)),
          [any, api],
        );
        assert.deepEqual(await storage.resources.getMany([]), []);
        const listed = (await storage.resources.list()).filter((r) => r.uri === api.uri || r.uri === any.uri);
        assert.deepEqual(listed, [any, api]);
        const changed = { ...api, name: null, scopes: ['read'] };
        assert.equal(await storage.resources.update(changed), true);
        assert.deepEqual(await other.resources.get(api.uri), changed);
        assert.equal(await storage.resources.update({ ...changed, uri: 'https://nowhere.example' }), false);
        assert.equal(await storage.resources.delete(api.uri), true);
        assert.equal(await other.resources.delete(api.uri), false);
        assert.equal(await other.resources.get(api.uri), undefined);
      });

      it('pages resources by URI, searched by URI or name', async () => {
        const tag = `pg${randomUUID().slice(0, 8)}`;
        const made = [
          { uri: `https://${tag}-a.example`, name: 'Alpha', scopes: [], createdAt: NOW },
          { uri: `https://${tag}-b.example`, name: null, scopes: ['read'], createdAt: NOW },
          { uri: `https://${tag}-c.example/z`, name: 'Zeta billing', scopes: [], createdAt: NOW },
        ];
        for (const resource of made) assert.equal(await storage.resources.insert(resource), true);
        const byUri = await other.resources.page({ search: tag.toUpperCase(), limit: 2, offset: 0 });
        assert.equal(byUri.total, 3);
        assert.deepEqual(byUri.items, [made[0], made[1]]);
        assert.deepEqual((await other.resources.page({ search: tag, limit: 2, offset: 2 })).items, [made[2]]);
        const byName = await other.resources.page({ search: 'zeta BILLING', limit: 10, offset: 0 });
        assert.ok(byName.items.some((r) => r.uri === made[2]!.uri));
        assert.ok(!byName.items.some((r) => r.uri === made[0]!.uri));
        assert.equal((await storage.resources.page({ search: `${tag}_`, limit: 10, offset: 0 })).total, 0);
        for (const resource of made) await storage.resources.delete(resource.uri);
      });

      it('of concurrent registrations of one URI, exactly one succeeds', async () => {
        const uri = `https://race-${randomUUID()}.example`;
        const results = await race(
          (store, i) => store.resources.insert({ uri, name: `n${i}`, scopes: [], createdAt: NOW }),
          10,
        );
        assert.equal(results.filter(Boolean).length, 1);
      });

      it('round-trips the resources of a code (also on consumption) and of a refresh token and its successor', async () => {
        const { grant } = await seedGrant();
        const resources = ['https://api.example', 'https://files.example/v1?x=1'];
        const code = makeCode(grant, { resources });
        await storage.codes.insert(code);
        assert.deepEqual(await other.codes.get(code.hash), code);
        assert.deepEqual(await other.codes.getWithGrant(code.hash), { code, grant });
        assert.deepEqual(await storage.codes.consume(code.hash, NOW + 1), { ...code, consumedAt: NOW + 1 });

        const token = makeRefreshToken(grant, { resources });
        await storage.refreshTokens.insert(token);
        assert.deepEqual(await other.refreshTokens.get(token.hash), token);
        const next = makeRefreshToken(grant, { resources, createdAt: NOW + 1 });
        assert.deepEqual(await storage.refreshTokens.rotate(token.hash, next, NOW + 1), {
          ...token,
          retiredAt: NOW + 1,
        });
        assert.deepEqual((await other.refreshTokens.get(next.hash))?.resources, resources);
      });

      sqlIt('reads a code and a refresh token written without the column as naming no resource', async () => {
        const { grant } = await seedGrant();
        const hash = await insertOldCode(grant);
        assert.deepEqual((await other.codes.get(hash))?.resources, []);
        const tokenHash = await insertOldRefreshToken(grant);
        assert.deepEqual((await other.refreshTokens.get(tokenHash))?.resources, []);
      });
    });

    describe('passkeys and WebAuthn challenges (decision 33)', () => {
      function makePasskey(user: User, overrides: Partial<Passkey> = {}): Passkey {
        return {
          id: randomToken('cred'),
          userId: user.id,
          name: 'Laptop',
          publicKey: 'pQECAyYgASFYIA',
          signCount: 0,
          transports: ['internal', 'hybrid'],
          backupEligible: true,
          backedUp: false,
          createdAt: NOW,
          lastUsedAt: null,
          ...overrides,
        };
      }

      it('stores a passkey once per credential id, lists a user’s oldest first, deletes only the owner’s', async () => {
        const [user, stranger] = [makeUser(), makeUser()];
        assert.equal(await storage.users.insert(user), true);
        assert.equal(await storage.users.insert(stranger), true);
        const first = makePasskey(user, { createdAt: NOW + 5, backupEligible: false });
        const second = makePasskey(user, { createdAt: NOW + 9, name: 'Phone', backedUp: true });
        assert.equal(await storage.passkeys.insert(second), true);
        assert.equal(await storage.passkeys.insert(first), true);
        // The credential id is unique across users: a second registration of it stores nothing.
        assert.equal(await other.passkeys.insert({ ...first, userId: stranger.id, name: 'Mine' }), false);
        assert.deepEqual(await other.passkeys.get(first.id), first);
        assert.deepEqual(await other.passkeys.listByUser(user.id), [first, second]);
        assert.deepEqual(await other.passkeys.listByUser(stranger.id), []);
        assert.equal(await storage.passkeys.get('no-such-credential'), undefined);

        assert.equal(await other.passkeys.delete(stranger.id, first.id), false);
        assert.equal(await other.passkeys.delete(user.id, first.id), true);
        assert.equal(await storage.passkeys.delete(user.id, first.id), false);
        assert.deepEqual(await storage.passkeys.listByUser(user.id), [second]);
        // Deleting the user deletes their passkeys.
        assert.equal(await storage.users.delete(user.id), true);
        assert.equal(await other.passkeys.get(second.id), undefined);
      });

      it('records a use only while the counter is the one read: of racing uses, one', async () => {
        const user = makeUser();
        assert.equal(await storage.users.insert(user), true);
        const passkey = makePasskey(user, { signCount: 7 });
        assert.equal(await storage.passkeys.insert(passkey), true);
        const results = await race((on, i) =>
          on.passkeys.recordUse(passkey.id, 7, { signCount: 8 + i, backedUp: true, at: NOW + 60 }),
        );
        assert.equal(results.filter(Boolean).length, 1);
        const winner = results.indexOf(true);
        assert.deepEqual(await other.passkeys.get(passkey.id), {
          ...passkey,
          signCount: 8 + winner,
          backedUp: true,
          lastUsedAt: NOW + 60,
        });
        // A stale read (the counter moved on) records nothing.
        assert.equal(
          await storage.passkeys.recordUse(passkey.id, 7, { signCount: 99, backedUp: false, at: NOW + 61 }),
          false,
        );
        assert.equal(
          await storage.passkeys.recordUse('no-such-credential', 0, {
            signCount: 1,
            backedUp: false,
            at: NOW,
          }),
          false,
        );
      });

      it('hands a challenge out once, only to its browser and purpose, before it expires', async () => {
        const user = makeUser();
        assert.equal(await storage.users.insert(user), true);
        const challenge = {
          hash: sha256(randomToken('wc_')),
          browserHash: sha256(randomToken('bs_')),
          purpose: 'register' as const,
          userId: user.id,
          createdAt: NOW,
          expiresAt: NOW + 300,
        };
        await storage.webAuthnChallenges.insert(challenge);
        // Another browser, another purpose, or too late: not taken, and still there for its own.
        assert.equal(
          await other.webAuthnChallenges.consume(challenge.hash, sha256('other'), 'register', NOW),
          undefined,
        );
        assert.equal(
          await other.webAuthnChallenges.consume(challenge.hash, challenge.browserHash, 'sign-in', NOW),
          undefined,
        );
        assert.equal(
          await other.webAuthnChallenges.consume(
            challenge.hash,
            challenge.browserHash,
            'register',
            NOW + 300,
          ),
          undefined,
        );
        const results = await race((on) =>
          on.webAuthnChallenges.consume(challenge.hash, challenge.browserHash, 'register', NOW + 299),
        );
        assert.deepEqual(
          results.filter((taken) => taken !== undefined),
          [challenge],
        );
        assert.equal(
          await storage.webAuthnChallenges.consume(
            challenge.hash,
            challenge.browserHash,
            'register',
            NOW + 1,
          ),
          undefined,
        );

        const signIn = {
          ...challenge,
          hash: sha256(randomToken('wc_')),
          purpose: 'sign-in' as const,
          userId: null,
        };
        await other.webAuthnChallenges.insert(signIn);
        assert.deepEqual(
          await storage.webAuthnChallenges.consume(signIn.hash, signIn.browserHash, 'sign-in', NOW),
          signIn,
        );
      });

      sqlIt('purges challenges past their expiry and keeps live ones', async () => {
        const browserHash = sha256(randomToken('bs_'));
        const dead = {
          hash: sha256(randomToken('wc_')),
          browserHash,
          purpose: 'sign-in' as const,
          userId: null,
          createdAt: NOW,
          expiresAt: NOW + 10,
        };
        const live = { ...dead, hash: sha256(randomToken('wc_')), expiresAt: NOW + 600 };
        await storage.webAuthnChallenges.insert(dead);
        await storage.webAuthnChallenges.insert(live);
        assert.ok(storage.purge.kinds.includes('webauthn_challenges'));
        const cutoffs = { now: NOW + 10, revokedAccessTokensExpiredBefore: NOW, grantsRevokedBefore: NOW };
        assert.ok((await storage.purge.purgeBatch('webauthn_challenges', cutoffs, 1000)) >= 1);
        assert.equal(
          await other.webAuthnChallenges.consume(dead.hash, browserHash, 'sign-in', NOW),
          undefined,
        );
        assert.deepEqual(
          await other.webAuthnChallenges.consume(live.hash, browserHash, 'sign-in', NOW),
          live,
        );
      });
    });

    describe('revoked access tokens', () => {
      it('records a revoked jti idempotently', async () => {
        const jti = randomUUID();
        assert.equal(await storage.revocations.isAccessTokenRevoked(jti), false);
        await storage.revocations.revokeAccessToken(jti, NOW + 3600);
        await other.revocations.revokeAccessToken(jti, NOW + 3600);
        assert.equal(await other.revocations.isAccessTokenRevoked(jti), true);
        assert.equal(await storage.revocations.isAccessTokenRevoked(randomUUID()), false);
      });
    });

    // Both stores answer "is this value new in its window?" in one statement; one table of cases for both.
    const takeOnceStores: Array<{
      name: string;
      take: (on: Storage, scope: string, value: string, expiresAt: number, now: number) => Promise<boolean>;
    }> = [
      {
        name: 'used jtis (DPoP proofs, client assertions): a jti per namespace',
        take: (on, namespace, jti, expiresAt, now) => on.usedJtis.use(namespace, jti, expiresAt, now),
      },
      {
        name: 'MAC nonces: a nonce per token id',
        take: (on, jti, nonce, expiresAt, now) => on.macNonces.remember(jti, nonce, expiresAt, now),
      },
    ];
    for (const { name, take } of takeOnceStores) {
      describe(name, () => {
        it('takes a value once per scope until it expires, across handles', async () => {
          const value = randomUUID();
          const [a, b] = [randomUUID(), randomUUID()];
          assert.equal(await take(storage, a, value, NOW + 60, NOW), true);
          // Seen: refused on this handle and on another, however many times it is sent again.
          assert.equal(await take(storage, a, value, NOW + 60, NOW + 1), false);
          assert.equal(await take(other, a, value, NOW + 120, NOW + 59), false);
          // Another scope (another key, token or namespace) keeps its own.
          assert.equal(await take(other, b, value, NOW + 60, NOW), true);
          // A row that outlived its expiry is taken over, with the new expiry, and refuses again.
          assert.equal(await take(storage, a, value, NOW + 200, NOW + 60), true);
          assert.equal(await take(other, a, value, NOW + 300, NOW + 199), false);
          assert.equal(await take(storage, a, value, NOW + 300, NOW + 200), true);
        });

        sqlIt(
          'answers the same while a transaction is open (by Kysely) as otherwise (SQLite: by a prepared query)',
          async () => {
            const [scope, value] = [randomUUID(), randomUUID()];
            let during: Promise<boolean[]> | undefined;
            await inTransaction(store.storage, async (run) => {
              await run(sql`SELECT 1`);
              // Started while the transaction is open: on SQLite they take the Kysely path, which waits
              // for it to end.
              during = Promise.all([
                take(storage, scope, value, NOW + 60, NOW),
                take(storage, scope, value, NOW + 60, NOW),
              ]);
            });
            // Exactly one of two takes started together wins, on either path.
            assert.deepEqual([...(await during!)].sort(), [false, true]);
            assert.equal(await take(other, scope, value, NOW + 60, NOW + 1), false);
            assert.equal(await take(storage, scope, value, NOW + 120, NOW + 60), true);
          },
        );
      });
    }

    describe('signing keys', () => {
      it('lists newest first and retires every key but one', async () => {
        const base = NOW + 10_000 + Math.floor(Math.random() * 1000) * 10;
        const older = makeSigningKey(base);
        const newer = makeSigningKey(base + 5);
        await storage.signingKeys.insert(older);
        await storage.signingKeys.insert(newer);
        const listed = await other.signingKeys.list();
        const ours = listed.filter((k) => k.kid === older.kid || k.kid === newer.kid);
        assert.deepEqual(ours, [newer, older]);
        const createdAts = listed.map((k) => k.createdAt);
        assert.deepEqual(
          createdAts,
          [...createdAts].sort((a, b) => b - a),
          'newest first',
        );

        await storage.signingKeys.retireAllExcept([newer.kid], base + 6);
        const after = await storage.signingKeys.list();
        assert.equal(after.find((k) => k.kid === newer.kid)?.retiredAt, null);
        assert.equal(after.find((k) => k.kid === older.kid)?.retiredAt, base + 6);
        assert.deepEqual(
          after.filter((k) => k.retiredAt === null).map((k) => k.kid),
          [newer.kid],
        );
        // A key already retired keeps its first retirement time.
        await storage.signingKeys.retireAllExcept([newer.kid], base + 100);
        assert.equal(
          (await storage.signingKeys.list()).find((k) => k.kid === older.kid)?.retiredAt,
          base + 6,
        );
      });
    });

    describe('pushed authorization requests (migration 0011-pushed-authorization-requests)', () => {
      const makePushed = (client: Client, overrides: Partial<PushedAuthorizationRequest> = {}) => ({
        hash: sha256(randomToken('')),
        clientId: client.id,
        params: `client_id=${client.id}&response_type=code&scope=read`,
        createdAt: NOW,
        expiresAt: NOW + 60,
        openedAt: null,
        consumedAt: null,
        ...overrides,
      });

      it('opens for its own client only while live, moving the expiry the first time only; consumed once', async () => {
        const client = makeClient();
        const stranger = makeClient();
        await storage.clients.insert(client);
        await storage.clients.insert(stranger);
        const pushed = makePushed(client);
        await storage.pushedRequests.insert(pushed);
        const { pushedRequests } = other;
        assert.equal(await pushedRequests.open(pushed.hash, stranger.id, NOW, NOW + 1800), undefined);
        assert.equal(await pushedRequests.open(pushed.hash, client.id, NOW + 60, NOW + 1860), undefined);
        const opened = { ...pushed, openedAt: NOW + 10, expiresAt: NOW + 1810 };
        assert.deepEqual(await pushedRequests.open(pushed.hash, client.id, NOW + 10, NOW + 1810), opened);
        // Opened again later: nothing moves.
        assert.deepEqual(await pushedRequests.open(pushed.hash, client.id, NOW + 100, NOW + 1900), opened);
        assert.equal(await pushedRequests.open(sha256('unknown'), client.id, NOW, NOW + 1800), undefined);
        assert.equal(await pushedRequests.consume(pushed.hash, stranger.id, NOW + 200), false);
        assert.equal(await storage.pushedRequests.consume(pushed.hash, client.id, NOW + 200), true);
        assert.equal(await pushedRequests.consume(pushed.hash, client.id, NOW + 201), false);
        assert.equal(await pushedRequests.open(pushed.hash, client.id, NOW + 202, NOW + 2000), undefined);
      });

      it('is not consumed once expired', async () => {
        const client = makeClient();
        await storage.clients.insert(client);
        const pushed = makePushed(client);
        await storage.pushedRequests.insert(pushed);
        assert.equal(await storage.pushedRequests.consume(pushed.hash, client.id, NOW + 60), false);
      });

      it('consume is atomic: of 20 concurrent calls exactly one succeeds', async () => {
        const client = makeClient();
        await storage.clients.insert(client);
        const pushed = makePushed(client);
        await storage.pushedRequests.insert(pushed);
        const results = await race((store) => store.pushedRequests.consume(pushed.hash, client.id, NOW + 1));
        assert.equal(results.filter(Boolean).length, 1);
      });

      it('goes with its client', async () => {
        const client = makeClient();
        await storage.clients.insert(client);
        const pushed = makePushed(client);
        await storage.pushedRequests.insert(pushed);
        assert.equal(await storage.clients.delete(client.id), true);
        await storage.clients.insert(client);
        assert.equal(await storage.pushedRequests.open(pushed.hash, client.id, NOW, NOW + 1800), undefined);
      });

      sqlIt(
        'round-trips a client’s require_pushed_authorization_requests; clients written before read false',
        async () => {
          const client = makeClient({ requirePushedAuthorizationRequests: true });
          await storage.clients.insert(client);
          assert.deepEqual(await other.clients.get(client.id), client);
          const changed = { ...client, requirePushedAuthorizationRequests: false };
          assert.equal(await storage.clients.update(changed, 'keep'), true);
          assert.deepEqual(await storage.clients.get(client.id), changed);
          const id = await insertOldClient();
          assert.equal((await other.clients.get(id))?.requirePushedAuthorizationRequests, false);
        },
      );
    });

    describe('DPoP bindings (migration 0012-dpop)', () => {
      const JKT = 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs';

      it('round-trips a code’s dpop_jkt (also on consumption) and a refresh token’s, copied to its successor', async () => {
        const { grant } = await seedGrant();
        const code = makeCode(grant, { dpopJkt: JKT });
        await storage.codes.insert(code);
        assert.deepEqual(await other.codes.get(code.hash), code);
        assert.deepEqual(await other.codes.getWithGrant(code.hash), { code, grant });
        assert.deepEqual(await storage.codes.consume(code.hash, NOW + 1), { ...code, consumedAt: NOW + 1 });

        const token = makeRefreshToken(grant, { dpopJkt: JKT });
        await storage.refreshTokens.insert(token);
        assert.deepEqual(await other.refreshTokens.get(token.hash), token);
        const next = makeRefreshToken(grant, { dpopJkt: JKT, createdAt: NOW + 1 });
        assert.deepEqual(await storage.refreshTokens.rotate(token.hash, next, NOW + 1), {
          ...token,
          retiredAt: NOW + 1,
        });
        assert.equal((await other.refreshTokens.get(next.hash))?.dpopJkt, JKT);
      });

      sqlIt('round-trips a client’s dpop_bound_access_tokens; rows written before read unbound', async () => {
        const client = makeClient({ dpopBoundAccessTokens: true });
        await storage.clients.insert(client);
        assert.deepEqual(await other.clients.get(client.id), client);
        const changed = { ...client, dpopBoundAccessTokens: false };
        assert.equal(await storage.clients.update(changed, 'keep'), true);
        assert.deepEqual(await storage.clients.get(client.id), changed);

        const id = await insertOldClient();
        assert.equal((await other.clients.get(id))?.dpopBoundAccessTokens, false);
        const { grant } = await seedGrant();
        const hash = await insertOldCode(grant);
        assert.equal((await other.codes.get(hash))?.dpopJkt, null);
        const tokenHash = await insertOldRefreshToken(grant);
        assert.equal((await other.refreshTokens.get(tokenHash))?.dpopJkt, null);
      });
    });

    describe('device authorizations (migration 0013-device-authorization)', () => {
      const makeDevice = (
        client: Client,
        overrides: Partial<DeviceAuthorization> = {},
      ): DeviceAuthorization => ({
        hash: sha256(randomToken('dc_')),
        userCodeHash: sha256(randomToken('uc_')),
        clientId: client.id,
        scope: ['read', 'write'],
        resources: ['https://api.example'],
        createdAt: NOW,
        expiresAt: NOW + 600,
        interval: 5,
        lastPolledAt: null,
        status: 'pending',
        userId: null,
        grantId: null,
        authTime: null,
        sid: null,
        decidedAt: null,
        consumedAt: null,
        ...overrides,
      });

      it('round-trips; a user code hash is held by one request only', async () => {
        const { client } = await seedGrant();
        const device = makeDevice(client);
        assert.equal(await storage.deviceAuthorizations.insert(device), true);
        assert.deepEqual(await other.deviceAuthorizations.getByUserCode(device.userCodeHash), device);
        const twin = makeDevice(client, { userCodeHash: device.userCodeHash });
        assert.equal(await other.deviceAuthorizations.insert(twin), false);
        assert.equal(await storage.deviceAuthorizations.getByUserCode(sha256('unknown')), undefined);
      });

      it('is decided once, only while pending and unexpired', async () => {
        const { client, user, grant } = await seedGrant();
        const device = makeDevice(client);
        await storage.deviceAuthorizations.insert(device);
        const approval = {
          status: 'approved' as const,
          userId: user.id,
          grantId: grant.id,
          scope: ['read'],
          authTime: NOW - 5,
          sid: 'sid-1',
        };
        assert.equal(await other.deviceAuthorizations.decide(device.userCodeHash, approval, NOW + 10), true);
        assert.deepEqual(await storage.deviceAuthorizations.getByUserCode(device.userCodeHash), {
          ...device,
          status: 'approved',
          userId: user.id,
          grantId: grant.id,
          scope: ['read'],
          authTime: NOW - 5,
          sid: 'sid-1',
          decidedAt: NOW + 10,
        });
        const denial = { status: 'denied' as const, userId: user.id };
        assert.equal(await storage.deviceAuthorizations.decide(device.userCodeHash, denial, NOW + 11), false);

        const late = makeDevice(client);
        await storage.deviceAuthorizations.insert(late);
        assert.equal(await storage.deviceAuthorizations.decide(late.userCodeHash, denial, NOW + 600), false);
        assert.equal(await storage.deviceAuthorizations.decide(late.userCodeHash, denial, NOW + 599), true);
        assert.equal((await other.deviceAuthorizations.getByUserCode(late.userCodeHash))?.status, 'denied');
      });

      it('of 20 concurrent decisions exactly one is recorded', async () => {
        const { client, user } = await seedGrant();
        const device = makeDevice(client);
        await storage.deviceAuthorizations.insert(device);
        const results = await race((store) =>
          store.deviceAuthorizations.decide(
            device.userCodeHash,
            { status: 'denied', userId: user.id },
            NOW + 1,
          ),
        );
        assert.equal(results.filter(Boolean).length, 1);
      });

      it('records each poll; one sooner than the interval after the last grows it, while pending and unexpired', async () => {
        const { client, user, grant } = await seedGrant();
        const device = makeDevice(client);
        await storage.deviceAuthorizations.insert(device);
        const stranger = makeClient();
        await storage.clients.insert(stranger);
        assert.equal(await storage.deviceAuthorizations.poll(device.hash, stranger.id, NOW, 5), undefined);
        assert.equal(
          await storage.deviceAuthorizations.poll(sha256('unknown'), client.id, NOW, 5),
          undefined,
        );
        const steps: [number, boolean, number][] = [
          [NOW, false, 5],
          [NOW + 5, false, 5],
          [NOW + 9, true, 10],
          [NOW + 18, true, 15],
          [NOW + 33, false, 15],
        ];
        for (const [at, tooSoon, interval] of steps) {
          const polled = await other.deviceAuthorizations.poll(device.hash, client.id, at, 5);
          assert.deepEqual(
            {
              tooSoon: polled?.tooSoon,
              interval: polled?.authorization.interval,
              last: polled?.authorization.lastPolledAt,
            },
            { tooSoon, interval, last: at },
            `poll at ${at - NOW}`,
          );
        }
        // Decided, a quick poll is no longer too soon: there is nothing left to slow down.
        await storage.deviceAuthorizations.decide(
          device.userCodeHash,
          {
            status: 'approved',
            userId: user.id,
            grantId: grant.id,
            scope: ['read'],
            authTime: null,
            sid: null,
          },
          NOW + 34,
        );
        const afterDecision = await storage.deviceAuthorizations.poll(device.hash, client.id, NOW + 35, 5);
        assert.deepEqual([afterDecision?.tooSoon, afterDecision?.authorization.interval], [false, 15]);
        // Expired: neither.
        const expired = await storage.deviceAuthorizations.poll(device.hash, client.id, NOW + 600, 5);
        assert.equal(expired?.tooSoon, false);
      });

      it('of 20 concurrent polls at one second, exactly one is in time and the interval grows 19 times', async () => {
        const { client } = await seedGrant();
        const device = makeDevice(client, { lastPolledAt: NOW - 100 });
        await storage.deviceAuthorizations.insert(device);
        const results = await race((store) =>
          store.deviceAuthorizations.poll(device.hash, client.id, NOW, 5),
        );
        assert.equal(results.filter((r) => r?.tooSoon === false).length, 1);
        const after = await storage.deviceAuthorizations.getByUserCode(device.userCodeHash);
        assert.equal(after?.interval, 5 + 19 * 5);
      });

      it('is consumed once, only when approved, unconsumed and unexpired; of 20 concurrent calls exactly one', async () => {
        const { client, user, grant } = await seedGrant();
        const device = makeDevice(client);
        await storage.deviceAuthorizations.insert(device);
        assert.equal(await storage.deviceAuthorizations.consume(device.hash, client.id, NOW + 1), undefined);
        await storage.deviceAuthorizations.decide(
          device.userCodeHash,
          {
            status: 'approved',
            userId: user.id,
            grantId: grant.id,
            scope: ['read'],
            authTime: null,
            sid: null,
          },
          NOW + 1,
        );
        const stranger = makeClient();
        await storage.clients.insert(stranger);
        assert.equal(
          await storage.deviceAuthorizations.consume(device.hash, stranger.id, NOW + 2),
          undefined,
        );
        assert.equal(
          await storage.deviceAuthorizations.consume(device.hash, client.id, NOW + 600),
          undefined,
        );
        const results = await race((store) =>
          store.deviceAuthorizations.consume(device.hash, client.id, NOW + 2),
        );
        const won = results.filter((r) => r !== undefined);
        assert.equal(won.length, 1);
        assert.deepEqual(
          { consumedAt: won[0]?.consumedAt, grantId: won[0]?.grantId, scope: won[0]?.scope },
          { consumedAt: NOW + 2, grantId: grant.id, scope: ['read'] },
        );
      });

      sqlIt('goes with its client, its user and its grant', async () => {
        const cases: ((seeded: Awaited<ReturnType<typeof seedGrant>>) => Promise<boolean>)[] = [
          ({ client }) => storage.clients.delete(client.id),
          ({ user }) => storage.users.delete(user.id),
          ({ grant }) =>
            runSql(store.storage, sql`DELETE FROM grants WHERE id = ${grant.id}`).then(() => true),
        ];
        for (const remove of cases) {
          const seeded = await seedGrant();
          const device = makeDevice(seeded.client);
          await storage.deviceAuthorizations.insert(device);
          await storage.deviceAuthorizations.decide(
            device.userCodeHash,
            {
              status: 'approved',
              userId: seeded.user.id,
              grantId: seeded.grant.id,
              scope: ['read'],
              authTime: null,
              sid: null,
            },
            NOW,
          );
          assert.equal(await remove(seeded), true);
          assert.equal(await storage.deviceAuthorizations.getByUserCode(device.userCodeHash), undefined);
        }
      });
    });

    describe('mail links and email_verified (migration 0019-mail-links)', () => {
      function makeLink(user: User, overrides: Partial<MailLink> = {}): MailLink {
        return {
          hash: sha256(randomToken('')),
          purpose: 'password-reset',
          userId: user.id,
          address: user.email ?? 'nobody@example.com',
          createdAt: NOW,
          expiresAt: NOW + 1800,
          usedAt: null,
          ...overrides,
        };
      }
      const withEmail = async (email: string | null = `${randomUUID()}@example.com`) => {
        const user = makeUser({ email });
        assert.equal(await storage.users.insert(user), true);
        return user;
      };

      it('round-trips a link, and consumes it once, for its purpose, before it expires', async () => {
        const user = await withEmail();
        const link = makeLink(user);
        await storage.mailLinks.insert(link);
        assert.deepEqual(await other.mailLinks.get(link.hash), link);
        assert.equal(await storage.mailLinks.get(sha256('unknown')), undefined);
        assert.equal(await storage.mailLinks.consume(link.hash, 'email-verification', NOW), undefined);
        assert.equal(await storage.mailLinks.consume(link.hash, 'password-reset', NOW + 1800), undefined);
        assert.deepEqual(await other.mailLinks.consume(link.hash, 'password-reset', NOW + 1799), {
          ...link,
          usedAt: NOW + 1799,
        });
        assert.equal(await storage.mailLinks.consume(link.hash, 'password-reset', NOW + 1799), undefined);
        assert.equal((await storage.mailLinks.get(link.hash))?.usedAt, NOW + 1799);
      });

      it('hands a link to exactly one of 20 concurrent consumers', async () => {
        const user = await withEmail();
        const link = makeLink(user, { purpose: 'email-verification' });
        await storage.mailLinks.insert(link);
        const results = await race((store) => store.mailLinks.consume(link.hash, 'email-verification', NOW));
        assert.equal(results.filter((r) => r !== undefined).length, 1);
      });

      it('deleting a user deletes their links', async () => {
        const user = await withEmail();
        const link = makeLink(user);
        await storage.mailLinks.insert(link);
        assert.equal(await storage.users.delete(user.id), true);
        assert.equal(await storage.mailLinks.get(link.hash), undefined);
      });

      it('finds users by address in any ASCII case, oldest first, at most `limit`', async () => {
        const local = randomUUID();
        const first = await withEmail(`${local}@Example.com`);
        const second = makeUser({ email: `${local}@example.com`, createdAt: NOW + 1 });
        assert.equal(await storage.users.insert(second), true);
        await withEmail(`other-${local}@example.com`);
        assert.deepEqual(
          (await other.users.listByEmail(`${local.toUpperCase()}@EXAMPLE.com`, 10)).map((u) => u.id),
          [first.id, second.id],
        );
        assert.deepEqual(
          (await storage.users.listByEmail(`${local}@example.com`, 1)).map((u) => u.id),
          [first.id],
        );
        assert.deepEqual(await storage.users.listByEmail(`nobody-${local}@example.com`, 10), []);
        assert.deepEqual(await storage.users.listByEmail('a\u0000b@example.com', 10), []);
      });

      it('verifies an address only while the user has it, and an update keeps it only while the address stays', async () => {
        const user = await withEmail();
        assert.equal((await storage.users.get(user.id))?.emailVerified, false);
        assert.equal(await storage.users.markEmailVerified(user.id, 'someone-else@example.com'), false);
        assert.equal(await storage.users.markEmailVerified(randomUUID(), user.email ?? ''), false);
        assert.equal(await storage.users.markEmailVerified(user.id, user.email ?? ''), true);
        assert.equal((await other.users.get(user.id))?.emailVerified, true);
        // Another field changes, from a copy read before the verification: the verification stays.
        assert.equal(await storage.users.update({ ...user, name: 'Renamed', updatedAt: NOW + 5 }), true);
        assert.equal((await storage.users.get(user.id))?.emailVerified, true);
        // The update's own emailVerified is not what is kept: the address decides.
        assert.equal(await storage.users.update({ ...user, emailVerified: false }), true);
        assert.equal((await storage.users.get(user.id))?.emailVerified, true);
        assert.equal(
          await storage.users.update({ ...user, email: `new-${user.email}`, emailVerified: true }),
          true,
        );
        assert.equal((await storage.users.get(user.id))?.emailVerified, false);
        const none = await withEmail(null);
        assert.equal(await storage.users.markEmailVerified(none.id, ''), false);
      });

      sqlIt('reads a user stored before the migration as unverified', async () => {
        const id = randomUUID();
        await runSql(
          store.storage,
          sql`INSERT INTO users (id, username, password_hash, created_at, updated_at, email)
            VALUES (${id}, ${`old-${id}`}, 'h', ${NOW}, ${NOW}, ${`${id}@example.com`})`,
        );
        assert.equal((await storage.users.get(id))?.emailVerified, false);
      });
    });

    describe('second factors (migration 0018-second-factors)', () => {
      async function seedUser(): Promise<User> {
        const user = makeUser();
        assert.equal(await storage.users.insert(user), true);
        return user;
      }

      it('an app begun is replaced until confirmed; a confirmed one is kept until deleted', async () => {
        const user = await seedUser();
        assert.equal(await storage.secondFactors.getTotp(user.id), undefined);
        assert.equal(
          await storage.secondFactors.beginTotp({ userId: user.id, secretSealed: 'a', createdAt: NOW }),
          true,
        );
        assert.equal(
          await other.secondFactors.beginTotp({ userId: user.id, secretSealed: 'b', createdAt: NOW + 1 }),
          true,
        );
        assert.deepEqual(await other.secondFactors.getTotp(user.id), {
          userId: user.id,
          secretSealed: 'b',
          createdAt: NOW + 1,
          confirmedAt: null,
          lastStep: null,
        });
        // Not confirmed: a sign-in's code is refused; the set-up's confirms it.
        assert.equal(await storage.secondFactors.useTotpStep(user.id, 100, NOW + 2, false), false);
        assert.equal(await storage.secondFactors.useTotpStep(user.id, 100, NOW + 2, true), true);
        assert.equal(await storage.secondFactors.useTotpStep(user.id, 101, NOW + 2, true), false);
        assert.deepEqual(await other.secondFactors.getTotp(user.id), {
          userId: user.id,
          secretSealed: 'b',
          createdAt: NOW + 1,
          confirmedAt: NOW + 2,
          lastStep: 100,
        });
        assert.equal(
          await storage.secondFactors.beginTotp({ userId: user.id, secretSealed: 'c', createdAt: NOW + 3 }),
          false,
        );
        assert.equal((await storage.secondFactors.getTotp(user.id))?.secretSealed, 'b');
        assert.equal(await storage.secondFactors.deleteTotp(user.id), true);
        assert.equal(await other.secondFactors.deleteTotp(user.id), false);
        assert.equal(await storage.secondFactors.getTotp(user.id), undefined);
      });

      it('a step is accepted only after the last: of 20 concurrent uses of one step, exactly one', async () => {
        const user = await seedUser();
        await storage.secondFactors.beginTotp({ userId: user.id, secretSealed: 's', createdAt: NOW });
        assert.equal(await storage.secondFactors.useTotpStep(user.id, 10, NOW, true), true);
        const results = await race((store) => store.secondFactors.useTotpStep(user.id, 11, NOW + 30, false));
        assert.equal(results.filter(Boolean).length, 1);
        assert.equal(
          await storage.secondFactors.useTotpStep(user.id, 10, NOW + 30, false),
          false,
          'an older step',
        );
        assert.equal(await storage.secondFactors.useTotpStep(user.id, 12, NOW + 60, false), true);
        assert.equal((await other.secondFactors.getTotp(user.id))?.lastStep, 12);
      });

      it('recovery codes: replaced whole, counted unused, each used once even when raced', async () => {
        const user = await seedUser();
        assert.equal(await storage.secondFactors.countRecoveryCodes(user.id), 0);
        await storage.secondFactors.replaceRecoveryCodes(user.id, ['h1', 'h2', 'h3'], NOW);
        assert.equal(await other.secondFactors.countRecoveryCodes(user.id), 3);
        const results = await race((store) => store.secondFactors.useRecoveryCode(user.id, 'h1', NOW + 1));
        assert.equal(results.filter(Boolean).length, 1);
        assert.equal(await storage.secondFactors.useRecoveryCode(user.id, 'nope', NOW + 1), false);
        const stranger = await seedUser();
        assert.equal(
          await storage.secondFactors.useRecoveryCode(stranger.id, 'h2', NOW + 1),
          false,
          "another user's code",
        );
        assert.equal(await other.secondFactors.countRecoveryCodes(user.id), 2);
        await storage.secondFactors.replaceRecoveryCodes(user.id, ['h4'], NOW + 2);
        assert.equal(await storage.secondFactors.useRecoveryCode(user.id, 'h2', NOW + 3), false, 'replaced');
        assert.equal(await storage.secondFactors.countRecoveryCodes(user.id), 1);
        assert.equal(await storage.secondFactors.deleteRecoveryCodes(user.id), 1);
        assert.equal(await storage.secondFactors.countRecoveryCodes(user.id), 0);
      });

      it('deleting the user deletes the app and the codes', async () => {
        const user = await seedUser();
        await storage.secondFactors.beginTotp({ userId: user.id, secretSealed: 's', createdAt: NOW });
        await storage.secondFactors.replaceRecoveryCodes(user.id, ['h1'], NOW);
        assert.equal(await storage.users.delete(user.id), true);
        assert.equal(await other.secondFactors.getTotp(user.id), undefined);
        assert.equal(await other.secondFactors.countRecoveryCodes(user.id), 0);
      });

      sqlIt('round-trips a client’s require_mfa; rows written before read as not required', async () => {
        const client = makeClient({ requireMfa: true });
        await storage.clients.insert(client);
        assert.deepEqual(await other.clients.get(client.id), client);
        const id = await insertOldClient();
        assert.equal((await other.clients.get(id))?.requireMfa, false);
      });
    });

    describe('identity providers and federated links (migrations 0022, 0023; decision 39)', () => {
      function makeProvider(overrides: Partial<IdentityProvider> = {}): IdentityProvider {
        const id = `idp-${randomUUID().slice(0, 8)}`;
        return {
          id,
          name: `Provider ${id}`,
          kind: 'oidc',
          issuer: `https://${id}.example`,
          authorizationEndpoint: `https://${id}.example/authorize`,
          tokenEndpoint: `https://${id}.example/token`,
          userinfoEndpoint: null,
          clientId: 'gatehouse',
          clientAuth: 'client_secret_basic',
          clientSecretSealed: 'sealed-secret',
          privateKeySealed: null,
          publicJwk: null,
          scopes: ['openid', 'email', 'profile'],
          claimMapping: {
            subject: 'sub',
            username: 'preferred_username',
            email: 'email',
            emailVerified: 'email_verified',
            name: 'name',
          },
          linkByVerifiedEmail: false,
          trustUpstreamAssurance: false,
          requiredAcr: null,
          logoUri: null,
          createdAt: NOW,
          updatedAt: NOW,
          ...overrides,
        };
      }
      const oidcMapping = () => ({
        subject: 'sub',
        username: 'preferred_username',
        email: 'email',
        emailVerified: 'email_verified',
        name: 'name',
      });
      function makeLink(user: User, provider: IdentityProvider, overrides: Partial<FederatedLink> = {}) {
        return {
          id: randomUUID(),
          userId: user.id,
          providerId: provider.id,
          issuer: provider.issuer ?? `urn:gatehouse:idp:${provider.id}`,
          subject: randomToken('sub-', 9),
          label: 'alice@upstream.example',
          createdAt: NOW,
          lastUsedAt: null,
          ...overrides,
        } satisfies FederatedLink;
      }

      it('stores a provider once per id, reads every field back, replaces it (never its creation time), deletes it', async () => {
        const oidc = makeProvider({
          userinfoEndpoint: 'https://idp.example/userinfo',
          linkByVerifiedEmail: true,
          trustUpstreamAssurance: true,
          requiredAcr: 'urn:acme:mfa',
          logoUri: 'https://idp.example/logo.png',
        });
        const oauth2 = makeProvider({
          kind: 'oauth2',
          issuer: null,
          userinfoEndpoint: 'https://api.github.example/user',
          clientAuth: 'private_key_jwt',
          clientSecretSealed: null,
          privateKeySealed: 'sealed-key',
          publicJwk: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y', kid: 'k1', alg: 'ES256' },
          scopes: [],
          claimMapping: { ...oidcMapping(), subject: 'id', username: 'login' },
        });
        assert.equal(await storage.identityProviders.insert(oidc), true);
        assert.equal(await storage.identityProviders.insert(oauth2), true);
        assert.deepEqual(await other.identityProviders.get(oidc.id), oidc);
        assert.deepEqual(await other.identityProviders.get(oauth2.id), oauth2);
        // A second provider of the same id stores nothing.
        assert.equal(await other.identityProviders.insert({ ...oidc, name: 'Impostor' }), false);
        assert.equal((await storage.identityProviders.get(oidc.id))?.name, oidc.name);

        const changed: IdentityProvider = {
          ...oidc,
          name: 'Renamed',
          scopes: ['openid'],
          clientAuth: 'none',
          clientSecretSealed: null,
          requiredAcr: null,
          createdAt: NOW + 999,
          updatedAt: NOW + 60,
        };
        assert.equal(await other.identityProviders.update(changed), true);
        assert.deepEqual(await storage.identityProviders.get(oidc.id), { ...changed, createdAt: NOW });
        assert.equal(await storage.identityProviders.update(makeProvider()), false);

        assert.equal(await other.identityProviders.delete(oidc.id), true);
        assert.equal(await storage.identityProviders.delete(oidc.id), false);
        assert.equal(await storage.identityProviders.get(oidc.id), undefined);
        assert.equal(await storage.identityProviders.get('no-such-provider'), undefined);
      });

      it('lists in name order, a page at a time, with the total', async () => {
        const before = (await storage.identityProviders.list(1000, 0)).total;
        const prefix = `zz-list-${randomUUID().slice(0, 8)}`;
        const [b, c, a] = ['b', 'c', 'a'].map((letter) => makeProvider({ name: `${prefix}-${letter}` }));
        for (const provider of [b, c, a] as IdentityProvider[]) {
          assert.equal(await storage.identityProviders.insert(provider), true);
        }
        const first = await other.identityProviders.list(2, before);
        assert.equal(first.total, before + 3);
        assert.deepEqual(
          first.items.map((provider) => provider.name),
          [`${prefix}-a`, `${prefix}-b`],
        );
        const second = await other.identityProviders.list(2, before + 2);
        assert.deepEqual(
          second.items.map((provider) => provider.id),
          [c?.id],
        );
      });

      it('links an upstream person once, to one user; lists a user’s oldest first; deletes only the owner’s', async () => {
        const provider = makeProvider();
        const [alice, bob] = [makeUser(), makeUser()];
        assert.equal(await storage.identityProviders.insert(provider), true);
        assert.equal(await storage.users.insert(alice), true);
        assert.equal(await storage.users.insert(bob), true);
        const later = makeLink(alice, provider, { createdAt: NOW + 10, label: null });
        const first = makeLink(alice, provider, { createdAt: NOW + 5 });
        assert.equal(await storage.federatedLinks.insert(later), true);
        assert.equal(await other.federatedLinks.insert(first), true);
        // (issuer, subject) names one upstream person: linked to bob too, it is refused and nothing changes.
        assert.equal(
          await other.federatedLinks.insert(makeLink(bob, provider, { subject: first.subject })),
          false,
        );
        // Racing links of one upstream person: one wins.
        const subject = randomToken('race-', 9);
        const results = await race((on) =>
          on.federatedLinks.insert(makeLink(bob, provider, { subject, id: randomUUID() })),
        );
        assert.equal(results.filter(Boolean).length, 1);
        assert.deepEqual(await other.federatedLinks.find(first.issuer, first.subject), first);
        assert.equal(await storage.federatedLinks.find(first.issuer, 'nobody'), undefined);
        assert.equal(await storage.federatedLinks.find('https://other.example', first.subject), undefined);
        assert.deepEqual(await other.federatedLinks.listByUser(alice.id), [first, later]);
        assert.equal((await storage.federatedLinks.listByUser(bob.id)).length, 1);
        assert.equal(await storage.federatedLinks.countByProvider(provider.id), 3);

        await other.federatedLinks.recordUse(first.id, NOW + 100);
        assert.equal((await storage.federatedLinks.find(first.issuer, first.subject))?.lastUsedAt, NOW + 100);

        assert.equal(await storage.federatedLinks.delete(bob.id, first.id), false, 'not bob’s to delete');
        assert.equal(await other.federatedLinks.delete(alice.id, first.id), true);
        assert.equal(await storage.federatedLinks.delete(alice.id, first.id), false);
        assert.deepEqual(await storage.federatedLinks.listByUser(alice.id), [later]);
        assert.equal(await storage.federatedLinks.countByProvider(provider.id), 2);
      });

      it('deleting a provider deletes the links through it; deleting a user, theirs', async () => {
        const [kept, doomed] = [makeProvider(), makeProvider()];
        const [alice, bob] = [makeUser(), makeUser()];
        for (const provider of [kept, doomed])
          assert.equal(await storage.identityProviders.insert(provider), true);
        for (const user of [alice, bob]) assert.equal(await storage.users.insert(user), true);
        const aliceKept = makeLink(alice, kept);
        const aliceDoomed = makeLink(alice, doomed);
        const bobKept = makeLink(bob, kept);
        for (const link of [aliceKept, aliceDoomed, bobKept]) {
          assert.equal(await storage.federatedLinks.insert(link), true);
        }
        assert.equal(await other.identityProviders.delete(doomed.id), true);
        assert.deepEqual(await storage.federatedLinks.listByUser(alice.id), [aliceKept]);
        assert.equal(await storage.federatedLinks.find(aliceDoomed.issuer, aliceDoomed.subject), undefined);
        assert.equal(await storage.federatedLinks.countByProvider(doomed.id), 0);

        assert.equal(await other.users.delete(alice.id), true);
        assert.deepEqual(await storage.federatedLinks.listByUser(alice.id), []);
        assert.equal(await storage.federatedLinks.find(aliceKept.issuer, aliceKept.subject), undefined);
        assert.deepEqual(await storage.federatedLinks.listByUser(bob.id), [bobKept]);
      });

      it('keeps a client’s identity_providers (every one, some, none) and finds the clients naming one', async () => {
        const tag = `idp-${randomUUID().slice(0, 8)}`;
        const every = makeClient({ identityProviders: null });
        const some = makeClient({ identityProviders: [tag, 'other'] });
        const none = makeClient({ identityProviders: [] });
        const prefixed = makeClient({ identityProviders: [`${tag}-longer`] });
        for (const client of [every, some, none, prefixed]) await storage.clients.insert(client);
        for (const client of [every, some, none, prefixed]) {
          assert.deepEqual(await other.clients.get(client.id), client);
        }
        const naming = await other.clients.list({ identityProvider: tag, limit: 10, offset: 0 });
        assert.deepEqual(
          naming.items.map((client) => client.id),
          [some.id],
        );
        assert.equal(naming.total, 1);
        assert.equal(await other.clients.update({ ...some, identityProviders: ['other'] }, 'keep'), true);
        assert.equal((await storage.clients.list({ identityProvider: tag, limit: 10, offset: 0 })).total, 0);
      });

      sqlIt('reads a client written before migration 0023 as offering every provider', async () => {
        const id = await insertOldClient();
        assert.equal((await other.clients.get(id))?.identityProviders, null);
      });
    });

    describe('audit events and atomically (migration 0024-audit-events; decision 41)', () => {
      let sequence = 0;
      /** An event at `at` with an id that sorts after every one made before (as newAuditEventId's do). */
      const event = (at: number, overrides: Partial<AuditEvent> = {}): AuditEvent => ({
        id: `${String(++sequence).padStart(10, '0')}${randomUUID().replace(/-/g, '').slice(0, 16)}`,
        at,
        type: 'client.updated',
        actor: { type: 'user', id: 'u-actor' },
        userId: null,
        clientId: null,
        address: '192.0.2.7',
        before: { name: 'old', redirect_uris: ['https://a.example/cb'] },
        after: { name: 'new', nested: { n: 1, ok: true, none: null } },
        detail: 'a note',
        ...overrides,
      });
      /** Every page of `filter`, following the keyset from each page's last event. */
      async function pages(filter: Omit<AuditEventFilter, 'limit' | 'after'>, limit: number) {
        const all: AuditEvent[][] = [];
        let after: AuditEventFilter['after'];
        for (;;) {
          const page = await other.auditEvents.list({ ...filter, limit, ...(after ? { after } : {}) });
          if (page.length === 0) return all;
          all.push(page);
          const last = page.at(-1)!;
          after = { at: last.at, id: last.id };
        }
      }

      it('appends and reads back every field, newest first by (at, id)', async () => {
        const clientId = randomUUID();
        const first = event(NOW, { clientId, actor: { type: 'cli', id: null }, address: null });
        const second = event(NOW, { clientId, before: null, after: null, detail: null, actor: null });
        const third = event(NOW + 1, { clientId, type: 'client.deleted' });
        for (const e of [second, third, first]) await storage.auditEvents.append(e);
        assert.deepEqual(await other.auditEvents.list({ clientId, limit: 10 }), [third, second, first]);
        // An id is a primary key: the same event twice is refused.
        await assert.rejects(storage.auditEvents.append(first));
      });

      it('filters by type, user, client and time, each alone and together', async () => {
        const userId = randomUUID();
        const clientId = randomUUID();
        const base = NOW + 10_000_000;
        const a = event(base, { userId, type: 'sign-in.succeeded' });
        const b = event(base + 10, { userId, clientId, type: 'consent.given' });
        const c = event(base + 20, { clientId, type: 'client.updated' });
        const d = event(base + 30, { userId, type: 'sign-in.failed' });
        for (const e of [a, b, c, d]) await storage.auditEvents.append(e);
        const ids = async (filter: Omit<AuditEventFilter, 'limit'>) =>
          (await other.auditEvents.list({ ...filter, limit: 50 })).map((e) => e.id);
        assert.deepEqual(await ids({ userId }), [d.id, b.id, a.id]);
        assert.deepEqual(await ids({ clientId }), [c.id, b.id]);
        assert.deepEqual(await ids({ userId, types: ['sign-in.succeeded', 'sign-in.failed'] }), [d.id, a.id]);
        assert.deepEqual(await ids({ userId, clientId }), [b.id]);
        assert.deepEqual(await ids({ since: base + 10, until: base + 30 }), [c.id, b.id]);
        assert.deepEqual(await ids({ userId, since: base + 31 }), []);
        assert.deepEqual(await ids({ userId, types: [] }), [d.id, b.id, a.id]);
      });

      it('pages by keyset: every event once, in order, however many are appended meanwhile', async () => {
        const userId = randomUUID();
        const base = NOW + 20_000_000;
        // Several to a second: the id breaks the tie.
        const written = Array.from({ length: 23 }, (_, i) => event(base + Math.floor(i / 4), { userId }));
        for (const e of written) await storage.auditEvents.append(e);
        const expected = [...written].reverse().map((e) => e.id);
        const seen: string[] = [];
        let after: AuditEventFilter['after'];
        for (let page = 0; page < 10; page++) {
          const items = await other.auditEvents.list({ userId, limit: 5, ...(after ? { after } : {}) });
          if (items.length === 0) break;
          seen.push(...items.map((e) => e.id));
          const last = items.at(-1)!;
          after = { at: last.at, id: last.id };
          // Newer events keep arriving while the reader pages back: none of them shifts a later page.
          await race(
            (store, i) => store.auditEvents.append(event(base + 100 + page, { userId, detail: `${i}` })),
            3,
          );
        }
        assert.deepEqual(seen, expected);
        assert.equal((await pages({ userId }, 7)).flat().length, 23 + 3 * 5);
      });

      it('atomically keeps the writes of work that resolves, and none of work that rejects', async () => {
        const kept = makeUser();
        const keptEvent = event(NOW, { userId: kept.id, type: 'user.created' });
        const answer = await storage.atomically(async (tx) => {
          assert.equal(await tx.users.insert(kept), true);
          await tx.auditEvents.append(keptEvent);
          // The transaction sees its own writes.
          assert.equal((await tx.users.get(kept.id))?.username, kept.username);
          return 42;
        });
        assert.equal(answer, 42);
        assert.equal((await other.users.get(kept.id))?.username, kept.username);
        assert.deepEqual(await other.auditEvents.list({ userId: kept.id, limit: 5 }), [keptEvent]);

        // The change fails after its event was written: neither stays.
        const undone = makeUser();
        await assert.rejects(
          storage.atomically(async (tx) => {
            await tx.auditEvents.append(event(NOW, { userId: undone.id }));
            await tx.users.insert(undone);
            throw new Error('the change failed');
          }),
          /the change failed/,
        );
        assert.equal(await other.users.get(undone.id), undefined);
        assert.deepEqual(await other.auditEvents.list({ userId: undone.id, limit: 5 }), []);

        // The event fails (a primary key taken: a constraint of the store's own) after the change: the
        // change is undone.
        const refused = makeUser();
        await assert.rejects(
          storage.atomically(async (tx) => {
            await tx.users.insert(refused);
            await tx.auditEvents.append({ ...keptEvent, userId: refused.id });
          }),
        );
        assert.equal(await other.users.get(refused.id), undefined);
        assert.deepEqual(await other.auditEvents.list({ userId: refused.id, limit: 5 }), []);
      });

      it('atomically runs the repositories that group statements of their own (a grant revoked, a client cached)', async () => {
        const { client, grant } = await seedGrant();
        await other.clients.get(client.id); // cached by the store that serves it
        await storage.atomically(async (tx) => {
          assert.equal(await tx.grants.revoke(grant.id, NOW + 5), true);
          assert.equal(await tx.clients.update({ ...client, name: 'renamed' }, 'keep'), true);
        });
        assert.equal((await other.grants.get(grant.id))?.revokedAt, NOW + 5);
        assert.equal((await storage.clients.get(client.id))?.name, 'renamed');
        await assert.rejects(
          storage.atomically(async (tx) => {
            await tx.clients.update({ ...client, name: 'never' }, 'keep');
            throw new Error('no');
          }),
        );
        assert.equal((await storage.clients.get(client.id))?.name, 'renamed');
      });

      sqlIt('purges events older than the retention, and none without one', async () => {
        const userId = randomUUID();
        const old = event(NOW - 100, { userId });
        const recent = event(NOW - 10, { userId });
        await storage.auditEvents.append(old);
        await storage.auditEvents.append(recent);
        assert.ok(storage.purge.kinds.includes('audit_events'));
        const cutoffs = { now: NOW, revokedAccessTokensExpiredBefore: NOW, grantsRevokedBefore: NOW };
        assert.equal(await storage.purge.purgeBatch('audit_events', cutoffs, 1000), 0);
        assert.equal(
          await storage.purge.purgeBatch('audit_events', { ...cutoffs, auditEventsBefore: null }, 1000),
          0,
        );
        assert.ok(
          (await storage.purge.purgeBatch(
            'audit_events',
            { ...cutoffs, auditEventsBefore: NOW - 50 },
            1000,
          )) >= 1,
        );
        assert.deepEqual(await other.auditEvents.list({ userId, limit: 5 }), [recent]);
      });
    });

    describe('metric samples (migration 0025-metric-samples; decision 43)', () => {
      // Minutes of their own, far from every other case's times: the store is shared by the cases.
      const BASE = 3_000_000_000 - (3_000_000_000 % 60);
      const sample = (processId: string, minute: number, label: string, value: number) => ({
        processId,
        minute,
        series: 'token_responses',
        label,
        value,
      });
      const byKey = (samples: { processId: string; minute: number; label: string; value: number }[]) =>
        samples.map((s) => `${s.minute - BASE} ${s.processId} ${s.label}=${s.value}`).sort();

      it('adds to a row per (minute, process, series, label), and reads every process from a minute on', async () => {
        await storage.metricSamples.add([
          sample('p1', BASE, 'client_credentials', 2),
          sample('p1', BASE + 60, 'client_credentials', 1),
          sample('p1', BASE, 'refresh_token', 1),
        ]);
        await other.metricSamples.add([
          sample('p1', BASE, 'client_credentials', 3),
          sample('p2', BASE, 'client_credentials', 4),
        ]);
        await storage.metricSamples.add([]);
        assert.deepEqual(byKey(await other.metricSamples.since(BASE, 100)), [
          '0 p1 client_credentials=5',
          '0 p1 refresh_token=1',
          '0 p2 client_credentials=4',
          '60 p1 client_credentials=1',
        ]);
        assert.deepEqual(byKey(await storage.metricSamples.since(BASE + 60, 100)), [
          '60 p1 client_credentials=1',
        ]);
        // At most `limit`, oldest minutes first.
        const two = await storage.metricSamples.since(BASE, 2);
        assert.equal(two.length, 2);
        assert.ok(two.every((s) => s.minute === BASE));
      });

      it('counts every one of 20 concurrent adds to one row', async () => {
        await race((store) => store.metricSamples.add([sample('p3', BASE + 600, 'password', 1)]));
        assert.deepEqual(byKey(await other.metricSamples.since(BASE + 600, 100)), ['600 p3 password=20']);
      });

      sqlIt('purges minutes before the cutoff, and counts the backlog up to a limit', async () => {
        const at = BASE + 7200;
        await storage.metricSamples.add([
          sample('p4', BASE + 1200, 'old-a', 1),
          sample('p4', BASE + 1260, 'old-b', 1),
          sample('p4', BASE + 1320, 'kept', 1),
        ]);
        assert.ok(storage.purge.kinds.includes('metric_samples'));
        const cutoffs = { now: at, revokedAccessTokensExpiredBefore: at, grantsRevokedBefore: at };
        const before = { ...cutoffs, metricSamplesBefore: BASE + 1320 };
        assert.equal(await storage.purge.backlog('metric_samples', cutoffs, 100), 0, 'none without a cutoff');
        // Everything before BASE + 1320 is dead, the earlier cases' rows included.
        const dead = await other.purge.backlog('metric_samples', before, 1000);
        assert.ok(dead >= 2);
        assert.equal(await other.purge.backlog('metric_samples', before, 1), 1, 'stops at the limit');
        let deleted = 0;
        for (;;) {
          const rows = await storage.purge.purgeBatch('metric_samples', before, 1000);
          if (rows === 0) break;
          deleted += rows;
        }
        assert.equal(deleted, dead);
        assert.equal(await other.purge.backlog('metric_samples', before, 1000), 0);
        assert.deepEqual(byKey(await other.metricSamples.since(BASE, 100)), ['1320 p4 kept=1']);
      });
    });

    describe('live sessions counted (decision 43)', () => {
      it('counts the sessions live at a time, up to a limit', async () => {
        const { user } = await seedGrant();
        // Times of their own, after every other case's sessions have expired.
        const AT = 3_500_000_000;
        for (const [i, expiresAt] of [AT + 10, AT + 20, AT + 30, AT].entries()) {
          await storage.browserSessions.insert({
            hash: sha256(`live-${user.id}-${i}`),
            userId: user.id,
            createdAt: NOW,
            expiresAt,
          });
        }
        assert.equal(await other.browserSessions.countLive(AT, 100), 3);
        assert.equal(await other.browserSessions.countLive(AT + 15, 100), 2);
        assert.equal(await storage.browserSessions.countLive(AT, 2), 2);
        assert.equal(await storage.browserSessions.countLive(AT + 30, 100), 0);
      });
    });

    describe('throttle', () => {
      it('counts hits inside a window, peeks without counting, and resets', async () => {
        const key = `t:${randomUUID()}`;
        assert.deepEqual(await storage.throttle.peek(key, NOW), { count: 0, resetAt: NOW });
        assert.deepEqual(await storage.throttle.hit(key, 60, NOW), { count: 1, resetAt: NOW + 60 });
        assert.deepEqual(await other.throttle.hit(key, 60, NOW + 10), { count: 2, resetAt: NOW + 60 });
        assert.deepEqual(await storage.throttle.peek(key, NOW + 59), { count: 2, resetAt: NOW + 60 });
        assert.deepEqual(await storage.throttle.peek(key, NOW + 59), { count: 2, resetAt: NOW + 60 });
        // The window has passed at reset_at: peek sees nothing, and the next hit opens a new window.
        assert.equal((await storage.throttle.peek(key, NOW + 60)).count, 0);
        assert.deepEqual(await storage.throttle.hit(key, 60, NOW + 60), { count: 1, resetAt: NOW + 120 });
        await storage.throttle.reset(key);
        assert.equal((await storage.throttle.peek(key, NOW + 61)).count, 0);
        assert.deepEqual(await storage.throttle.hit(key, 30, NOW + 61), { count: 1, resetAt: NOW + 91 });
        await storage.throttle.reset(`t:${randomUUID()}`); // an unknown key is fine
      });

      it('keeps keys apart and counts every one of 20 concurrent hits', async () => {
        const key = `t:${randomUUID()}`;
        const results = await race((store) => store.throttle.hit(key, 60, NOW));
        assert.deepEqual(
          results.map((r) => r.count).sort((a, b) => a - b),
          Array.from({ length: 20 }, (_, i) => i + 1),
        );
        assert.equal((await storage.throttle.peek(key, NOW)).count, 20);
        assert.equal((await storage.throttle.peek(`${key}:other`, NOW)).count, 0);
      });
    });
  });
}

for (const backend of contractBackends) {
  describe(`lookups with a NUL character (${backend})`, () => {
    it('match nothing instead of failing (PostgreSQL refuses NUL in text)', async () => {
      const store =
        backend === 'memory'
          ? { storage: memoryStorage(), cleanup: async () => undefined }
          : await createTestStore(backend);
      try {
        const { storage } = store;
        assert.equal(await storage.clients.get('a\u0000b'), undefined);
        assert.equal(await storage.users.get('a\u0000b'), undefined);
        assert.equal(await storage.users.getByUsername('a\u0000b'), undefined);
        assert.equal(await storage.grants.get('a\u0000b'), undefined);
        assert.equal(await storage.scopes.get('a\u0000b'), undefined);
        assert.equal(await storage.resources.get('a\u0000b'), undefined);
        assert.deepEqual(await storage.resources.getMany(['a\u0000b']), []);
        assert.equal(await storage.resources.delete('a\u0000b'), false);
        assert.equal(await storage.clients.delete('a\u0000b'), false);
        assert.equal(await storage.users.delete('a\u0000b'), false);
        assert.equal(await storage.identityProviders.get('a\u0000b'), undefined);
        assert.equal(await storage.identityProviders.delete('a\u0000b'), false);
        assert.equal(await storage.federatedLinks.find('a\u0000b', 'c\u0000d'), undefined);
        assert.deepEqual(await storage.federatedLinks.listByUser('a\u0000b'), []);
        assert.equal(await storage.federatedLinks.delete('a\u0000b', 'c\u0000d'), false);
      } finally {
        await store.cleanup();
      }
    });
  });
}

/** A new client_credentials client named `name`, with a fresh id. */
function confidentialClient(name: string) {
  return {
    id: randomUUID(),
    name,
    secretHash: sha256('s'),
    redirectUris: [],
    grantTypes: ['client_credentials' as const],
    scopes: ['read'],
    tokenType: 'bearer' as const,
    isPublic: false,
    idTokenSignedResponseAlg: 'RS256' as const,
    postLogoutRedirectUris: [],
    tokenEndpointAuthMethod: 'client_secret_basic' as const,
    jwks: null,
    jwksUri: null,
    registration: 'operator' as const,
    registrationAccessTokenHash: null,
    registrationScopes: null,
    firstGrantedAt: null,
    documentExpiresAt: null,
    requirePushedAuthorizationRequests: false,
    dpopBoundAccessTokens: false,
    requireMfa: false,
    identityProviders: null,
    tokenExchangeTargets: [],
    createdAt: 1,
    updatedAt: 1,
  };
}

/** Runs `body` with two stores on one PostgreSQL database, as two processes would have (skipped without one). */
async function withTwoProcesses(
  t: TestContext,
  body: (a: SqlStorage, b: SqlStorage, advanceMs: (ms: number) => void) => Promise<void>,
): Promise<void> {
  if (!backends().includes('postgres')) {
    t.skip('PostgreSQL not configured');
    return;
  }
  // The cache's times run on a manual clock: how long the machine takes between two steps never
  // decides whether an entry is fresh, stale-but-served or too old.
  let nowMs = 1_000_000;
  const store = await createTestStore('postgres', { nowMs: () => nowMs });
  try {
    await body(store.storage, store.reopen(), (ms) => {
      nowMs += ms;
    });
  } finally {
    await store.cleanup();
  }
}

describe('client reads cached on PostgreSQL', () => {
  it('sees its own writes at once and another process’s within the cache time', async (t) => {
    await withTwoProcesses(t, async (a, b, advanceMs) => {
      const client = confidentialClient('cached');
      await a.clients.insert(client);
      assert.equal((await b.clients.get(client.id))?.name, 'cached');
      await a.clients.update({ ...client, name: 'renamed' }, 'keep');
      assert.equal((await a.clients.get(client.id))?.name, 'renamed', 'own write seen at once');
      assert.equal((await b.clients.get(client.id))?.name, 'cached', 'the other process still has it cached');
      advanceMs(1100);
      // Just expired: served while it is read again, then the new row.
      assert.equal((await b.clients.get(client.id))?.name, 'cached', 'served during its refresh');
      await waitFor(
        async () => (await b.clients.get(client.id))?.name === 'renamed',
        10_000,
        'the new row not seen',
      );
      await b.clients.delete(client.id);
      assert.equal(await b.clients.get(client.id), undefined);
    });
  });
  it('waits for the store once an entry is past twice the cache time, and drops a client deleted elsewhere', async (t) => {
    await withTwoProcesses(t, async (a, b, advanceMs) => {
      const client = confidentialClient('old');
      await a.clients.insert(client);
      assert.equal((await b.clients.get(client.id))?.name, 'old');
      await a.clients.update({ ...client, name: 'new' }, 'keep');
      advanceMs(2100);
      assert.equal((await b.clients.get(client.id))?.name, 'new', 'too stale to serve: read first');

      await a.clients.delete(client.id);
      advanceMs(1100);
      assert.equal((await b.clients.get(client.id))?.name, 'new', 'served during its refresh');
      // Still inside the window where a stale entry may be served (the clock has not moved), but once
      // the store has answered that it is gone, it is gone.
      await waitFor(
        async () => (await b.clients.get(client.id)) === undefined,
        5000,
        'a client deleted elsewhere still served after the store said it is gone',
      );
    });
  });
  it('shares one read among requests that miss the cache together, and never one started before a write', async (t) => {
    await withTwoProcesses(t, async (a, b, advanceMs) => {
      const client = confidentialClient('first');
      await a.clients.insert(client);
      let selects = 0;
      b.observeQueries((event) => {
        if (event.operation === 'select') selects++;
      });
      const together = await Promise.all(Array.from({ length: 20 }, () => b.clients.get(client.id)));
      assert.equal(selects, 1, `${selects} queries for 20 requests`);
      assert.ok(together.every((read) => read?.name === 'first'));
      // Each caller gets its own copy.
      together[0]!.name = 'changed by a caller';
      assert.equal(together[1]?.name, 'first');
      assert.equal((await b.clients.get(client.id))?.name, 'first');

      // A read in flight when this process writes: its answer may be the old row, so it neither
      // serves the reads after the write nor fills the cache (past twice the cache time, so the read
      // is awaited rather than run behind the stale entry).
      advanceMs(2100);
      const before = b.clients.get(client.id);
      await b.clients.update({ ...client, name: 'second' }, 'keep');
      assert.equal((await b.clients.get(client.id))?.name, 'second');
      await before;
      assert.equal(
        (await b.clients.get(client.id))?.name,
        'second',
        'the earlier read did not fill the cache',
      );
    });
  });
});
