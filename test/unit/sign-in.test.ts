import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Algorithm, hash } from '@node-rs/argon2';
import { lockoutKey, sourceFailuresKey } from '../../src/core/users/account-lockout.js';
import { BrowserSessions } from '../../src/core/sign-in/browser-sessions.js';
import type { User } from '../../src/core/model.js';
import { PASSWORD_COST } from '../../src/core/users/passwords.js';
import type { Storage } from '../../src/core/ports.js';
import {
  ACR_MULTI_FACTOR,
  ACR_PHISHING_RESISTANT,
  ACR_SINGLE_FACTOR,
  assurance,
  sessionAuthentications,
  type Assurance,
} from '../../src/core/sign-in/assurance.js';
import type { Authenticator, AuthenticatorResult } from '../../src/core/sign-in/authenticator.js';
import { PASSWORD as PASSWORD_METHOD, type AuthenticationMethod } from '../../src/core/sign-in/methods.js';
import { PasswordAuthenticator } from '../../src/core/sign-in/password-authenticator.js';
import { SignInService, type SignInResult } from '../../src/core/sign-in/sign-in-service.js';
import { ManualClock } from '../../src/shared/clock.js';
import { sha256 } from '../../src/shared/crypto.js';
import { addClient, addUser, PASSWORD } from '../helpers/fakes/fixtures.js';
import { memoryStorage } from '../helpers/fakes/memory-storage.js';
import { START, testEngine } from '../helpers/fakes/test-engine.js';

const HERE = '192.0.2.1';
const ELSEWHERE = '198.51.100.7';
// Small limits, so each row reaches them in a few attempts: 3 per (name, source), 5 per source.
const POLICY = { failuresPerUsername: 3, failuresPerAddress: 5, windowSeconds: 900 };

/** A one-time code: a second method of another kind of factor, as issue 28 will bring. */
const CODE_METHOD: AuthenticationMethod = {
  name: 'test-code',
  amr: ['otp'],
  factors: ['possession'],
  step: 'second',
  phishingResistant: false,
};
const RIGHT_CODE = '123456';

interface CodeAttempt {
  username: string;
  code: string;
}

/** A fake second method: the user by name, and one right code for everyone. */
class CodeAuthenticator implements Authenticator<CodeAttempt> {
  readonly method = CODE_METHOD;
  verified = 0;
  constructor(private readonly storage: Storage) {}
  async claimant(attempt: CodeAttempt): Promise<string | undefined> {
    return attempt.username;
  }
  async verify(attempt: CodeAttempt): Promise<AuthenticatorResult> {
    this.verified++;
    const user = await this.storage.users.getByUsername(attempt.username);
    return user !== undefined && attempt.code === RIGHT_CODE
      ? { outcome: 'verified', user }
      : { outcome: 'refused' };
  }
}

interface World {
  storage: Storage;
  clock: ManualClock;
  user: User;
  service: SignInService;
  password: PasswordAuthenticator;
  code: CodeAuthenticator;
  /** The password method from `address` (HERE unless given). */
  signIn(password: string, options?: { username?: string; address?: string }): Promise<SignInResult>;
  /** The fake code method from `address` (HERE unless given). */
  enterCode(code: string, options?: { username?: string; address?: string }): Promise<SignInResult>;
}

async function world(): Promise<World> {
  const storage = memoryStorage();
  const clock = new ManualClock(START);
  const user = await addUser({ storage, clock }, 'alice');
  const service = new SignInService(storage.throttle, clock, POLICY);
  const password = new PasswordAuthenticator(storage.users, clock);
  const code = new CodeAuthenticator(storage);
  return {
    storage,
    clock,
    user,
    service,
    password,
    code,
    signIn: (secret, { username = 'alice', address = HERE } = {}) =>
      service.attempt(password, { username, password: secret }, { address }),
    enterCode: (value, { username = 'alice', address = HERE } = {}) =>
      service.attempt(code, { username, code: value }, { address }),
  };
}

const WRONG: SignInResult = { outcome: 'wrong-credentials' };

function assertSignedIn(result: SignInResult, w: World, method: string): void {
  assert.equal(result.outcome, 'signed-in', JSON.stringify(result));
  if (result.outcome !== 'signed-in') return;
  assert.equal(result.user.id, w.user.id);
  assert.deepEqual(result.authentication, { method, at: w.clock.now() });
}

function assertThrottled(result: SignInResult, retryAfter: number): void {
  assert.deepEqual(result, { outcome: 'throttled', retryAfter });
}

interface Row {
  name: string;
  run(w: World): Promise<void>;
}

const PASSWORD_ROWS: Row[] = [
  {
    name: 'the right password signs in, records the password now, and clears the (name, source) count',
    async run(w) {
      assert.deepEqual(await w.signIn('wrong'), WRONG);
      w.clock.advance(3);
      assertSignedIn(await w.signIn(PASSWORD), w, 'password');
      assert.equal((await w.storage.throttle.peek(lockoutKey('alice', HERE), w.clock.now())).count, 0);
    },
  },
  {
    name: 'a wrong password: wrong credentials, counted for the source and for (name, source)',
    async run(w) {
      assert.deepEqual(await w.signIn('wrong'), WRONG);
      const now = w.clock.now();
      assert.equal((await w.storage.throttle.peek(sourceFailuresKey(HERE), now)).count, 1);
      assert.equal((await w.storage.throttle.peek(lockoutKey('alice', HERE), now)).count, 1);
    },
  },
  {
    name: 'an unknown user name: the same answer as a wrong password, and counted the same',
    async run(w) {
      assert.deepEqual(await w.signIn(PASSWORD, { username: 'nobody' }), WRONG);
      const now = w.clock.now();
      assert.equal((await w.storage.throttle.peek(sourceFailuresKey(HERE), now)).count, 1);
      assert.equal((await w.storage.throttle.peek(lockoutKey('nobody', HERE), now)).count, 1);
    },
  },
  {
    name: 'a name longer than any user’s: wrong, counted for the source alone, never a key of its own',
    async run(w) {
      const long = 'x'.repeat(129);
      assert.deepEqual(await w.signIn(PASSWORD, { username: long }), WRONG);
      const now = w.clock.now();
      assert.equal((await w.storage.throttle.peek(sourceFailuresKey(HERE), now)).count, 1);
      assert.equal((await w.storage.throttle.peek(lockoutKey(long, HERE), now)).count, 0);
    },
  },
  {
    name: 'throttled per source: failures across names refuse even the right password from that source',
    async run(w) {
      for (let i = 0; i < POLICY.failuresPerAddress; i++) {
        assert.deepEqual(await w.signIn('wrong', { username: `someone-${i}` }), WRONG);
      }
      w.clock.advance(100);
      assertThrottled(await w.signIn(PASSWORD), POLICY.windowSeconds - 100);
      assertSignedIn(await w.signIn(PASSWORD, { address: ELSEWHERE }), w, 'password');
    },
  },
  {
    name: 'locked per (name, source): the right password is refused there, accepted from elsewhere',
    async run(w) {
      for (let i = 0; i < POLICY.failuresPerUsername; i++) assert.deepEqual(await w.signIn('wrong'), WRONG);
      w.clock.advance(10);
      assertThrottled(await w.signIn(PASSWORD), POLICY.windowSeconds - 10);
      assertSignedIn(await w.signIn(PASSWORD, { address: ELSEWHERE }), w, 'password');
      // The window ends: the source may try again.
      w.clock.advance(POLICY.windowSeconds);
      assertSignedIn(await w.signIn(PASSWORD), w, 'password');
    },
  },
  {
    name: 'a weaker stored hash is upgraded to today’s cost at sign-in; a wrong password upgrades nothing',
    async run(w) {
      const weak = await hash(PASSWORD, {
        memoryCost: 1024,
        timeCost: 1,
        parallelism: 1,
        algorithm: Algorithm.Argon2id,
      });
      assert.ok(await w.storage.users.update({ ...w.user, passwordHash: weak }));
      assert.deepEqual(await w.signIn('wrong'), WRONG);
      assert.equal((await w.storage.users.get(w.user.id))?.passwordHash, weak);
      assertSignedIn(await w.signIn(PASSWORD), w, 'password');
      const { memoryCost, timeCost } = PASSWORD_COST;
      assert.match(
        (await w.storage.users.get(w.user.id))?.passwordHash ?? '',
        new RegExp(`^\\$argon2id\\$v=19\\$m=${memoryCost},t=${timeCost},p=1\\$`),
      );
    },
  },
];

describe('the password authenticator under the SignInService (decisions 8, 30)', () => {
  for (const row of PASSWORD_ROWS) it(row.name, async () => row.run(await world()));

  it('is what Engine.signIn runs: the same outcome and the password recorded', async () => {
    const engine = await testEngine();
    try {
      const user = await addUser(engine);
      const result = await engine.engine.signIn({
        username: user.username,
        password: PASSWORD,
        address: HERE,
      });
      assert.equal(result.outcome, 'signed-in');
      if (result.outcome === 'signed-in') {
        assert.deepEqual(result.authentication, { method: 'password', at: START });
      }
      assert.deepEqual(
        await engine.engine.signIn({ username: user.username, password: 'no', address: HERE }),
        WRONG,
      );
    } finally {
      await engine.close();
    }
  });
});

const SECOND_METHOD_ROWS: Row[] = [
  {
    name: 'the right code signs in and records the code method',
    async run(w) {
      assertSignedIn(await w.enterCode(RIGHT_CODE), w, 'test-code');
    },
  },
  {
    name: 'wrong codes lock (name, source) as wrong passwords do; no code is checked while locked',
    async run(w) {
      for (let i = 0; i < POLICY.failuresPerUsername; i++)
        assert.deepEqual(await w.enterCode('000000'), WRONG);
      const checked = w.code.verified;
      assertThrottled(await w.enterCode(RIGHT_CODE), POLICY.windowSeconds);
      assert.equal(w.code.verified, checked, 'a locked attempt is never verified');
      assertSignedIn(await w.enterCode(RIGHT_CODE, { address: ELSEWHERE }), w, 'test-code');
    },
  },
  {
    name: 'one allowance across methods: wrong codes and wrong passwords add up, and lock both',
    async run(w) {
      assert.deepEqual(await w.signIn('wrong'), WRONG);
      assert.deepEqual(await w.enterCode('000000'), WRONG);
      assert.deepEqual(await w.signIn('wrong'), WRONG);
      assertThrottled(await w.signIn(PASSWORD), POLICY.windowSeconds);
      assertThrottled(await w.enterCode(RIGHT_CODE), POLICY.windowSeconds);
    },
  },
  {
    name: 'a source throttled by wrong passwords across names is refused for codes too',
    async run(w) {
      for (let i = 0; i < POLICY.failuresPerAddress; i++) {
        assert.deepEqual(await w.signIn('wrong', { username: `someone-${i}` }), WRONG);
      }
      const checked = w.code.verified;
      assertThrottled(await w.enterCode(RIGHT_CODE), POLICY.windowSeconds);
      assert.equal(w.code.verified, checked);
    },
  },
];

describe('a second method run by the same SignInService gets the same lockout (decision 30)', () => {
  for (const row of SECOND_METHOD_ROWS) it(row.name, async () => row.run(await world()));
});

const PASSKEY: AuthenticationMethod = {
  name: 'test-passkey',
  amr: ['hwk', 'user'],
  factors: ['possession', 'inherence'],
  step: 'first',
  phishingResistant: true,
};
const SECOND_PASSWORD: AuthenticationMethod = { ...PASSWORD_METHOD, name: 'test-memorized' };
const CATALOGUE = new Map(
  [PASSWORD_METHOD, CODE_METHOD, PASSKEY, SECOND_PASSWORD].map((method) => [method.name, method]),
);

const ASSURANCE_ROWS: {
  name: string;
  record: { method: string; at: number }[];
  expected: Assurance;
}[] = [
  {
    name: 'a password alone: pwd, single-factor, when it was entered',
    record: [{ method: 'password', at: START }],
    expected: { authTime: START, amr: ['pwd'], acr: ACR_SINGLE_FACTOR },
  },
  {
    name: 'a password, then a code: both, mfa, multi-factor, auth_time the later one',
    record: [
      { method: 'password', at: START },
      { method: 'test-code', at: START + 20 },
    ],
    expected: { authTime: START + 20, amr: ['pwd', 'otp', 'mfa'], acr: ACR_MULTI_FACTOR },
  },
  {
    name: 'two methods of one kind of factor are not multi-factor',
    record: [
      { method: 'password', at: START },
      { method: 'test-memorized', at: START + 5 },
    ],
    expected: { authTime: START + 5, amr: ['pwd'], acr: ACR_SINGLE_FACTOR },
  },
  {
    name: 'a phishing-resistant method: phr',
    record: [{ method: 'test-passkey', at: START + 1 }],
    expected: { authTime: START + 1, amr: ['hwk', 'user', 'mfa'], acr: ACR_PHISHING_RESISTANT },
  },
  {
    name: 'a method no longer known proves nothing but still dates the session',
    record: [
      { method: 'password', at: START },
      { method: 'retired-method', at: START + 9 },
    ],
    expected: { authTime: START + 9, amr: ['pwd'], acr: ACR_SINGLE_FACTOR },
  },
];

describe('a session’s record → auth_time, amr, acr (decision 30)', () => {
  for (const row of ASSURANCE_ROWS) {
    it(row.name, () => assert.deepEqual(assurance(row.record, CATALOGUE), row.expected));
  }

  it('today’s catalogue knows the password alone', () => {
    assert.deepEqual(assurance([{ method: 'password', at: START }]), {
      authTime: START,
      amr: ['pwd'],
      acr: ACR_SINGLE_FACTOR,
    });
    assert.deepEqual(assurance([{ method: 'test-code', at: START }]).amr, []);
  });

  it('a session that records nothing (stored before migration 0016) was a password at its start', () => {
    const session = { hash: 'h', userId: 'u', createdAt: START - 60, expiresAt: START + 60 };
    assert.deepEqual(sessionAuthentications(session), [{ method: 'password', at: START - 60 }]);
    const recorded = [{ method: 'test-code', at: START }];
    assert.deepEqual(sessionAuthentications({ ...session, authentications: recorded }), recorded);
  });
});

describe('browser sessions record the method and derive the sign-in from it', () => {
  it('start records the method; signedIn reports auth_time, amr and acr from the record', async () => {
    const storage = memoryStorage();
    const clock = new ManualClock(START);
    const user = await addUser({ storage, clock });
    const sessions = new BrowserSessions(storage.browserSessions, clock);
    // Recorded at another time than the session's start: auth_time comes from the record.
    const id = await sessions.start(user.id, { method: 'password', at: START - 30 });
    const stored = await storage.browserSessions.get(sha256(id), START);
    assert.deepEqual(stored?.authentications, [{ method: 'password', at: START - 30 }]);
    const authentication = await sessions.authentication(id);
    assert.equal(authentication?.authTime, START - 30);
    assert.deepEqual(authentication?.amr, ['pwd']);
    assert.equal(authentication?.acr, ACR_SINGLE_FACTOR);
  });

  it('a session stored without a record reads as a password at its creation', async () => {
    const storage = memoryStorage();
    const clock = new ManualClock(START);
    const user = await addUser({ storage, clock });
    await storage.browserSessions.insert({
      hash: sha256('bs_old'),
      userId: user.id,
      createdAt: START - 100,
      expiresAt: START + 100,
    });
    const authentication = await new BrowserSessions(storage.browserSessions, clock).authentication('bs_old');
    assert.equal(authentication?.authTime, START - 100);
    assert.deepEqual(authentication?.amr, ['pwd']);
  });
});

describe('the authorization step sign-in: its methods, and max_age against the recorded time', () => {
  const MAX_AGE_ROWS = [
    { name: 'recorded 100 s ago, max_age=60: sign in again', ago: 100, maxAge: 60, step: 'sign-in' },
    { name: 'recorded 30 s ago, max_age=60: on to consent', ago: 30, maxAge: 60, step: 'consent' },
  ] as const;
  for (const row of MAX_AGE_ROWS) {
    it(row.name, async () => {
      const engine = await testEngine();
      try {
        await addClient(engine, { id: 'rp', scopes: ['openid'] });
        const user = await addUser(engine);
        const sessions = engine.engine.browserSessions;
        // The session starts now, but its sign-in was recorded `ago` seconds before.
        const id = await sessions.start(user.id, { method: 'password', at: engine.clock.now() - row.ago });
        const validation = await engine.validateAuthorization(
          new URLSearchParams({
            client_id: 'rp',
            redirect_uri: 'https://app.example/callback',
            response_type: 'code',
            scope: 'openid',
            state: 's',
            max_age: String(row.maxAge),
            code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
            code_challenge_method: 'S256',
          }).toString(),
        );
        assert.equal(validation.outcome, 'valid', JSON.stringify(validation));
        if (validation.outcome !== 'valid') return;
        const next = await engine.authorization.next(validation.request, await sessions.authentication(id));
        assert.equal(next.step, row.step);
        if (next.step === 'sign-in') {
          assert.equal(next.reason, 'max-age');
          assert.deepEqual(next.methods, ['password', 'passkey', 'synced-passkey', 'federated']);
        }
      } finally {
        await engine.close();
      }
    });
  }

  it('a signed-out browser is asked for a first-factor method: the password, a passkey or an upstream provider', async () => {
    const engine = await testEngine();
    try {
      await addClient(engine, { id: 'rp', scopes: ['openid'] });
      const validation = await engine.validateAuthorization(
        new URLSearchParams({
          client_id: 'rp',
          redirect_uri: 'https://app.example/callback',
          response_type: 'code',
          scope: 'openid',
          code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
          code_challenge_method: 'S256',
        }).toString(),
      );
      assert.equal(validation.outcome, 'valid', JSON.stringify(validation));
      if (validation.outcome !== 'valid') return;
      const next = await engine.authorization.next(validation.request, undefined);
      assert.deepEqual(next, {
        step: 'sign-in',
        reason: 'signed-out',
        methods: ['password', 'passkey', 'synced-passkey', 'federated'],
      });
    } finally {
      await engine.close();
    }
  });
});
