import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TokenEndpointRequest } from '../../src/core/token-endpoint/token-endpoint.js';
import { ACR_MULTI_FACTOR, assurance } from '../../src/core/sign-in/assurance.js';
import { isTotpCode, normalizeRecoveryCode } from '../../src/core/sign-in/second-factors.js';
import { matchTotpStep, totpCode, totpStep } from '../../src/core/sign-in/totp.js';
import { mustUseSecondFactor, type MfaPolicy } from '../../src/core/users/second-factor-policy.js';
import type { User } from '../../src/core/model.js';
import { addClient, addUser, basic, expectOAuthError, PASSWORD } from '../helpers/fakes/fixtures.js';
import { testEngine, type TestEngine } from '../helpers/fakes/test-engine.js';
import { appCode } from '../helpers/totp.js';

const HERE = '192.0.2.1';

/** A user with a confirmed authenticator app; returns the setup key, as the app would hold it. */
async function withApp(t: TestEngine, user: User): Promise<string> {
  const setUp = await t.engine.secondFactors.beginTotp(user);
  assert.ok(setUp);
  const result = await t.engine.confirmTotpSetUp({
    userId: user.id,
    code: appCode(setUp.secret, t.clock.now()),
    address: HERE,
  });
  assert.equal(result.outcome, 'signed-in');
  return setUp.secret;
}

describe('RFC 6238 codes (decision 34)', () => {
  it('the library computes what an app computes from the setup key', () => {
    const key = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
    for (const at of [0, 59, 1_111_111_109, 1_800_000_000]) assert.equal(totpCode(key, at), appCode(key, at));
  });

  // RFC 6238 §5.2: one step either way is accepted, no more.
  const WINDOW: { name: string; codeAt: number; accepted: boolean }[] = [
    { name: 'two steps old', codeAt: -60, accepted: false },
    { name: 'one step old', codeAt: -30, accepted: true },
    { name: 'this step', codeAt: 0, accepted: true },
    { name: 'one step ahead', codeAt: 30, accepted: true },
    { name: 'two steps ahead', codeAt: 60, accepted: false },
  ];
  for (const row of WINDOW) {
    it(`a code ${row.name}: ${row.accepted ? 'accepted' : 'refused'}`, () => {
      const key = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
      const now = 1_800_000_015;
      const step = matchTotpStep(key, appCode(key, now + row.codeAt), now);
      assert.equal(step, row.accepted ? totpStep(now + row.codeAt) : undefined);
    });
  }

  it('the Code field: six digits are the app, anything else a recovery code', () => {
    assert.equal(isTotpCode('123456'), true);
    assert.equal(isTotpCode('123 456'), true);
    assert.equal(isTotpCode('abcde-fghij'), false);
    assert.equal(normalizeRecoveryCode(' ABCDE-fghij '), 'abcdefghij');
  });
});

describe('a code is accepted once (decision 34)', () => {
  const ROWS: {
    name: string;
    /** Codes typed in order, each as seconds from now and a clock advance before it. */
    attempts: { advance: number; codeAt: number; expected: 'signed-in' | 'wrong-credentials' }[];
  }[] = [
    {
      name: 'the set-up code again: refused (its step is used)',
      attempts: [{ advance: 0, codeAt: 0, expected: 'wrong-credentials' }],
    },
    {
      name: 'the next step: accepted once, then refused',
      attempts: [
        { advance: 30, codeAt: 0, expected: 'signed-in' },
        { advance: 0, codeAt: 0, expected: 'wrong-credentials' },
      ],
    },
    {
      name: 'after a newer code, an older one still in the window: refused',
      attempts: [
        { advance: 60, codeAt: 30, expected: 'signed-in' },
        { advance: 0, codeAt: 0, expected: 'wrong-credentials' },
      ],
    },
  ];
  for (const row of ROWS) {
    it(row.name, async () => {
      const t = await testEngine();
      const user = await addUser(t);
      const key = await withApp(t, user);
      for (const attempt of row.attempts) {
        t.clock.advance(attempt.advance);
        const result = await t.engine.verifySecondFactor({
          userId: user.id,
          code: appCode(key, t.clock.now() + attempt.codeAt),
          address: HERE,
        });
        assert.equal(result.outcome, attempt.expected);
      }
      await t.close();
    });
  }

  it('two concurrent uses of one code: exactly one accepted', async () => {
    const t = await testEngine();
    const user = await addUser(t);
    const key = await withApp(t, user);
    t.clock.advance(30);
    const code = appCode(key, t.clock.now());
    const results = await Promise.all(
      [1, 2, 3].map(() => t.engine.verifySecondFactor({ userId: user.id, code, address: HERE })),
    );
    assert.equal(results.filter((result) => result.outcome === 'signed-in').length, 1);
    await t.close();
  });

  it('a recovery code works once, in any case and spacing; regenerating replaces them all', async () => {
    const t = await testEngine();
    const user = await addUser(t);
    const codes = await t.engine.secondFactors.generateRecoveryCodes(user.id);
    assert.equal(codes.length, 10);
    assert.equal(new Set(codes).size, 10);
    const use = (code: string) => t.engine.verifySecondFactor({ userId: user.id, code, address: HERE });
    const first = await use(codes[0]!.toUpperCase().replace('-', ' '));
    assert.equal(first.outcome, 'signed-in');
    assert.deepEqual(first.outcome === 'signed-in' && first.authentication.method, 'recovery-code');
    assert.equal((await use(codes[0]!)).outcome, 'wrong-credentials');
    assert.equal((await t.engine.secondFactors.status(user.id)).recoveryCodesLeft, 9);
    const fresh = await t.engine.secondFactors.generateRecoveryCodes(user.id);
    assert.equal((await use(codes[1]!)).outcome, 'wrong-credentials', 'the old codes are gone');
    assert.equal((await use(fresh[1]!)).outcome, 'signed-in');
    assert.equal((await t.engine.secondFactors.status(user.id)).recoveryCodesLeft, 9);
    await t.close();
  });

  it('the secret is stored sealed, never in the clear', async () => {
    const t = await testEngine();
    const user = await addUser(t);
    const key = await withApp(t, user);
    const stored = await t.storage.secondFactors.getTotp(user.id);
    assert.ok(stored);
    assert.ok(!stored.secretSealed.includes(key));
    assert.ok(!Buffer.from(stored.secretSealed, 'base64url').toString('latin1').includes(key));
    await t.close();
  });
});

describe('wrong codes count toward the password lockout (decisions 8, 30, 34)', () => {
  it('after the allowance, codes and then the password are refused from that source', async () => {
    const t = await testEngine({ passwordFailuresPerUsername: 3 });
    const user = await addUser(t);
    await withApp(t, user);
    const outcomes: string[] = [];
    for (let i = 0; i < 4; i++) {
      const result = await t.engine.verifySecondFactor({ userId: user.id, code: '000000', address: HERE });
      outcomes.push(result.outcome);
    }
    assert.deepEqual(outcomes, ['wrong-credentials', 'wrong-credentials', 'wrong-credentials', 'throttled']);
    const password = await t.engine.signIn({ username: user.username, password: PASSWORD, address: HERE });
    assert.equal(password.outcome, 'throttled');
    const elsewhere = await t.engine.signIn({
      username: user.username,
      password: PASSWORD,
      address: '198.51.100.7',
    });
    assert.equal(elsewhere.outcome, 'signed-in', 'another source is not locked out');
    await t.close();
  });
});

describe('who must use a second factor (GATEHOUSE_REQUIRE_MFA, require_mfa)', () => {
  const ROWS: { policy: MfaPolicy; admin: boolean; clientRequires: boolean | undefined; must: boolean }[] = [
    { policy: 'off', admin: false, clientRequires: undefined, must: false },
    { policy: 'off', admin: true, clientRequires: undefined, must: false },
    { policy: 'off', admin: false, clientRequires: true, must: true },
    { policy: 'admins', admin: false, clientRequires: false, must: false },
    { policy: 'admins', admin: true, clientRequires: undefined, must: true },
    { policy: 'all', admin: false, clientRequires: undefined, must: true },
    { policy: 'all', admin: false, clientRequires: false, must: true },
  ];
  for (const row of ROWS) {
    it(`${row.policy}, ${row.admin ? 'an administrator' : 'a user'}, client require_mfa ${row.clientRequires}: ${row.must}`, () => {
      const client = row.clientRequires === undefined ? undefined : { requireMfa: row.clientRequires };
      assert.equal(mustUseSecondFactor(row.policy, { admin: row.admin }, client), row.must);
    });
  }

  const STEPS: { name: string; policy: MfaPolicy; app: boolean; clientRequires: boolean; step: string }[] = [
    { name: 'no app, not required', policy: 'off', app: false, clientRequires: false, step: 'complete' },
    {
      name: 'an app, not required: asked anyway',
      policy: 'off',
      app: true,
      clientRequires: false,
      step: 'verify',
    },
    { name: 'no app, the client requires', policy: 'off', app: false, clientRequires: true, step: 'set-up' },
    { name: 'no app, everyone must', policy: 'all', app: false, clientRequires: false, step: 'set-up' },
    { name: 'an app, everyone must', policy: 'all', app: true, clientRequires: false, step: 'verify' },
  ];
  for (const row of STEPS) {
    it(`after the password: ${row.name} → ${row.step}`, async () => {
      const t = await testEngine({ requireMfa: row.policy });
      const user = await addUser(t);
      if (row.app) await withApp(t, user);
      const step = await t.engine.secondFactors.afterPassword(user, { requireMfa: row.clientRequires });
      assert.equal(step, row.step);
      await t.close();
    });
  }
});

describe('is a sign-in enough for the client? (decision 34)', () => {
  const ROWS: { policy: MfaPolicy; clientRequires: boolean; amr: string[] | undefined; enough: boolean }[] = [
    { policy: 'off', clientRequires: false, amr: ['pwd'], enough: true },
    { policy: 'off', clientRequires: true, amr: ['pwd'], enough: false },
    { policy: 'off', clientRequires: true, amr: ['pwd', 'otp', 'mfa'], enough: true },
    { policy: 'all', clientRequires: false, amr: ['pwd'], enough: false },
    { policy: 'all', clientRequires: false, amr: undefined, enough: false },
    { policy: 'all', clientRequires: false, amr: ['pwd', 'otp', 'mfa'], enough: true },
  ];
  for (const row of ROWS) {
    it(`${row.policy}, client require_mfa ${row.clientRequires}, amr ${row.amr?.join(' ')}: ${row.enough}`, async () => {
      const t = await testEngine({ requireMfa: row.policy });
      const user = await addUser(t);
      const authentication = row.amr === undefined ? undefined : { amr: row.amr };
      assert.equal(
        t.engine.secondFactors.satisfies(user, authentication, { requireMfa: row.clientRequires }),
        row.enough,
      );
      await t.close();
    });
  }
});

describe('the password grant cannot ask for a code (decision 34)', () => {
  const ROWS: { name: string; policy: MfaPolicy; app: boolean; clientRequires: boolean; refused: boolean }[] =
    [
      {
        name: 'a user without a second factor',
        policy: 'off',
        app: false,
        clientRequires: false,
        refused: false,
      },
      {
        name: 'a user with an authenticator app',
        policy: 'off',
        app: true,
        clientRequires: false,
        refused: true,
      },
      {
        name: 'a client that requires two factors',
        policy: 'off',
        app: false,
        clientRequires: true,
        refused: true,
      },
      { name: 'GATEHOUSE_REQUIRE_MFA=all', policy: 'all', app: false, clientRequires: false, refused: true },
    ];
  for (const row of ROWS) {
    it(`${row.name}: ${row.refused ? 'invalid_grant' : 'tokens'}`, async () => {
      const t = await testEngine({ requireMfa: row.policy });
      const user = await addUser(t);
      if (row.app) await withApp(t, user);
      const { client, secret } = await addClient(t, {
        grantTypes: ['password'],
        requireMfa: row.clientRequires,
      });
      const request: TokenEndpointRequest = {
        authorization: basic(client.id, secret),
        params: { grant_type: 'password', username: user.username, password: PASSWORD },
        address: HERE,
      };
      if (row.refused) {
        await expectOAuthError(t.token(request), {
          code: 'invalid_grant',
          status: 400,
          description: /second factor/,
        });
      } else {
        assert.ok((await t.token(request)).access_token);
      }
      await t.close();
    });
  }
});

describe('a password then a code make a multi-factor session (decision 30)', () => {
  it('the session records both, and reports mfa', async () => {
    const t = await testEngine();
    const user = await addUser(t);
    const password = await t.engine.signIn({ username: user.username, password: PASSWORD, address: HERE });
    assert.equal(password.outcome, 'signed-in');
    const codes = await t.engine.secondFactors.generateRecoveryCodes(user.id);
    t.clock.advance(20);
    const code = await t.engine.verifySecondFactor({ userId: user.id, code: codes[0]!, address: HERE });
    assert.ok(password.outcome === 'signed-in' && code.outcome === 'signed-in');
    const browserId = await t.engine.browserSessions.start(user.id, [
      password.authentication,
      code.authentication,
    ]);
    const authentication = await t.engine.browserSessions.authentication(browserId);
    assert.deepEqual(authentication?.amr, ['pwd', 'otp', 'mfa']);
    assert.equal(authentication?.acr, ACR_MULTI_FACTOR);
    assert.equal(authentication?.authTime, t.clock.now());
    assert.equal(
      assurance([
        { method: 'password', at: 1 },
        { method: 'totp', at: 2 },
      ]).acr,
      ACR_MULTI_FACTOR,
    );
    await t.close();
  });
});

describe('require_mfa at dynamic registration: only with an initial access token (decision 34)', () => {
  const METADATA = { redirect_uris: ['https://app.example/cb'], require_mfa: true };
  it('an open registration asking for it is refused; one with an operator token gets it', async () => {
    const t = await testEngine({ dynamicRegistration: 'open' });
    await assert.rejects(t.engine.registration.register(METADATA, undefined), (error: Error) => {
      assert.match(
        error.message,
        /require_mfa is set only by a registration with an operator's initial access token/,
      );
      return true;
    });
    const open = await t.engine.registration.register({ ...METADATA, require_mfa: false }, undefined);
    assert.equal(open.require_mfa, false);
    const { token } = await t.engine.initialAccessTokens.create({});
    const registered = await t.engine.registration.register(METADATA, token);
    assert.equal(registered.require_mfa, true);
    assert.equal((await t.storage.clients.get(registered.client_id))?.requireMfa, true);
    await assert.rejects(
      t.engine.registration.register({ ...METADATA, require_mfa: 'yes' }, token),
      /true or false/,
    );
    await t.close();
  });
});
