import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assurance, ACR_PHISHING_RESISTANT } from '../../src/core/sign-in/assurance.js';
import { PASSKEY, PASSWORD, SYNCED_PASSKEY } from '../../src/core/sign-in/methods.js';
import {
  judgeAssertion,
  passkeyName,
  type AssertionVerdict,
  type ObservedAssertion,
  type StoredCredentialState,
} from '../../src/core/sign-in/passkey-rules.js';
import { WEBAUTHN_CHALLENGE_TTL } from '../../src/core/sign-in/passkeys.js';
import { BrowserSessions } from '../../src/core/sign-in/browser-sessions.js';
import { addUser } from '../helpers/fakes/fixtures.js';
import { ISSUER, testEngine, type TestEngine } from '../helpers/fakes/test-engine.js';
import { SoftwareAuthenticator } from '../helpers/software-authenticator.js';

describe('the assertion rules (decision 33)', () => {
  const verified = { userVerified: true, backupEligible: false, backedUp: false };
  const rows: Array<{
    name: string;
    stored: StoredCredentialState;
    observed: ObservedAssertion;
    expected: AssertionVerdict;
  }> = [
    {
      name: 'a counter that went up is kept',
      stored: { signCount: 4, backupEligible: false },
      observed: { ...verified, signCount: 5 },
      expected: { verdict: 'accepted', signCount: 5, backedUp: false },
    },
    {
      name: 'a counter that jumped is kept (uses elsewhere are not a clone)',
      stored: { signCount: 4, backupEligible: false },
      observed: { ...verified, signCount: 400 },
      expected: { verdict: 'accepted', signCount: 400, backedUp: false },
    },
    {
      name: 'a first use after a registration at 0',
      stored: { signCount: 0, backupEligible: false },
      observed: { ...verified, signCount: 1 },
      expected: { verdict: 'accepted', signCount: 1, backedUp: false },
    },
    {
      name: 'both zero: an authenticator that keeps no counter',
      stored: { signCount: 0, backupEligible: true },
      observed: { ...verified, backupEligible: true, backedUp: true, signCount: 0 },
      expected: { verdict: 'accepted', signCount: 0, backedUp: true },
    },
    {
      name: 'the same counter again: cloned',
      stored: { signCount: 4, backupEligible: false },
      observed: { ...verified, signCount: 4 },
      expected: { verdict: 'refused', reason: 'cloned' },
    },
    {
      name: 'a counter gone back: cloned',
      stored: { signCount: 4, backupEligible: false },
      observed: { ...verified, signCount: 2 },
      expected: { verdict: 'refused', reason: 'cloned' },
    },
    {
      name: 'a counter gone back to 0 after counting: cloned',
      stored: { signCount: 4, backupEligible: false },
      observed: { ...verified, signCount: 0 },
      expected: { verdict: 'refused', reason: 'cloned' },
    },
    {
      name: 'no user verification',
      stored: { signCount: 4, backupEligible: false },
      observed: { ...verified, userVerified: false, signCount: 5 },
      expected: { verdict: 'refused', reason: 'user-not-verified' },
    },
    {
      name: 'a device-bound credential turned backup-eligible',
      stored: { signCount: 4, backupEligible: false },
      observed: { ...verified, backupEligible: true, signCount: 5 },
      expected: { verdict: 'refused', reason: 'backup-eligibility-changed' },
    },
    {
      name: 'a synced credential no longer backup-eligible',
      stored: { signCount: 0, backupEligible: true },
      observed: { ...verified, signCount: 0 },
      expected: { verdict: 'refused', reason: 'backup-eligibility-changed' },
    },
    {
      name: 'a synced credential no longer backed up: kept as it is now',
      stored: { signCount: 0, backupEligible: true },
      observed: { ...verified, backupEligible: true, backedUp: false, signCount: 0 },
      expected: { verdict: 'accepted', signCount: 0, backedUp: false },
    },
  ];
  for (const row of rows) {
    it(row.name, () => assert.deepEqual(judgeAssertion(row.stored, row.observed), row.expected));
  }

  it('names: trimmed, spaces folded, 1 to 64 characters', () => {
    assert.equal(passkeyName('  My   laptop '), 'My laptop');
    assert.equal(passkeyName('   '), undefined);
    assert.equal(passkeyName('x'.repeat(64)), 'x'.repeat(64));
    assert.equal(passkeyName('x'.repeat(65)), undefined);
  });

  it('amr and acr: a passkey alone is phishing-resistant and two kinds of factor', () => {
    assert.deepEqual(assurance([{ method: PASSKEY.name, at: 10 }]), {
      authTime: 10,
      amr: ['hwk', 'user', 'mfa'],
      acr: ACR_PHISHING_RESISTANT,
    });
    assert.deepEqual(assurance([{ method: SYNCED_PASSKEY.name, at: 10 }]).amr, ['swk', 'user', 'mfa']);
    assert.deepEqual(
      assurance([
        { method: PASSWORD.name, at: 10 },
        { method: SYNCED_PASSKEY.name, at: 12 },
      ]),
      { authTime: 12, amr: ['pwd', 'swk', 'user', 'mfa'], acr: ACR_PHISHING_RESISTANT },
    );
  });
});

const ADDRESS = '192.0.2.9';

async function registered(
  t: TestEngine,
  options: { backupEligible?: boolean; origin?: string } = {},
): Promise<{ authenticator: SoftwareAuthenticator; userId: string; username: string }> {
  const user = await addUser(t);
  const browserId = BrowserSessions.newBrowserId();
  const authenticator = new SoftwareAuthenticator({ origin: options.origin ?? ISSUER, ...options });
  const creation = await t.engine.passkeys.registrationOptions(user, browserId);
  const result = await t.engine.passkeys.register(user, browserId, {
    name: 'Laptop',
    credential: authenticator.create(creation),
  });
  assert.equal(result.outcome, 'added');
  return { authenticator, userId: user.id, username: user.username };
}

async function signIn(t: TestEngine, authenticator: SoftwareAuthenticator, browserId?: string) {
  const browser = BrowserSessions.newBrowserId();
  const options = await t.engine.passkeys.signInOptions(browser);
  return t.engine.passkeys.signIn({
    credential: authenticator.get(options),
    browserId: browserId ?? browser,
    address: ADDRESS,
  });
}

describe('passkey ceremonies on the engine (decision 33)', () => {
  it('registers with the issuer’s host as relying party, discoverable and verified', async () => {
    const t = await testEngine();
    const user = await addUser(t);
    const options = await t.engine.passkeys.registrationOptions(user, BrowserSessions.newBrowserId());
    assert.equal(options.rp.id, 'gatehouse.test');
    assert.deepEqual(options.authenticatorSelection?.residentKey, 'required');
    assert.deepEqual(options.authenticatorSelection?.userVerification, 'required');
    assert.equal(options.attestation, 'none');
    assert.equal(options.timeout, WEBAUTHN_CHALLENGE_TTL * 1000);
    assert.equal(Buffer.from(options.user.id, 'base64url').toString(), user.id);
  });

  it('signs in without a user name; the method says device-bound or synced; the use is recorded', async () => {
    const t = await testEngine();
    for (const [backupEligible, method] of [
      [false, PASSKEY.name],
      [true, SYNCED_PASSKEY.name],
    ] as const) {
      const { authenticator, userId } = await registered(t, { backupEligible });
      const options = await t.engine.passkeys.signInOptions(BrowserSessions.newBrowserId());
      assert.deepEqual(options.allowCredentials, []);
      assert.equal(options.userVerification, 'required');
      const result = await signIn(t, authenticator);
      assert.equal(result.outcome, 'signed-in');
      assert.equal(result.outcome === 'signed-in' && result.user.id, userId);
      assert.deepEqual(result.outcome === 'signed-in' && result.authentication, {
        method,
        at: t.clock.now(),
      });
      const [stored] = await t.engine.passkeys.list(userId);
      assert.equal(stored?.signCount, 1);
      assert.equal(stored?.backupEligible, backupEligible);
      assert.equal(stored?.lastUsedAt, t.clock.now());
    }
  });

  it('refuses a cloned authenticator (its counter behind the stored one)', async () => {
    const t = await testEngine();
    const { authenticator } = await registered(t);
    const clone = authenticator.clone(0);
    assert.equal((await signIn(t, authenticator)).outcome, 'signed-in');
    assert.equal((await signIn(t, authenticator)).outcome, 'signed-in');
    // The clone's count (1) is behind the stored 2.
    assert.equal((await signIn(t, clone)).outcome, 'wrong-credentials');
    assert.equal((await signIn(t, authenticator)).outcome, 'signed-in');
  });

  it('refuses an assertion without user verification, another origin, another browser, a replay', async () => {
    const t = await testEngine();
    const { authenticator } = await registered(t);
    authenticator.userVerified = false;
    assert.equal((await signIn(t, authenticator)).outcome, 'wrong-credentials');
    authenticator.userVerified = true;

    authenticator.origin = 'https://gatehouse.test.evil.example';
    assert.equal((await signIn(t, authenticator)).outcome, 'wrong-credentials');
    authenticator.origin = ISSUER;

    // A challenge issued to another browser is not this one's.
    assert.equal(
      (await signIn(t, authenticator, BrowserSessions.newBrowserId())).outcome,
      'wrong-credentials',
    );

    // The same answer twice: the challenge was taken by the first.
    const browserId = BrowserSessions.newBrowserId();
    const credential = authenticator.get(await t.engine.passkeys.signInOptions(browserId));
    const once = await t.engine.passkeys.signIn({ credential, browserId, address: ADDRESS });
    assert.equal(once.outcome, 'signed-in');
    const again = await t.engine.passkeys.signIn({ credential, browserId, address: ADDRESS });
    assert.equal(again.outcome, 'wrong-credentials');
  });

  it('refuses an answer after the challenge expired', async () => {
    const t = await testEngine();
    const { authenticator } = await registered(t);
    const browserId = BrowserSessions.newBrowserId();
    const credential = authenticator.get(await t.engine.passkeys.signInOptions(browserId));
    t.clock.advance(WEBAUTHN_CHALLENGE_TTL);
    const result = await t.engine.passkeys.signIn({ credential, browserId, address: ADDRESS });
    assert.equal(result.outcome, 'wrong-credentials');
  });

  it('refuses a registration answered to another user’s challenge, or one already registered', async () => {
    const t = await testEngine();
    const [alice, bob] = [await addUser(t), await addUser(t)];
    const browserId = BrowserSessions.newBrowserId();
    const authenticator = new SoftwareAuthenticator({ origin: ISSUER });
    const forAlice = await t.engine.passkeys.registrationOptions(alice, browserId);
    const credential = authenticator.create(forAlice);
    assert.equal(
      (await t.engine.passkeys.register(bob, browserId, { name: 'x', credential })).outcome,
      'refused',
    );
    const again = await t.engine.passkeys.registrationOptions(alice, browserId);
    assert.deepEqual(
      (
        await t.engine.passkeys.register(alice, browserId, {
          name: ' ',
          credential: authenticator.create(again),
        })
      ).outcome,
      'invalid-name',
    );
    const third = await t.engine.passkeys.registrationOptions(alice, browserId);
    const added = await t.engine.passkeys.register(alice, browserId, {
      name: 'Key',
      credential: authenticator.create(third),
    });
    assert.equal(added.outcome, 'added');
    // Registered: the next options exclude it, and registering it again (for anyone) is refused.
    const fourth = await t.engine.passkeys.registrationOptions(bob, browserId);
    const forBob = await t.engine.passkeys.registrationOptions(bob, browserId);
    assert.deepEqual((await t.engine.passkeys.registrationOptions(alice, browserId)).excludeCredentials, [
      { id: authenticator.credentialId, type: 'public-key', transports: ['internal'] },
    ]);
    assert.equal(fourth.excludeCredentials?.length, 0);
    assert.equal(
      (
        await t.engine.passkeys.register(bob, browserId, {
          name: 'Mine',
          credential: authenticator.create(forBob),
        })
      ).outcome,
      'refused',
    );
  });

  it('as a second factor: only that user’s passkeys, and failures count toward the lockout', async () => {
    const t = await testEngine({ passwordFailuresPerUsername: 2 });
    const alice = await registered(t);
    const bob = await registered(t);
    const browserId = BrowserSessions.newBrowserId();
    const options = await t.engine.passkeys.secondFactorOptions(alice.userId, browserId);
    assert.deepEqual(
      options?.allowCredentials?.map((c) => c.id),
      [alice.authenticator.credentialId],
    );
    assert.equal(await t.engine.passkeys.secondFactorOptions((await addUser(t)).id, browserId), undefined);
    // Bob's passkey is not Alice's second factor.
    const wrong = await t.engine.passkeys.secondFactor({
      userId: alice.userId,
      credential: bob.authenticator.get(options!),
      browserId,
      address: ADDRESS,
    });
    assert.equal(wrong.outcome, 'wrong-credentials');
    const right = await t.engine.passkeys.secondFactor({
      userId: alice.userId,
      credential: alice.authenticator.get(
        (await t.engine.passkeys.secondFactorOptions(alice.userId, browserId))!,
      ),
      browserId,
      address: ADDRESS,
    });
    assert.equal(right.outcome, 'signed-in');
    assert.equal(right.outcome === 'signed-in' && right.authentication.method, PASSKEY.name);

    // Failing assertions of one user lock (user, source) as wrong passwords do.
    alice.authenticator.userVerified = false;
    for (let i = 0; i < 2; i++)
      assert.equal((await signIn(t, alice.authenticator)).outcome, 'wrong-credentials');
    alice.authenticator.userVerified = true;
    assert.equal((await signIn(t, alice.authenticator)).outcome, 'throttled');
  });
});
