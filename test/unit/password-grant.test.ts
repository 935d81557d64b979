import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Algorithm, hash } from '@node-rs/argon2';
import { lockoutKey, sourceFailuresKey } from '../../src/core/users/account-lockout.js';
import { OAuthError } from '../../src/core/errors.js';
import type { Client, User } from '../../src/core/model.js';
import { PASSWORD_COST } from '../../src/core/users/passwords.js';
import type { TokenEndpointRequest } from '../../src/core/token-endpoint/token-endpoint.js';
import type { TokenResponse } from '../../src/core/tokens/token-issuer.js';
import { sha256 } from '../../src/shared/crypto.js';
import {
  addClient,
  addUser,
  basic,
  expectOAuthError,
  liveClaims,
  PASSWORD,
  type ExpectedError,
} from '../helpers/fakes/fixtures.js';
import {
  START,
  testEngine,
  type TestEngine,
  type TestEngineOverrides,
} from '../helpers/fakes/test-engine.js';

const HERE = '192.0.2.1';
const ELSEWHERE = '198.51.100.7';
const DAY = 86400;

interface World {
  engine: TestEngine;
  client: Client;
  secret: string;
  user: User;
}

interface Attempt {
  username?: string;
  password?: string;
  address?: string;
}

interface Row {
  name: string;
  engine?: TestEngineOverrides;
  client?: Partial<Client>;
  before?: (w: World) => Promise<void>;
  /** Parameters over the default login (grant_type, the user's name and right password). */
  params?: (w: World) => Record<string, string | undefined>;
  address?: string;
  /** A public client names itself in the form instead of authenticating. */
  publicClient?: boolean;
  expected: ExpectedError | 'tokens';
  then?: (w: World, outcome: TokenResponse | OAuthError) => Promise<void>;
}

const WRONG = { code: 'invalid_grant', status: 401, description: 'wrong user name or password' } as const;
// docs/decisions.md, decision 11: a refused password attempt is 429 rate_limited with Retry-After.
const LOCKED = {
  code: 'rate_limited',
  status: 429,
  description: 'too many failed attempts; retry after the delay in Retry-After',
} as const;

function login(w: World, attempt: Attempt = {}): Promise<TokenResponse> {
  const request: TokenEndpointRequest = {
    authorization: basic(w.client.id, w.secret),
    params: {
      grant_type: 'password',
      username: attempt.username ?? w.user.username,
      password: attempt.password ?? PASSWORD,
    },
    address: attempt.address ?? HERE,
  };
  return w.engine.token(request);
}

/** `count` wrong passwords, each answered 401 invalid_grant (docs/decisions.md, decision 1). */
async function fail(w: World, count: number, attempt: Attempt = {}): Promise<void> {
  for (let i = 0; i < count; i++) {
    await expectOAuthError(login(w, { password: `wrong password ${i}`, ...attempt }), WRONG);
  }
}

/** What the throttle store holds for the user's (name, source) pair and for the source. */
async function counted(w: World, address = HERE): Promise<{ pair: number; source: number }> {
  const now = w.engine.clock.now();
  const { throttle } = w.engine.storage;
  return {
    pair: (await throttle.peek(lockoutKey(w.user.username, address), now)).count,
    source: (await throttle.peek(sourceFailuresKey(address), now)).count,
  };
}

const ROWS: Row[] = [
  {
    name: 'decision 37: a disabled user gets no tokens, even with the right password; the attempt stays counted',
    async before(w) {
      await w.engine.storage.users.update({ ...w.user, disabled: true });
    },
    expected: { code: 'invalid_grant', status: 400, description: 'this user is disabled' },
    async then(w) {
      assert.deepEqual(await counted(w), { pair: 1, source: 0 }, 'the allowance is not given back');
      assert.deepEqual(await w.engine.storage.grants.listByUser(w.user.id), [], 'no grant was made');
    },
  },
  {
    name: 'the right password: tokens under a new grant lasting as long as its first refresh token',
    expected: 'tokens',
    async then(w, response) {
      assert.ok(!(response instanceof OAuthError));
      assert.equal(response.scope, 'read write');
      const claims = await liveClaims(w.engine, response.access_token);
      assert.equal(claims.sub, w.user.id);
      assert.equal(claims.client_id, w.client.id);
      const grant = await w.engine.storage.grants.get(String(claims.gid));
      assert.deepEqual(grant && { ...grant, id: '' }, {
        id: '',
        clientId: w.client.id,
        userId: w.user.id,
        scope: ['read', 'write'],
        createdAt: START,
        expiresAt: START + 30 * DAY,
        revokedAt: null,
      });
      const refresh = await w.engine.storage.refreshTokens.get(sha256(response.refresh_token ?? ''));
      assert.equal(refresh?.grantId, grant?.id);
      assert.deepEqual(await counted(w), { pair: 0, source: 0 }, 'a success leaves no count');
    },
  },
  {
    name: 'no refresh token for a client without the refresh_token grant; the grant ends with the access token',
    client: { grantTypes: ['password'] },
    expected: 'tokens',
    async then(w, response) {
      assert.ok(!(response instanceof OAuthError));
      assert.equal(response.refresh_token, undefined);
      const claims = await liveClaims(w.engine, response.access_token);
      assert.equal((await w.engine.storage.grants.get(String(claims.gid)))?.expiresAt, START + 3600);
    },
  },
  {
    name: 'each login is a grant of its own',
    before: async (w) => void (await login(w)),
    expected: 'tokens',
    then: async (w) => assert.equal((await w.engine.storage.grants.listByUser(w.user.id)).length, 2),
  },
  {
    name: 'a narrower scope on request',
    params: () => ({ scope: 'write' }),
    expected: 'tokens',
    then: async (_w, response) => assert.equal((response as TokenResponse).scope, 'write'),
  },
  {
    name: 'a scope outside the client: refused before any password is checked or counted',
    params: () => ({ scope: 'read admin' }),
    expected: { code: 'invalid_scope', status: 400 },
    then: async (w) => assert.deepEqual(await counted(w), { pair: 0, source: 0 }),
  },
  {
    name: 'a wrong password: 401 invalid_grant (docs/decisions.md, decision 1), counted',
    params: () => ({ password: 'wrong password' }),
    expected: WRONG,
    then: async (w) => assert.deepEqual(await counted(w), { pair: 1, source: 1 }),
  },
  {
    name: 'an unknown user name: the same answer as a wrong password',
    params: () => ({ username: 'nobody-by-this-name' }),
    expected: WRONG,
  },
  {
    name: 'an empty password is a wrong password',
    params: () => ({ password: '' }),
    expected: WRONG,
  },
  {
    name: 'a user name longer than any registered one: a wrong user name, counted against the source only',
    params: () => ({ username: 'x'.repeat(129) }),
    expected: WRONG,
    then: async (w) => assert.deepEqual(await counted(w), { pair: 0, source: 1 }),
  },
  {
    name: 'username missing',
    params: () => ({ username: undefined }),
    expected: { code: 'invalid_request', status: 400, description: 'username is required' },
  },
  {
    name: 'username empty',
    params: () => ({ username: '' }),
    expected: { code: 'invalid_request', status: 400, description: 'username is required' },
  },
  {
    name: 'password missing',
    params: () => ({ password: undefined }),
    expected: { code: 'invalid_request', status: 400, description: 'password is required' },
  },
  {
    name: 'a client not registered for the password grant',
    client: { grantTypes: ['client_credentials'] },
    expected: {
      code: 'unauthorized_client',
      status: 400,
      description: 'this client may not use the password grant',
    },
  },
  {
    name: 'a public client, by default: refused before any password is checked (docs/decisions.md, decision 9)',
    client: { isPublic: true },
    publicClient: true,
    expected: {
      code: 'unauthorized_client',
      status: 400,
      description: 'public clients may not use the password grant on this server',
    },
    then: async (w) => assert.deepEqual(await counted(w), { pair: 0, source: 0 }),
  },
  {
    name: 'a public client, where the operator allows it',
    engine: { allowPublicPasswordGrant: true },
    client: { isPublic: true },
    publicClient: true,
    expected: 'tokens',
  },
  {
    name: 'a weaker stored hash is upgraded to today’s cost at login',
    async before(w) {
      const weak = await hash(PASSWORD, {
        memoryCost: 1024,
        timeCost: 1,
        parallelism: 1,
        algorithm: Algorithm.Argon2id,
      });
      assert.ok(await w.engine.storage.users.update({ ...w.user, passwordHash: weak }));
    },
    expected: 'tokens',
    async then(w) {
      const stored = await w.engine.storage.users.get(w.user.id);
      const { memoryCost, timeCost } = PASSWORD_COST;
      assert.match(
        stored?.passwordHash ?? '',
        new RegExp(`^\\$argon2id\\$v=19\\$m=${memoryCost},t=${timeCost},p=1\\$`),
      );
    },
  },
  // The lockout (docs/decisions.md, decision 8): 5 attempts per (user name, source) in 15 minutes.
  {
    name: 'lockout: after 5 failures even the right password is refused, with the rest of the window to wait',
    async before(w) {
      await fail(w, 5);
      w.engine.clock.advance(100);
    },
    expected: LOCKED,
    then: async (_w, error) => assert.equal((error as OAuthError).retryAfter, 900 - 100),
  },
  {
    name: 'lockout: a locked pair is refused without a password check (no 401 to learn from)',
    before: (w) => fail(w, 5),
    params: () => ({ password: 'wrong again' }),
    expected: LOCKED,
  },
  {
    name: 'lockout: the fifth attempt is still checked',
    before: (w) => fail(w, 4),
    expected: 'tokens',
  },
  {
    name: 'lockout: one second before the window ends it still holds',
    async before(w) {
      await fail(w, 5);
      w.engine.clock.advance(899);
    },
    expected: LOCKED,
    then: async (_w, error) => assert.equal((error as OAuthError).retryAfter, 1),
  },
  {
    name: 'lockout: when the window ends the right password works again',
    async before(w) {
      await fail(w, 5);
      w.engine.clock.advance(900);
    },
    expected: 'tokens',
  },
  {
    name: 'lockout: counted per source, so the user signing in from elsewhere is not locked out',
    before: (w) => fail(w, 5),
    address: ELSEWHERE,
    expected: 'tokens',
  },
  {
    name: 'lockout: an IPv6 source is its /64, so stepping through one prefix gains nothing (RFC 6177)',
    async before(w) {
      for (let i = 1; i <= 5; i++) await fail(w, 1, { address: `2001:db8:1:2::${i}` });
    },
    address: '2001:db8:1:2:ffff::9',
    expected: LOCKED,
  },
  {
    name: 'lockout: user names are counted whatever their case',
    before: (w) => fail(w, 5, { username: w.user.username.toUpperCase() }),
    expected: LOCKED,
  },
  {
    name: 'lockout: a success starts the count again',
    async before(w) {
      await fail(w, 4);
      await login(w);
      await fail(w, 4);
    },
    expected: 'tokens',
  },
  {
    name: 'lockout: the number of attempts is the operator’s (GATEHOUSE_LOCKOUT_ATTEMPTS)',
    engine: { passwordFailuresPerUsername: 2 },
    before: (w) => fail(w, 2),
    expected: LOCKED,
  },
  {
    name: 'failures per source across user names stop that source for every name',
    engine: { passwordFailuresPerSource: 3 },
    async before(w) {
      for (const name of ['ann', 'bob', 'cy']) await fail(w, 1, { username: name });
    },
    expected: LOCKED,
    then: async (w) =>
      assert.ok((await login(w, { address: ELSEWHERE })).access_token, 'other sources unaffected'),
  },
];

async function world(row: Row): Promise<World> {
  const engine = await testEngine(row.engine);
  const { client, secret } = await addClient(engine, {
    grantTypes: ['password', 'refresh_token'],
    scopes: ['read', 'write'],
    ...row.client,
  });
  const user = await addUser(engine, `User-${client.id}`);
  return { engine, client, secret, user };
}

describe('password grant (RFC 6749 §4.3)', () => {
  for (const row of ROWS) {
    it(row.name, async () => {
      const w = await world(row);
      try {
        await row.before?.(w);
        const params = {
          grant_type: 'password',
          username: w.user.username,
          password: PASSWORD,
          ...(row.publicClient ? { client_id: w.client.id } : {}),
          ...row.params?.(w),
        };
        const request = w.engine.token({
          authorization: row.publicClient ? undefined : basic(w.client.id, w.secret),
          params,
          address: row.address ?? HERE,
        });
        if (row.expected === 'tokens') {
          const response = await request;
          await liveClaims(w.engine, response.access_token);
          await row.then?.(w, response);
        } else {
          const error = await expectOAuthError(request, row.expected);
          await row.then?.(w, error);
        }
      } finally {
        await w.engine.close();
      }
    });
  }

  it('of 20 concurrent guesses, at most 5 passwords are checked', async () => {
    const w = await world({ name: 'race', expected: 'tokens' });
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => login(w, { password: `parallel guess ${i}` })),
    );
    const statuses = results.map((r) => (r.status === 'rejected' ? (r.reason as OAuthError).status : 200));
    assert.equal(statuses.filter((s) => s === 401).length, 5);
    assert.equal(statuses.filter((s) => s === 429).length, 15);
    await expectOAuthError(login(w), LOCKED);
    await w.engine.close();
  });
});
