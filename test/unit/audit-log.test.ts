import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AuditLog, CLI_AUDIT, type AuditEventView, type AuditSink } from '../../src/core/audit/audit-log.js';
import type { Storage } from '../../src/core/ports.js';
import { sha256 } from '../../src/shared/crypto.js';
import { ManualClock } from '../../src/shared/clock.js';
import { ValidationError } from '../../src/core/validation.js';
import { memoryStorage } from '../helpers/fakes/memory-storage.js';
import { START, testEngine } from '../helpers/fakes/test-engine.js';

/** A sink that keeps what it is told, and what the store held when it was told. */
function recordingSink(storage: Storage): AuditSink & { lines: AuditEventView[]; storedAtEmit: number[] } {
  const lines: AuditEventView[] = [];
  const storedAtEmit: number[] = [];
  return {
    lines,
    storedAtEmit,
    emit(event) {
      lines.push(event);
      void storage.auditEvents.list({ limit: 100 }).then((items) => storedAtEmit.push(items.length));
    },
  };
}

/** Every event the store holds, as JSON text: what the redaction tests scan. */
async function everyEvent(storage: Storage): Promise<string> {
  const events = [];
  let after: { at: number; id: string } | undefined;
  for (;;) {
    const page = await storage.auditEvents.list({ limit: 200, ...(after ? { after } : {}) });
    if (page.length === 0) return JSON.stringify(events);
    events.push(...page);
    const last = page.at(-1)!;
    after = { at: last.at, id: last.id };
  }
}

describe('AuditLog (decision 41)', () => {
  it('writes the change and its event together, and tells the sink only after the commit', async () => {
    const storage = memoryStorage();
    const sink = recordingSink(storage);
    const audit = new AuditLog(storage, new ManualClock(START), sink);
    await audit.change(CLI_AUDIT, async (tx, record) => {
      await tx.scopes.upsert({ name: 'kept', description: 'Kept', createdAt: START });
      await record({ type: 'scope.created', after: { name: 'kept' } });
      assert.equal(sink.lines.length, 0, 'nothing is said before the commit');
    });
    assert.equal((await storage.scopes.get('kept'))?.name, 'kept');
    assert.deepEqual(
      sink.lines.map((line) => [line.type, line.actor, line.after]),
      [['scope.created', { type: 'cli', id: null }, { name: 'kept' }]],
    );
    assert.equal(sink.lines[0]?.at, new Date(START * 1000).toISOString());
    const [stored] = await storage.auditEvents.list({ limit: 10 });
    assert.equal(stored?.id, sink.lines[0]?.id);
  });

  it('a change that fails leaves neither the change nor its event, and says nothing', async () => {
    const storage = memoryStorage();
    const sink = recordingSink(storage);
    const audit = new AuditLog(storage, new ManualClock(START), sink);
    await assert.rejects(
      audit.change(CLI_AUDIT, async (tx, record) => {
        await record({ type: 'scope.created' });
        await tx.scopes.upsert({ name: 'undone', description: 'Undone', createdAt: START });
        throw new Error('the change failed');
      }),
      /the change failed/,
    );
    assert.equal(await storage.scopes.get('undone'), undefined);
    assert.deepEqual(await storage.auditEvents.list({ limit: 10 }), []);
    assert.deepEqual(sink.lines, []);
  });

  it('an event that cannot be written undoes the change', async () => {
    const storage = memoryStorage();
    const failing: Storage = {
      ...storage,
      atomically: (work) =>
        storage.atomically((tx) =>
          work({
            ...tx,
            auditEvents: {
              ...tx.auditEvents,
              append: () => Promise.reject(new Error('the audit table is full')),
            },
          }),
        ),
    };
    const audit = new AuditLog(failing, new ManualClock(START));
    await assert.rejects(
      audit.change(CLI_AUDIT, async (tx, record) => {
        await tx.scopes.upsert({ name: 'undone', description: 'Undone', createdAt: START });
        await record({ type: 'scope.created' });
      }),
      /the audit table is full/,
    );
    assert.equal(await storage.scopes.get('undone'), undefined);
  });

  it('refuses a malformed event type, limit or cursor, naming the field', async () => {
    const audit = new AuditLog(memoryStorage(), new ManualClock(START));
    await assert.rejects(audit.record(CLI_AUDIT, { type: 'NotDotted' }), /malformed audit event type/);
    const field = (name: string) => (error: unknown) =>
      error instanceof ValidationError && error.field === name;
    await assert.rejects(audit.list({ limit: 0 }), field('limit'));
    await assert.rejects(audit.list({ limit: 201 }), field('limit'));
    await assert.rejects(audit.list({ limit: 5, types: ['client updated'] }), field('type'));
    for (const cursor of ['', '!!!', Buffer.from('12.UPPER').toString('base64url'), 'bm90LWEtY3Vyc29y']) {
      await assert.rejects(audit.list({ limit: 5, cursor }), field('cursor'), cursor);
    }
  });

  it('pages newest first with a cursor that ends on the last page', async () => {
    const clock = new ManualClock(START);
    const audit = new AuditLog(memoryStorage(), clock);
    for (let i = 0; i < 5; i++) {
      await audit.record(CLI_AUDIT, { type: 'user.updated', detail: `${i}` });
      if (i % 2 === 1) clock.advance(1);
    }
    const first = await audit.list({ limit: 2 });
    assert.deepEqual(
      first.items.map((e) => e.detail),
      ['4', '3'],
    );
    const second = await audit.list({ limit: 2, cursor: first.nextCursor });
    assert.deepEqual(
      second.items.map((e) => e.detail),
      ['2', '1'],
    );
    const last = await audit.list({ limit: 2, cursor: second.nextCursor });
    assert.deepEqual(
      last.items.map((e) => e.detail),
      ['0'],
    );
    assert.equal(last.nextCursor, undefined);
  });
});

describe('what audit events never hold (decision 41)', () => {
  it('no secret, password, hash or token of the changes the registries record', async () => {
    const t = await testEngine();
    const { engine } = t;
    const secrets: string[] = [];
    const { client, secret } = await engine.clients.create({
      name: 'Secretive',
      grant_types: ['client_credentials'],
    });
    secrets.push(secret!, client.secretHash!);
    const rotated = await engine.clients.rotateSecret(client, CLI_AUDIT);
    secrets.push(rotated, sha256(rotated));
    const updated = await engine.clients.update((await engine.clients.get(client.id))!, { name: 'Renamed' });
    assert.equal(updated.secret, undefined);
    const password = 'correct horse battery staple';
    const user = await engine.users.create(
      { username: 'redacted', password, email: 'r@example.com' },
      CLI_AUDIT,
    );
    secrets.push(password, user.passwordHash);
    const newPassword = 'another long passphrase';
    const changed = await engine.users.update(user, { password: newPassword, name: 'R' }, CLI_AUDIT);
    secrets.push(newPassword, changed.passwordHash);
    assert.equal(
      (await engine.signIn({ username: 'redacted', password: 'wrong guess!', address: '192.0.2.1' })).outcome,
      'wrong-credentials',
    );
    secrets.push('wrong guess!');
    assert.equal(
      (await engine.signIn({ username: 'redacted', password: newPassword, address: '192.0.2.1' })).outcome,
      'signed-in',
    );
    await engine.signingKeys.rotateAll(CLI_AUDIT);
    for (const key of await t.storage.signingKeys.list()) secrets.push(key.privateKeySealed);

    const stored = await everyEvent(t.storage);
    const types = (JSON.parse(stored) as { type: string }[]).map((e) => e.type).sort();
    assert.deepEqual(types, [
      'client.created',
      'client.secret-rotated',
      'client.updated',
      'password.reset',
      'sign-in.failed',
      'sign-in.succeeded',
      'signing-key.rotated',
      'user.created',
      'user.updated',
    ]);
    for (const value of secrets) {
      assert.ok(value.length >= 8);
      assert.ok(!stored.includes(value), `an event holds ${value.slice(0, 12)}…`);
    }
    await t.close();
  });

  it('records sign-ins: success with the method and user, failures, lockouts, each with the address', async () => {
    const t = await testEngine({ passwordFailuresPerUsername: 2 });
    const { engine } = t;
    const user = await engine.users.create({ username: 'counted', password: 'a long password' });
    const attempt = (password: string) =>
      engine.signIn({ username: 'counted', password, address: '198.51.100.9' });
    assert.equal((await attempt('a long password')).outcome, 'signed-in');
    assert.equal((await attempt('wrong one')).outcome, 'wrong-credentials');
    assert.equal((await attempt('wrong two')).outcome, 'wrong-credentials');
    assert.equal((await attempt('wrong three')).outcome, 'throttled');
    const page = await engine.audit.list({
      limit: 10,
      types: ['sign-in.succeeded', 'sign-in.failed', 'sign-in.locked-out'],
    });
    assert.deepEqual(page.items.map((e) => [e.type, e.userId, e.address, e.actor]).reverse(), [
      ['sign-in.succeeded', user.id, '198.51.100.9', { type: 'user', id: user.id }],
      ['sign-in.failed', null, '198.51.100.9', null],
      ['sign-in.failed', null, '198.51.100.9', null],
      ['sign-in.locked-out', null, '198.51.100.9', null],
    ]);
    assert.equal(page.items.at(-1)?.detail, 'password');
    await t.close();
  });

  it("records a user's revocation of a connected app, by the user, from their address", async () => {
    const t = await testEngine();
    const { engine } = t;
    const user = await engine.users.create({ username: 'connected', password: 'a long password' });
    const { client } = await engine.clients.create({
      name: 'App',
      redirect_uris: ['https://app.example/cb'],
    });
    await t.storage.grants.insert({
      id: 'g-connected',
      clientId: client.id,
      userId: user.id,
      scope: ['profile'],
      createdAt: START,
      expiresAt: null,
      revokedAt: null,
    });
    assert.equal(await engine.connectedApps.revoke(user.id, client.id, '203.0.113.5'), 1);
    const { items } = await engine.audit.list({ limit: 5, types: ['grant.revoked'] });
    assert.deepEqual(
      items.map((e) => [e.userId, e.clientId, e.actor, e.address]),
      [[user.id, client.id, { type: 'user', id: user.id }, '203.0.113.5']],
    );
    // Nothing to revoke: nothing recorded.
    assert.equal(await engine.connectedApps.revoke(user.id, client.id, '203.0.113.5'), 0);
    assert.equal((await engine.audit.list({ limit: 5, types: ['grant.revoked'] })).items.length, 1);
    await t.close();
  });

  it("records an operator's reset of a user's second factors, without the codes", async () => {
    const t = await testEngine();
    const { engine } = t;
    const user = await engine.users.create({ username: 'two-factor', password: 'a long password' });
    const codes = await engine.secondFactors.generateRecoveryCodes(user.id);
    assert.ok(codes.length > 0);
    assert.equal((await engine.secondFactors.reset(user.id, CLI_AUDIT)).recoveryCodes, codes.length);
    const { items } = await engine.audit.list({ limit: 5, types: ['second-factor.reset'] });
    assert.deepEqual(
      items.map((e) => [e.userId, e.actor]),
      [[user.id, { type: 'cli', id: null }]],
    );
    assert.match(String(items[0]?.detail), new RegExp(`${codes.length} recovery code`));
    const stored = await everyEvent(t.storage);
    for (const code of codes) assert.ok(!stored.includes(code));
    // Nothing left to reset: nothing recorded.
    await engine.secondFactors.reset(user.id, CLI_AUDIT);
    assert.equal((await engine.audit.list({ limit: 5, types: ['second-factor.reset'] })).items.length, 1);
    await t.close();
  });
});
