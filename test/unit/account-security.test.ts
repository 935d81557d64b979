import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { User } from '../../src/core/model.js';
import { lockoutKey, sourceFailuresKey } from '../../src/core/users/account-lockout.js';
import {
  AccountSecurity,
  passwordSummary,
  type SignInMethodSummarySource,
} from '../../src/core/sign-in/account-security.js';
import {
  ACTIVITY_WRITE_INTERVAL,
  BrowserSessions,
  sessionId,
  USER_AGENT_MAX_LENGTH,
} from '../../src/core/sign-in/browser-sessions.js';
import { PASSWORD as PASSWORD_METHOD } from '../../src/core/sign-in/methods.js';
import { PasswordAuthenticator } from '../../src/core/sign-in/password-authenticator.js';
import { SignInService } from '../../src/core/sign-in/sign-in-service.js';
import { sha256 } from '../../src/shared/crypto.js';
import { addClient, addUser, PASSWORD } from '../helpers/fakes/fixtures.js';
import { START, testEngine, type TestEngine } from '../helpers/fakes/test-engine.js';

const HERE = '192.0.2.1';
const CHROME =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';
const NEW_PASSWORD = 'a new password, long enough';

/** What the throttle store holds for the user's (name, source) pair and for the source. */
async function counted(t: TestEngine, user: User): Promise<{ pair: number; source: number }> {
  const now = t.clock.now();
  return {
    pair: (await t.storage.throttle.peek(lockoutKey(user.username, HERE), now)).count,
    source: (await t.storage.throttle.peek(sourceFailuresKey(HERE), now)).count,
  };
}

const password = { method: PASSWORD_METHOD.name, at: START };

describe('browser sessions record their device and activity (decision 37)', () => {
  it('start records the sid, the cleaned User-Agent and address, and the sign-in as last activity', async () => {
    const t = await testEngine();
    const user = await addUser(t);
    const sessions = t.engine.browserSessions;
    const id = await sessions.start(user.id, password, {
      userAgent: `${CHROME}\u0000\n${'x'.repeat(400)}`,
      address: HERE,
    });
    const stored = await t.storage.browserSessions.get(sha256(id), START);
    assert.equal(stored?.sid, sessionId(sha256(id)), 'the sid ID tokens already carried');
    assert.equal(stored?.userAgent?.length, USER_AGENT_MAX_LENGTH);
    assert.ok(stored?.userAgent?.startsWith(`${CHROME} x`), 'control characters become a space');
    assert.equal(stored?.address, HERE);
    assert.equal(stored?.lastActiveAt, START);
  });

  it('writes the last activity at most once every ACTIVITY_WRITE_INTERVAL', async () => {
    const t = await testEngine();
    const user = await addUser(t);
    const sessions = t.engine.browserSessions;
    const id = await sessions.start(user.id, password);
    const lastActive = async () =>
      (await t.storage.browserSessions.get(sha256(id), t.clock.now()))?.lastActiveAt;
    const rows: { advance: number; expected: number }[] = [
      { advance: 60, expected: START },
      { advance: ACTIVITY_WRITE_INTERVAL - 60, expected: START },
      { advance: 1, expected: START + ACTIVITY_WRITE_INTERVAL + 1 },
      { advance: 10, expected: START + ACTIVITY_WRITE_INTERVAL + 1 },
    ];
    for (const row of rows) {
      t.clock.advance(row.advance);
      assert.ok(await sessions.signedIn(id));
      assert.equal(await lastActive(), row.expected, `after ${t.clock.now() - START} s`);
    }
  });

  it('a disabled user is signed in nowhere, even in a session that still exists', async () => {
    const t = await testEngine();
    const user = await addUser(t);
    const id = await t.engine.browserSessions.start(user.id, password);
    assert.equal((await t.engine.browserSessions.signedIn(id))?.user.id, user.id);
    await t.storage.users.update({ ...user, disabled: true });
    assert.equal(await t.engine.browserSessions.signedIn(id), undefined);
    const client = await addClient(t);
    assert.equal(await t.engine.browserSessions.signedInFor(id, client.client.id), undefined);
  });

  it('renew keeps the session (sid, creation, record) under a new cookie, auth_time moved', async () => {
    const t = await testEngine();
    const user = await addUser(t);
    const other = await addUser(t);
    const sessions = t.engine.browserSessions;
    const id = await sessions.start(user.id, password, { userAgent: 'first', address: HERE });
    const before = await sessions.signedIn(id);
    t.clock.advance(3600);
    const again = { method: PASSWORD_METHOD.name, at: t.clock.now() };
    assert.equal(await sessions.renew(id, other.id, again), undefined, 'not another user’s session');
    assert.equal(await sessions.renew(undefined, user.id, again), undefined);
    const renewed = await sessions.renew(id, user.id, again, { userAgent: 'second', address: '192.0.2.9' });
    assert.ok(renewed !== undefined && renewed !== id);
    assert.equal(await sessions.signedIn(id), undefined, 'the old cookie signs nobody in');
    const after = await sessions.signedIn(renewed);
    assert.equal(after?.authentication.sid, before?.authentication.sid);
    assert.equal(after?.authentication.authTime, START + 3600);
    const stored = await t.storage.browserSessions.get(sha256(renewed), t.clock.now());
    assert.deepEqual(stored?.authentications, [password, again]);
    assert.equal(stored?.createdAt, START);
    assert.equal(stored?.userAgent, 'second');
    // Renewed without a device: the session keeps the one it had.
    t.clock.advance(60);
    const third = await sessions.renew(renewed, user.id, { method: PASSWORD_METHOD.name, at: t.clock.now() });
    const kept = await t.storage.browserSessions.get(sha256(third ?? ''), t.clock.now());
    assert.deepEqual([kept?.userAgent, kept?.address], ['second', '192.0.2.9']);
  });

  it('lists the user’s sessions, this browser marked; ends only the user’s own', async () => {
    const t = await testEngine();
    const user = await addUser(t);
    const stranger = await addUser(t);
    const sessions = t.engine.browserSessions;
    const here = await sessions.start(user.id, password, { userAgent: CHROME, address: HERE });
    t.clock.advance(10);
    const phone = await sessions.start(user.id, password, { address: '198.51.100.7' });
    t.clock.advance(10);
    const laptop = await sessions.start(user.id, password);
    const theirs = await sessions.start(stranger.id, password);
    const listed = await sessions.list(user.id, here);
    assert.deepEqual(
      listed.map(({ current, address, userAgent }) => ({ current, address, userAgent })),
      [
        { current: true, address: HERE, userAgent: CHROME },
        { current: false, address: '198.51.100.7', userAgent: undefined },
        { current: false, address: undefined, userAgent: undefined },
      ],
    );
    const theirSid = (await sessions.signedIn(theirs))?.authentication.sid ?? '';
    assert.equal(await sessions.endOf(user.id, theirSid), false, 'another user’s sid names nothing');
    assert.ok(await sessions.signedIn(theirs), 'and ends nothing');
    assert.equal(await sessions.endOf(user.id, 'no such sid'), false);
    const phoneSid = (await sessions.signedIn(phone))?.authentication.sid ?? '';
    assert.equal(await sessions.endOf(user.id, phoneSid), true);
    assert.equal(await sessions.signedIn(phone), undefined);
    assert.equal(await sessions.endOthers(user.id, here), 1);
    assert.equal(await sessions.signedIn(laptop), undefined);
    assert.ok(await sessions.signedIn(here));
    assert.equal(await sessions.count(user.id), 1);
    assert.equal(await sessions.count(stranger.id), 1);
  });
});

describe('a disabled user cannot sign in by any method (decision 37)', () => {
  it('SignInService answers disabled only after the right secret, and keeps the attempt counted', async () => {
    const t = await testEngine();
    const user = await addUser(t);
    await t.storage.users.update({ ...user, disabled: true });
    const service = new SignInService(t.storage.throttle, t.clock, {
      failuresPerUsername: 3,
      failuresPerAddress: 5,
      windowSeconds: 900,
    });
    const passwords = new PasswordAuthenticator(t.storage.users, t.clock);
    const rows = [
      { password: 'wrong password', outcome: 'wrong-credentials', pair: 1, source: 1 },
      { password: PASSWORD, outcome: 'disabled', pair: 2, source: 1 },
      { password: PASSWORD, outcome: 'disabled', pair: 3, source: 1 },
      // Every attempt is counted when it is reserved, a refused one too (AccountLockout.reserve).
      { password: PASSWORD, outcome: 'throttled', pair: 4, source: 1 },
    ];
    for (const row of rows) {
      const result = await service.attempt(
        passwords,
        { username: user.username, password: row.password },
        { address: HERE },
      );
      assert.equal(result.outcome, row.outcome, row.password);
      assert.deepEqual(await counted(t, user), { pair: row.pair, source: row.source });
    }
  });

  it('disabling ends every session and grant; enabling brings none back', async () => {
    const t = await testEngine();
    const user = await addUser(t);
    const { client } = await addClient(t);
    const id = await t.engine.browserSessions.start(user.id, password);
    const grant = {
      id: 'g-1',
      clientId: client.id,
      userId: user.id,
      scope: ['read'],
      createdAt: START,
      expiresAt: null,
      revokedAt: null,
    };
    await t.storage.grants.insert(grant);
    const disabled = await t.users.update(user, { disabled: true });
    assert.equal(disabled.disabled, true);
    assert.equal(await t.storage.browserSessions.get(sha256(id), START), undefined);
    assert.equal((await t.storage.grants.get('g-1'))?.revokedAt, START);
    assert.equal(
      (await t.engine.signIn({ username: user.username, password: PASSWORD, address: HERE })).outcome,
      'disabled',
    );
    const enabled = await t.users.update(disabled, { disabled: false });
    assert.equal(enabled.disabled, false);
    assert.equal((await t.storage.grants.get('g-1'))?.revokedAt, START, 'the grant stays revoked');
    assert.equal(
      (await t.engine.signIn({ username: user.username, password: PASSWORD, address: HERE })).outcome,
      'signed-in',
    );
    await assert.rejects(t.users.update(enabled, { disabled: 'yes' }), /disabled: must be true or false/);
  });
});

describe('Change password (decision 37)', () => {
  async function world() {
    const t = await testEngine({ passwordFailuresPerUsername: 3 });
    const user = await addUser(t);
    const here = await t.engine.browserSessions.start(user.id, password);
    const elsewhere = await t.engine.browserSessions.start(user.id, password);
    const { client } = await addClient(t);
    await t.storage.grants.insert({
      id: 'g-1',
      clientId: client.id,
      userId: user.id,
      scope: ['read'],
      createdAt: START,
      expiresAt: null,
      revokedAt: null,
    });
    const change = (currentPassword: string, newPassword = NEW_PASSWORD) =>
      t.engine.account.changePassword({ user, browserId: here, currentPassword, newPassword, address: HERE });
    return { t, user, here, elsewhere, change };
  }

  it('refuses a new password out of the rules without checking (or counting) the current one', async () => {
    const { t, user, change } = await world();
    assert.deepEqual(await change('wrong password', 'short'), { outcome: 'invalid-new-password' });
    assert.deepEqual(await counted(t, user), { pair: 0, source: 0 });
  });

  it('a wrong current password counts toward the sign-in lockout, then is throttled', async () => {
    const { t, user, here, change } = await world();
    for (const pair of [1, 2, 3]) {
      assert.deepEqual(await change('wrong password'), { outcome: 'wrong-password' });
      assert.equal((await counted(t, user)).pair, pair);
    }
    assert.equal((await change(PASSWORD)).outcome, 'throttled', 'even the right one, while locked');
    assert.ok(await t.engine.browserSessions.signedIn(here), 'nothing else changed');
    assert.equal(
      (await t.engine.signIn({ username: user.username, password: PASSWORD, address: '198.51.100.1' }))
        .outcome,
      'signed-in',
      'the old password still works from elsewhere',
    );
  });

  it('the right one: the password changes, other sessions and grants end, this browser stays signed in', async () => {
    const { t, user, here, elsewhere, change } = await world();
    t.clock.advance(600);
    const before = await t.engine.browserSessions.signedIn(here);
    const result = await change(PASSWORD);
    assert.equal(result.outcome, 'changed');
    assert.ok(result.outcome === 'changed');
    assert.equal(await t.engine.browserSessions.signedIn(elsewhere), undefined);
    assert.equal(await t.engine.browserSessions.signedIn(here), undefined, 'the old cookie is renewed');
    const now = await t.engine.browserSessions.signedIn(result.browserId);
    assert.equal(now?.authentication.sid, before?.authentication.sid, 'the same session');
    assert.equal(now?.authentication.authTime, START + 600, 'the password just proved is recorded');
    assert.equal((await t.storage.grants.get('g-1'))?.revokedAt, START + 600);
    const signIn = (pw: string) => t.engine.signIn({ username: user.username, password: pw, address: HERE });
    assert.equal((await signIn(PASSWORD)).outcome, 'wrong-credentials');
    assert.equal((await signIn(NEW_PASSWORD)).outcome, 'signed-in');
  });
});

describe('a user’s summary: each method contributes its line (decision 37)', () => {
  it('lists the password and sessions, and what another method’s source adds', async () => {
    const t = await testEngine();
    const user = await addUser(t);
    await t.engine.browserSessions.start(user.id, password);
    assert.deepEqual(await t.engine.account.summary(user), {
      user,
      methods: [{ method: 'password', description: 'set' }],
      sessions: 1,
    });
    const passkeys: SignInMethodSummarySource = async () => ({
      method: 'passkey',
      description: '2 passkeys',
      count: 2,
    });
    const none: SignInMethodSummarySource = async () => undefined;
    const account = new AccountSecurity({
      storage: t.storage,
      users: t.users,
      sessions: new BrowserSessions(t.storage.browserSessions, t.clock),
      signIns: new SignInService(t.storage.throttle, t.clock, {
        failuresPerUsername: 3,
        failuresPerAddress: 5,
        windowSeconds: 900,
      }),
      passwords: new PasswordAuthenticator(t.storage.users, t.clock),
      summaries: [passwordSummary, passkeys, none],
    });
    assert.deepEqual((await account.summary(user)).methods, [
      { method: 'password', description: 'set' },
      { method: 'passkey', description: '2 passkeys', count: 2 },
    ]);
    assert.deepEqual((await account.summary({ ...user, passwordHash: '' })).methods.length, 1);
  });
});
