import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Client, Grant, User } from '../../src/core/model.js';
import { UserInfoError, type UserInfoResponse } from '../../src/core/oidc/userinfo.js';
import { validateEmail, validateName } from '../../src/core/users/user-registry.js';
import { ValidationError } from '../../src/core/validation.js';
import { addClient, addUser, seedCode, withBasic } from '../helpers/fakes/fixtures.js';
import { START, testEngine, type TestEngine } from '../helpers/fakes/test-engine.js';

/** UserInfo's rules (OpenID Connect Core §5.3): who may ask, and which claims each scope releases. */

interface World {
  engine: TestEngine;
  client: Client;
  secret: string;
  user: User;
  grant: Grant;
}

interface Row {
  name: string;
  /** The scope of the access token, from the code grant; or how to get the token otherwise. */
  scope?: string[];
  user?: Partial<Pick<User, 'email' | 'name'>>;
  token?: (w: World) => Promise<string>;
  before?: (w: World) => Promise<void>;
  expected: UserInfoResponse | ((w: World) => UserInfoResponse) | { error: UserInfoError['code'] };
}

const ALICE = { email: 'alice@example.com', name: 'Alice Example' };

const ROWS: Row[] = [
  {
    name: 'openid alone: sub only (Core §5.3.2: sub is always returned)',
    scope: ['openid'],
    user: ALICE,
    expected: (w) => ({ sub: w.user.id }),
  },
  {
    name: 'openid profile: name, preferred_username (the user name) and updated_at',
    scope: ['openid', 'profile'],
    user: ALICE,
    expected: (w) => ({
      sub: w.user.id,
      name: 'Alice Example',
      preferred_username: w.user.username,
      updated_at: START,
    }),
  },
  {
    name: 'openid email: the address, never verified by Gatehouse',
    scope: ['openid', 'email'],
    user: ALICE,
    expected: (w) => ({ sub: w.user.id, email: 'alice@example.com', email_verified: false }),
  },
  {
    name: 'openid profile email for a user without email or name: those claims left out, not null',
    scope: ['openid', 'profile', 'email'],
    expected: (w) => ({ sub: w.user.id, preferred_username: w.user.username, updated_at: START }),
  },
  {
    name: 'a token without openid: insufficient_scope (RFC 6750 §3.1)',
    scope: ['profile', 'email'],
    user: ALICE,
    expected: { error: 'insufficient_scope' },
  },
  {
    name: 'a client_credentials token, even with openid: invalid_token (it acts for no user)',
    async token(w) {
      const response = await w.engine.token(
        withBasic(w.client, w.secret, { grant_type: 'client_credentials', scope: 'openid' }),
      );
      return response.access_token;
    },
    expected: { error: 'invalid_token' },
  },
  {
    name: 'the grant revoked: invalid_token',
    scope: ['openid', 'profile'],
    before: async (w) => void (await w.engine.storage.grants.revoke(w.grant.id, START)),
    expected: { error: 'invalid_token' },
  },
  {
    name: 'the access token expired: invalid_token',
    scope: ['openid'],
    before: async (w) => w.engine.clock.advance(3601),
    expected: { error: 'invalid_token' },
  },
  {
    name: 'not a token of this server: invalid_token',
    token: async () => 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
    expected: { error: 'invalid_token' },
  },
];

describe('UserInfo (OpenID Connect Core §5.3): engine.userInfo.claims', () => {
  for (const row of ROWS) {
    it(row.name, async () => {
      const engine = await testEngine();
      try {
        const { client, secret } = await addClient(engine, {
          scopes: ['openid', 'profile', 'email'],
          grantTypes: ['authorization_code', 'client_credentials'],
        });
        const user = { ...(await addUser(engine)), email: null, name: null, ...row.user };
        await engine.storage.users.update(user);
        const { code, grant } = await seedCode(engine, client, user, {
          scope: row.scope ?? ['openid'],
          nonce: 'n',
          authTime: START,
          sid: 's',
        });
        const w: World = { engine, client, secret, user, grant };
        const token =
          row.token === undefined
            ? (
                await engine.token(
                  withBasic(client, secret, {
                    grant_type: 'authorization_code',
                    code,
                    redirect_uri: client.redirectUris[0],
                  }),
                )
              ).access_token
            : await row.token(w);
        await row.before?.(w);
        const answer = engine.userInfo.claims(token);
        const expected = typeof row.expected === 'function' ? row.expected(w) : row.expected;
        if ('error' in expected) {
          await assert.rejects(answer, (error: unknown) => {
            assert.ok(error instanceof UserInfoError);
            assert.equal(error.code, expected.error);
            return true;
          });
        } else {
          assert.deepEqual(await answer, expected);
        }
      } finally {
        await engine.close();
      }
    });
  }
});

describe('the users’ OpenID Connect claims: email and name rules (core/users/user-registry.ts)', () => {
  const EMAILS: [unknown, string | null | 'valid' | 'invalid'][] = [
    ['alice@example.com', 'alice@example.com'],
    ['first.last+tag@sub.example.co.uk', 'first.last+tag@sub.example.co.uk'],
    ["o'brien!#$%&*=?^_`{|}~-@example.org", "o'brien!#$%&*=?^_`{|}~-@example.org"],
    ['jörg@bücher.example', 'jörg@bücher.example'],
    ['root@localhost', 'root@localhost'],
    ['', null],
    [null, null],
    ['no-at-sign', 'invalid'],
    ['two@@example.com', 'invalid'],
    ['.leading@example.com', 'invalid'],
    ['double..dot@example.com', 'invalid'],
    ['trailing.@example.com', 'invalid'],
    ['space in@example.com', 'invalid'],
    [' alice@example.com', 'invalid'],
    ['alice@-example.com', 'invalid'],
    ['alice@example-.com', 'invalid'],
    ['alice@example..com', 'invalid'],
    ['"quoted"@example.com', 'invalid'],
    ['alice@[127.0.0.1]', 'invalid'],
    ['alice\u0000@example.com', 'invalid'],
    ['alice\u202e@example.com', 'invalid'],
    ['alice@example.com\n', 'invalid'],
    [`${'a'.repeat(64)}@example.com`, `${'a'.repeat(64)}@example.com`],
    [`${'a'.repeat(65)}@example.com`, 'invalid'],
    // RFC 5321 §4.5.3.1.3: 254 characters at most.
    [`a@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.${'e'.repeat(60)}`, 'valid'],
    [`a@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.${'e'.repeat(61)}`, 'invalid'],
    [`a@${'b'.repeat(64)}.com`, 'invalid'],
    [42, 'invalid'],
  ];
  for (const [input, expected] of EMAILS) {
    it(`email ${JSON.stringify(input)?.slice(0, 60)} → ${expected}`, () => {
      if (expected === 'invalid') {
        assert.throws(
          () => validateEmail(input),
          (e: unknown) => e instanceof ValidationError && e.field === 'email',
        );
      } else {
        assert.equal(validateEmail(input), expected === 'valid' ? input : expected);
      }
    });
  }

  const NAMES: [unknown, string | null | 'invalid'][] = [
    ['Alice Example', 'Alice Example'],
    ['李小龍', '李小龍'],
    ['A', 'A'],
    ['x'.repeat(200), 'x'.repeat(200)],
    ['', null],
    [null, null],
    ['x'.repeat(201), 'invalid'],
    [' Alice', 'invalid'],
    ['Alice ', 'invalid'],
    ['Al\u0007ice', 'invalid'],
    ['Alice\u202eelpmaxE', 'invalid'],
    ['Alice\nExample', 'invalid'],
    [{ first: 'Alice' }, 'invalid'],
  ];
  for (const [input, expected] of NAMES) {
    it(`name ${JSON.stringify(input)?.slice(0, 60)} → ${expected === null ? null : String(expected).slice(0, 20)}`, () => {
      if (expected === 'invalid') {
        assert.throws(
          () => validateName(input),
          (e: unknown) => e instanceof ValidationError && e.field === 'name',
        );
      } else {
        assert.equal(validateName(input), expected);
      }
    });
  }

  it('creating and updating a user: email and name kept, changed, removed with null; updated_at moves', async () => {
    const engine = await testEngine();
    try {
      const created = await engine.users.create({
        username: 'bob',
        password: 'correct horse battery',
        email: 'bob@example.com',
        name: 'Bob',
      });
      assert.deepEqual([created.email, created.name], ['bob@example.com', 'Bob']);
      engine.clock.advance(10);
      const renamed = await engine.users.update(created, { name: 'Robert' });
      assert.deepEqual(
        [renamed.email, renamed.name, renamed.updatedAt],
        ['bob@example.com', 'Robert', START + 10],
      );
      const cleared = await engine.users.update(renamed, { email: null });
      assert.deepEqual([cleared.email, cleared.name], [null, 'Robert']);
      await assert.rejects(engine.users.update(cleared, { email: 'nope' }), ValidationError);
      assert.deepEqual((await engine.users.get(created.id))?.email, null, 'a refused update changed nothing');
    } finally {
      await engine.close();
    }
  });
});
