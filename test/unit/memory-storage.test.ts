import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AuthorizationCode, Client, Grant, RefreshToken, User } from '../../src/core/model.js';
import type { Storage } from '../../src/core/ports.js';
import { memoryStorage } from '../helpers/fakes/memory-storage.js';

/**
 * The fakes keep the promises the port interfaces make (src/core/ports.ts), the ones the engine's
 * rules depend on; test/storage/contract.test.ts holds the SQL stores to the same.
 */
const NOW = 1_800_000_000;

const client: Client = {
  id: 'c1',
  name: 'client',
  secretHash: 'old-secret-hash',
  redirectUris: [],
  grantTypes: ['authorization_code', 'refresh_token'],
  scopes: ['read'],
  tokenType: 'bearer',
  isPublic: false,
  idTokenSignedResponseAlg: 'RS256',
  postLogoutRedirectUris: [],
  tokenEndpointAuthMethod: 'client_secret_basic',
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
};
const user: User = {
  id: 'u1',
  username: 'alice',
  passwordHash: 'h',
  email: null,
  name: null,
  admin: false,
  emailVerified: false,
  disabled: false,
  createdAt: NOW,
  updatedAt: NOW,
};
const grant: Grant = {
  id: 'g1',
  clientId: 'c1',
  userId: 'u1',
  scope: ['read'],
  createdAt: NOW,
  expiresAt: null,
  revokedAt: null,
};
const code: AuthorizationCode = {
  hash: 'code-hash',
  clientId: 'c1',
  userId: 'u1',
  grantId: 'g1',
  redirectUri: 'https://app.example/cb',
  scope: ['read'],
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
};
const token = (hash: string, retiredAt: number | null = null): RefreshToken => ({
  hash,
  grantId: 'g1',
  clientId: 'c1',
  userId: 'u1',
  scope: ['read'],
  createdAt: NOW,
  expiresAt: null,
  retiredAt,
  authTime: null,
  sid: null,
  resources: [],
  dpopJkt: null,
});

async function seeded(): Promise<Storage> {
  const storage = memoryStorage();
  await storage.clients.insert(client);
  await storage.users.insert(user);
  await storage.grants.insert(grant);
  await storage.codes.insert(code);
  await storage.refreshTokens.insert(token('rt-live'));
  await storage.refreshTokens.insert(token('rt-retired', NOW + 1));
  return storage;
}

const ROWS: { name: string; run: (storage: Storage) => Promise<void> }[] = [
  {
    name: 'codes.consume returns the code once',
    async run(s) {
      assert.deepEqual(await s.codes.consume('code-hash', NOW + 1), { ...code, consumedAt: NOW + 1 });
      assert.equal(await s.codes.consume('code-hash', NOW + 2), undefined);
      assert.equal((await s.codes.get('code-hash'))?.consumedAt, NOW + 1);
    },
  },
  {
    name: 'codes.consume: of 20 concurrent callers exactly one gets the code',
    async run(s) {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => s.codes.consume('code-hash', NOW + i)),
      );
      assert.equal(results.filter((r) => r !== undefined).length, 1);
    },
  },
  {
    name: 'codes.getWithGrant reads the grant as it stands now',
    async run(s) {
      await s.grants.revoke('g1', NOW + 5);
      assert.deepEqual(await s.codes.getWithGrant('code-hash'), {
        code,
        grant: { ...grant, revokedAt: NOW + 5 },
      });
      assert.equal(await s.codes.getWithGrant('unknown'), undefined);
    },
  },
  {
    name: 'refreshTokens.rotate retires and stores together, and returns undefined the second time, storing nothing',
    async run(s) {
      assert.deepEqual(await s.refreshTokens.rotate('rt-live', token('rt-next'), NOW + 10), {
        ...token('rt-live'),
        retiredAt: NOW + 10,
      });
      assert.deepEqual(await s.refreshTokens.get('rt-next'), token('rt-next'));
      assert.equal(await s.refreshTokens.rotate('rt-live', token('rt-late'), NOW + 11), undefined);
      assert.equal(await s.refreshTokens.get('rt-late'), undefined);
      assert.equal(await s.refreshTokens.rotate('unknown', token('rt-ghost'), NOW), undefined);
      assert.equal(await s.refreshTokens.get('rt-ghost'), undefined);
    },
  },
  {
    name: 'refreshTokens.rotate: of 20 concurrent rotations exactly one succeeds',
    async run(s) {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => s.refreshTokens.rotate('rt-live', token(`rt-${i}`), NOW + 1)),
      );
      assert.equal(results.filter((r) => r !== undefined).length, 1);
    },
  },
  {
    name: 'grants.revoke marks the grant and retires its live refresh tokens, once',
    async run(s) {
      assert.equal(await s.grants.revoke('g1', NOW + 50), true);
      assert.equal((await s.grants.get('g1'))?.revokedAt, NOW + 50);
      assert.equal((await s.refreshTokens.get('rt-live'))?.retiredAt, NOW + 50);
      assert.equal((await s.refreshTokens.get('rt-retired'))?.retiredAt, NOW + 1);
      assert.equal(await s.grants.revoke('g1', NOW + 99), false);
      assert.equal((await s.grants.get('g1'))?.revokedAt, NOW + 50);
    },
  },
  {
    name: 'records are copies: changing one read changes nothing stored',
    async run(s) {
      const read = await s.grants.get('g1');
      assert.ok(read);
      read.revokedAt = NOW;
      read.scope.push('admin');
      assert.deepEqual(await s.grants.get('g1'), grant);
    },
  },
  {
    name: "clients.update 'keep' never writes back a secret rotated meanwhile; 'replace' does",
    async run(s) {
      assert.ok(await s.clients.update({ ...client, secretHash: 'rotated' }, 'replace'));
      assert.ok(await s.clients.update({ ...client, name: 'renamed' }, 'keep'));
      assert.deepEqual(await s.clients.get('c1'), { ...client, name: 'renamed', secretHash: 'rotated' });
      assert.equal(await s.clients.update({ ...client, id: 'unknown' }, 'keep'), false);
    },
  },
  {
    name: 'deleting a client removes its grants, codes and refresh tokens',
    async run(s) {
      assert.equal(await s.clients.delete('c1'), true);
      assert.equal(await s.grants.get('g1'), undefined);
      assert.equal(await s.codes.get('code-hash'), undefined);
      assert.equal(await s.refreshTokens.get('rt-live'), undefined);
    },
  },
  {
    name: 'users.insert answers false for a user name taken, storing nothing',
    async run(s) {
      assert.equal(await s.users.insert({ ...user, id: 'u2' }), false);
      assert.equal(await s.users.get('u2'), undefined);
    },
  },
  {
    name: 'a grant for an unknown client is refused (foreign key)',
    async run(s) {
      await assert.rejects(s.grants.insert({ ...grant, id: 'g2', clientId: 'nobody' }), /foreign key/);
    },
  },
  {
    name: 'throttle counts inside a window, peeks without counting, and opens a new window at resetAt',
    async run(s) {
      assert.deepEqual(await s.throttle.hit('k', 60, NOW), { count: 1, resetAt: NOW + 60 });
      assert.deepEqual(await s.throttle.hit('k', 60, NOW + 10), { count: 2, resetAt: NOW + 60 });
      assert.deepEqual(await s.throttle.peek('k', NOW + 59), { count: 2, resetAt: NOW + 60 });
      assert.deepEqual(await s.throttle.peek('k', NOW + 60), { count: 0, resetAt: NOW + 60 });
      assert.deepEqual(await s.throttle.hit('k', 60, NOW + 60), { count: 1, resetAt: NOW + 120 });
      await s.throttle.reset('k');
      assert.equal((await s.throttle.peek('k', NOW + 61)).count, 0);
    },
  },
  {
    name: 'browser sessions name their user only while they live',
    async run(s) {
      const session = { hash: 'bs', userId: 'u1', createdAt: NOW, expiresAt: NOW + 60 };
      await s.browserSessions.insert(session);
      assert.deepEqual(await s.browserSessions.signedIn('bs', NOW + 59), { session, user });
      assert.deepEqual(await s.browserSessions.signedInWithGrants('bs', NOW + 59, 'c1'), {
        session,
        user,
        grants: [grant],
      });
      assert.equal(await s.browserSessions.signedIn('bs', NOW + 60), undefined);
      assert.equal(await s.browserSessions.signedInWithGrants('bs', NOW + 60, 'c1'), undefined);
      assert.equal(await s.browserSessions.deleteByUser('u1'), 1);
    },
  },
  {
    name: 'a MAC nonce is accepted once inside its window, and again once the window has passed',
    async run(s) {
      assert.equal(await s.macNonces.remember('jti', 'n', NOW + 300, NOW), true);
      assert.equal(await s.macNonces.remember('jti', 'n', NOW + 301, NOW + 1), false);
      assert.equal(await s.macNonces.remember('jti', 'other', NOW + 301, NOW + 1), true);
      assert.equal(await s.macNonces.remember('jti', 'n', NOW + 600, NOW + 300), true);
    },
  },
  {
    name: 'rate-limit counters add up their deltas',
    async run(s) {
      await s.rateLimits.add([{ key: 'rl:a', delta: 2, resetAt: NOW + 60 }]);
      assert.deepEqual(
        await s.rateLimits.add([
          { key: 'rl:a', delta: 3, resetAt: NOW + 60 },
          { key: 'rl:b', delta: 1, resetAt: NOW + 60 },
        ]),
        [
          { key: 'rl:a', count: 5 },
          { key: 'rl:b', count: 1 },
        ],
      );
    },
  },
  {
    name: 'signing keys list newest first; revoke is idempotent and keeps the first times',
    async run(s) {
      const key = (kid: string, createdAt: number) => ({
        kid,
        alg: 'ES256' as const,
        publicJwk: {},
        privateKeySealed: '',
        createdAt,
        retiredAt: null,
        revokedAt: null,
      });
      await s.signingKeys.insert(key('old', NOW));
      await s.signingKeys.insert(key('new', NOW + 5));
      await s.signingKeys.retireAllExcept(['new'], NOW + 6);
      assert.deepEqual(
        (await s.signingKeys.list()).map((k) => [k.kid, k.retiredAt, k.revokedAt]),
        [
          ['new', null, null],
          ['old', NOW + 6, null],
        ],
      );
      assert.equal(await s.signingKeys.revoke('old', NOW + 7), true);
      assert.equal(await s.signingKeys.revoke('old', NOW + 8), true);
      assert.equal(await s.signingKeys.revoke('none', NOW), false);
      assert.deepEqual(
        (await s.signingKeys.list()).map((k) => [k.kid, k.retiredAt, k.revokedAt]),
        [
          ['new', null, null],
          ['old', NOW + 6, NOW + 7],
        ],
      );
    },
  },
  {
    name: 'resources: a URI once, read one or many, updated, deleted; records copied in and out',
    async run(s) {
      const api = { uri: 'https://api.example', name: 'API', scopes: ['read'], createdAt: NOW };
      assert.equal(await s.resources.insert(api), true);
      assert.equal(await s.resources.insert({ ...api, name: 'again' }), false);
      api.scopes.push('changed after insert');
      assert.deepEqual(await s.resources.get(api.uri), { ...api, scopes: ['read'] });
      assert.deepEqual(
        (await s.resources.getMany(['https://none.example', api.uri])).map((r) => r.uri),
        [api.uri],
      );
      assert.equal(await s.resources.update({ ...api, name: null, scopes: [] }), true);
      assert.deepEqual(await s.resources.list(), [{ ...api, name: null, scopes: [] }]);
      assert.equal(await s.resources.update({ ...api, uri: 'https://none.example' }), false);
      assert.equal(await s.resources.delete(api.uri), true);
      assert.equal(await s.resources.delete(api.uri), false);
    },
  },
];

describe('in-memory storage fakes', () => {
  for (const row of ROWS) {
    it(row.name, async () => row.run(await seeded()));
  }
});
