import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MailMessage, Mailer } from '../../src/core/ports.js';
import { userClaims } from '../../src/core/scopes/claims.js';
import {
  MAIL_LINK_TTL_SECONDS,
  MAILS_PER_USER_PER_HOUR,
  type MailFailure,
} from '../../src/core/users/account-mail.js';
import { ValidationError } from '../../src/core/validation.js';
import { createLogMailer } from '../../src/outbound/log-mailer.js';
import { sha256 } from '../../src/shared/crypto.js';
import { addClient, addUser, PASSWORD, seedCode } from '../helpers/fakes/fixtures.js';
import { ISSUER, testEngine } from '../helpers/fakes/test-engine.js';

const NEW_PASSWORD = 'a new and longer password';

/** A mailer that keeps what it is given: the engine's mails, read back by the test. */
function mailbox(): Mailer & { mails: MailMessage[] } {
  const mails: MailMessage[] = [];
  return {
    mails,
    async send(message) {
      mails.push(message);
    },
  };
}

const failOnError: MailFailure = (error) => {
  throw error;
};

/** The token of the link of `purpose` in a mail (the whole URL is the engine's policy's). */
function linkToken(mail: MailMessage | undefined, purpose: 'password-reset' | 'email-verification'): string {
  assert.ok(mail, 'a mail was sent');
  const match = new RegExp(`^${ISSUER}/${purpose}\\?token=([A-Za-z0-9_-]{43})$`, 'm').exec(mail.text);
  assert.ok(match, `the mail holds a ${purpose} link: ${mail.subject}`);
  return match[1] as string;
}

async function setUp() {
  const box = mailbox();
  const w = await testEngine({ mailer: box });
  const user = await addUser(w);
  const withEmail = { ...user, email: 'Alice@Example.com' };
  await w.storage.users.update(withEmail);
  return { w, box, user: withEmail, mail: w.engine.accountMail };
}

describe('Forgot password (decision 35): who gets a mail', () => {
  const rows: { typed: string; mails: number; why: string }[] = [
    { typed: 'Alice@Example.com', mails: 1, why: 'the address as stored' },
    { typed: 'alice@example.COM', mails: 1, why: 'another ASCII case of it' },
    { typed: 'bob@example.com', mails: 0, why: 'an address no account has' },
  ];
  for (const row of rows) {
    it(`${row.why}: ${row.mails} mail(s)`, async () => {
      const { w, box, user, mail } = await setUp();
      mail.startPasswordReset(row.typed, failOnError);
      await mail.idle();
      assert.equal(box.mails.length, row.mails);
      if (row.mails > 0) {
        // Sent to the address the account has, not to what was typed.
        assert.equal(box.mails[0]?.to, user.email);
        assert.match(box.mails[0]?.text ?? '', new RegExp(`"${user.username}"`));
        linkToken(box.mails[0], 'password-reset');
      }
      await w.close();
    });
  }

  it('refuses what is not an address before anything is read', async () => {
    const { w, mail } = await setUp();
    assert.throws(() => mail.startPasswordReset('not an address', failOnError), ValidationError);
    await w.close();
  });

  it('returns before the store is read: the answer cannot wait for the lookup', async () => {
    const { w, box, mail } = await setUp();
    mail.startPasswordReset('Alice@Example.com', failOnError);
    // Nothing was sent yet when the call returned; it was, once the work in flight ended.
    assert.equal(box.mails.length, 0);
    await mail.idle();
    assert.equal(box.mails.length, 1);
    await w.close();
  });

  it(`sends at most ${MAILS_PER_USER_PER_HOUR} mails of a purpose per user per hour`, async () => {
    const { w, box, mail } = await setUp();
    for (let i = 0; i < MAILS_PER_USER_PER_HOUR + 2; i++)
      mail.startPasswordReset('alice@example.com', failOnError);
    await mail.idle();
    assert.equal(box.mails.length, MAILS_PER_USER_PER_HOUR);
    w.clock.advance(3600);
    mail.startPasswordReset('alice@example.com', failOnError);
    await mail.idle();
    assert.equal(box.mails.length, MAILS_PER_USER_PER_HOUR + 1);
    await w.close();
  });

  it('hands a failed send to the caller, who has had its answer', async () => {
    const w = await testEngine({
      mailer: { send: () => Promise.reject(new Error('the SMTP server did not take the mail: 550')) },
    });
    const user = await addUser(w);
    await w.storage.users.update({ ...user, email: 'c@example.com' });
    const failures: unknown[] = [];
    w.engine.accountMail.startPasswordReset('c@example.com', (error) => failures.push(error));
    await w.engine.accountMail.idle();
    assert.equal(failures.length, 1);
    assert.match((failures[0] as Error).message, /550/);
    await w.close();
  });
});

describe('A reset link (decision 35): single use, 30 minutes', () => {
  const rows: { after: number; outcome: 'reset' | 'expired'; why: string }[] = [
    { after: 0, outcome: 'reset', why: 'at once' },
    { after: MAIL_LINK_TTL_SECONDS - 1, outcome: 'reset', why: 'a second before 30 minutes' },
    { after: MAIL_LINK_TTL_SECONDS, outcome: 'expired', why: 'at 30 minutes' },
    { after: 2 * MAIL_LINK_TTL_SECONDS, outcome: 'expired', why: 'an hour later' },
  ];
  for (const row of rows) {
    it(`${row.why}: ${row.outcome}`, async () => {
      const { w, box, mail } = await setUp();
      mail.startPasswordReset('alice@example.com', failOnError);
      await mail.idle();
      const token = linkToken(box.mails[0], 'password-reset');
      w.clock.advance(row.after);
      assert.equal(
        (await mail.check(token, 'password-reset')).outcome,
        row.outcome === 'reset' ? 'valid' : 'expired',
      );
      assert.equal((await mail.resetPassword(token, NEW_PASSWORD)).outcome, row.outcome);
      await w.close();
    });
  }

  it('works once; the store keeps only its hash', async () => {
    const { w, box, mail } = await setUp();
    mail.startPasswordReset('alice@example.com', failOnError);
    await mail.idle();
    const token = linkToken(box.mails[0], 'password-reset');
    const stored = await w.storage.mailLinks.get(sha256(token));
    assert.equal(stored?.purpose, 'password-reset');
    assert.equal(stored?.usedAt, null);
    assert.equal((await mail.resetPassword(token, NEW_PASSWORD)).outcome, 'reset');
    assert.equal((await mail.resetPassword(token, 'yet another password')).outcome, 'used');
    assert.equal((await mail.check(token, 'password-reset')).outcome, 'used');
    await w.close();
  });

  it('of two concurrent uses, exactly one sets the password', async () => {
    const { w, box, mail } = await setUp();
    mail.startPasswordReset('alice@example.com', failOnError);
    await mail.idle();
    const token = linkToken(box.mails[0], 'password-reset');
    const outcomes = await Promise.all([
      mail.resetPassword(token, NEW_PASSWORD),
      mail.resetPassword(token, 'the other new password'),
    ]);
    assert.deepEqual(outcomes.map((o) => o.outcome).sort(), ['reset', 'used']);
    await w.close();
  });

  it('is no verification link, nor an unknown token a link', async () => {
    const { w, box, mail } = await setUp();
    mail.startPasswordReset('alice@example.com', failOnError);
    await mail.idle();
    const token = linkToken(box.mails[0], 'password-reset');
    assert.equal((await mail.verifyEmail(token)).outcome, 'unknown');
    assert.equal((await mail.check('x'.repeat(43), 'password-reset')).outcome, 'unknown');
    await w.close();
  });

  it('refuses a short password and stays usable', async () => {
    const { w, box, mail } = await setUp();
    mail.startPasswordReset('alice@example.com', failOnError);
    await mail.idle();
    const token = linkToken(box.mails[0], 'password-reset');
    await assert.rejects(mail.resetPassword(token, 'short'), ValidationError);
    assert.equal((await mail.resetPassword(token, NEW_PASSWORD)).outcome, 'reset');
    await w.close();
  });

  it('ends every session and grant of the user (decision 12), sets the password and verifies the address', async () => {
    const { w, box, user, mail } = await setUp();
    const { client } = await addClient(w);
    const { grant } = await seedCode(w, client, user);
    const browser = await w.engine.browserSessions.start(user.id, { method: 'password', at: w.clock.now() });
    assert.ok(await w.engine.browserSessions.user(browser));
    mail.startPasswordReset('alice@example.com', failOnError);
    await mail.idle();
    const result = await mail.resetPassword(linkToken(box.mails[0], 'password-reset'), NEW_PASSWORD);
    assert.equal(result.outcome, 'reset');
    assert.equal(await w.engine.browserSessions.user(browser), undefined);
    assert.notEqual((await w.storage.grants.get(grant.id))?.revokedAt, null);
    const stored = await w.storage.users.get(user.id);
    assert.equal(stored?.emailVerified, true);
    assert.equal(
      (await w.engine.signIn({ username: user.username, password: PASSWORD, address: '192.0.2.1' })).outcome,
      'wrong-credentials',
    );
    assert.equal(
      (await w.engine.signIn({ username: user.username, password: NEW_PASSWORD, address: '192.0.2.1' }))
        .outcome,
      'signed-in',
    );
    await w.close();
  });
});

describe('Email verification (decision 35): email_verified', () => {
  it('is false, then true once the mailed link is followed, and false again when the address changes', async () => {
    const { w, box, user, mail } = await setUp();
    assert.equal(userClaims(await w.engine.users.require(user.id), ['email']).email_verified, false);
    mail.startEmailVerification(user.id, failOnError);
    await mail.idle();
    assert.equal(box.mails[0]?.to, user.email);
    const token = linkToken(box.mails[0], 'email-verification');
    const result = await mail.verifyEmail(token);
    assert.equal(result.outcome, 'verified');
    const verified = await w.engine.users.require(user.id);
    assert.deepEqual(userClaims(verified, ['email']), { email: user.email, email_verified: true });
    assert.equal((await mail.verifyEmail(token)).outcome, 'used');
    // Another field changed: still verified. The address changed: no longer.
    const renamed = await w.engine.users.update(verified, { name: 'Alice' });
    assert.equal(renamed.emailVerified, true);
    assert.equal((await w.engine.users.require(user.id)).emailVerified, true);
    const moved = await w.engine.users.update(renamed, { email: 'alice@elsewhere.example' });
    assert.equal(moved.emailVerified, false);
    assert.equal((await w.engine.users.require(user.id)).emailVerified, false);
    await w.close();
  });

  it('does not verify an address the user no longer has', async () => {
    const { w, box, user, mail } = await setUp();
    mail.startEmailVerification(user.id, failOnError);
    await mail.idle();
    const token = linkToken(box.mails[0], 'email-verification');
    await w.engine.users.update(await w.engine.users.require(user.id), { email: 'new@example.com' });
    assert.equal((await mail.verifyEmail(token)).outcome, 'address-changed');
    assert.equal((await w.engine.users.require(user.id)).emailVerified, false);
    await w.close();
  });

  const nothingToSend: { why: string; email: string | null; verified: boolean }[] = [
    { why: 'no address', email: null, verified: false },
    { why: 'an address verified already', email: 'v@example.com', verified: true },
  ];
  for (const row of nothingToSend) {
    it(`sends nothing for ${row.why}`, async () => {
      const box = mailbox();
      const w = await testEngine({ mailer: box });
      const user = await addUser(w);
      await w.storage.users.update({ ...user, email: row.email });
      if (row.verified && row.email !== null) await w.storage.users.markEmailVerified(user.id, row.email);
      w.engine.accountMail.startEmailVerification(user.id, failOnError);
      await w.engine.accountMail.idle();
      assert.equal(box.mails.length, 0);
      await w.close();
    });
  }
});

describe('The log mailer (no GATEHOUSE_SMTP_URL)', () => {
  it('writes the whole mail, link included, at info', async () => {
    const lines: { fields: object; message: string }[] = [];
    const mailer = createLogMailer({ info: (fields, message) => lines.push({ fields, message }) });
    const w = await testEngine({ mailer });
    const user = await addUser(w);
    await w.storage.users.update({ ...user, email: 'log@example.com' });
    w.engine.accountMail.startPasswordReset('log@example.com', failOnError);
    await w.engine.accountMail.idle();
    assert.equal(lines.length, 1);
    const mail = (lines[0]?.fields as { mail: MailMessage }).mail;
    assert.equal(mail.to, 'log@example.com');
    assert.equal(
      (await w.engine.accountMail.resetPassword(linkToken(mail, 'password-reset'), NEW_PASSWORD)).outcome,
      'reset',
    );
    await w.close();
  });
});
