import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeProtectedHeader, errors } from 'jose';
import { KeyRing } from '../../src/core/key-ring.js';
import type { SigningKeyStore } from '../../src/core/ports.js';
import { ManualClock } from '../../src/shared/clock.js';
import { backends, createTestStore, type TestStore } from '../helpers/backends.js';
import { waitFor } from '../helpers/wait.js';

const INTERVAL = 5;

/** Whether a key ring's verification keys still resolve `kid` (jose's resolver throws when not). */
async function verifies(ring: KeyRing, kid: string): Promise<boolean> {
  const getKey = await ring.verificationKeys();
  try {
    await getKey({ alg: 'ES256', kid }, { payload: '', signature: '' });
    return true;
  } catch (error) {
    if (error instanceof errors.JWKSNoMatchingKey) return false;
    throw error;
  }
}

const kidOf = (token: string) => decodeProtectedHeader(token).kid;

for (const backend of backends()) {
  describe(`key ring: two processes on one store (${backend})`, () => {
    let store: TestStore;
    before(async () => {
      store = await createTestStore(backend);
    });
    after(async () => {
      await store.cleanup();
    });

    /** A key ring as one process has it, on its own store handle; none started. */
    async function processRing(
      clock: ManualClock,
      refreshIntervalSeconds = INTERVAL,
      signingKeys?: SigningKeyStore,
    ) {
      const ring = new KeyRing({
        store: signingKeys ?? store.reopen().signingKeys,
        keyEncryptionKey: Buffer.alloc(32, 3),
        clock,
        algorithm: 'ES256',
        retiredKeyRetentionSeconds: 7 * 86400,
        refreshIntervalSeconds,
      });
      await ring.init();
      return ring;
    }

    it('re-reads a stale view before signing: the first token after a rotation elsewhere has the new kid', async () => {
      const clock = new ManualClock();
      const a = await processRing(clock);
      const b = await processRing(clock);
      assert.equal(a.activeKid, b.activeKid);
      const rotated = await a.rotate();
      // Within the interval B may still sign with the key it has (the documented bound) ...
      clock.advance(INTERVAL);
      // ... and past it, B's very next signature re-reads first: never the retired key.
      assert.equal(kidOf(await b.sign({ sub: 'x' })), rotated);
      await Promise.all([a.close(), b.close()]);
    });

    it('re-reads on its timer, with nothing signed or verified in between', async () => {
      const clock = new ManualClock();
      const a = await processRing(clock);
      const b = await processRing(clock, 1);
      const failures: unknown[] = [];
      b.start((error) => failures.push(error));
      try {
        const rotated = await a.rotate();
        // The manual clock never moves, so only B's timer can make it see the new key.
        await waitFor(
          async () => b.activeKid === rotated,
          15_000,
          'the idle key ring never saw the rotation',
        );
        assert.deepEqual(failures, []);
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });

    it('a revoked key stops signing and verifying here at once, and in another process once its view is stale', async () => {
      const clock = new ManualClock();
      const a = await processRing(clock);
      const b = await processRing(clock);
      const compromised = a.activeKid as string;
      assert.equal(b.activeKid, compromised);
      assert.equal(await verifies(b, compromised), true);

      const revocation = await a.revoke(compromised);
      assert.ok(revocation !== undefined);
      const replacement = revocation.replacement as string;
      assert.equal(typeof replacement, 'string');
      assert.notEqual(replacement, compromised);
      assert.equal(revocation.alreadyRevoked, false);
      // Here: at once.
      assert.equal(a.activeKid, replacement);
      assert.equal(await verifies(a, compromised), false);
      assert.equal(await verifies(a, replacement), true);
      assert.ok(!(await a.publicJwks()).keys.some((key) => key.kid === compromised));
      // Elsewhere: once the view is older than the interval, before any signature or verification.
      clock.advance(INTERVAL);
      assert.equal(await verifies(b, compromised), false);
      assert.equal(kidOf(await b.sign({ sub: 'x' })), replacement);

      assert.equal((await a.revoke(compromised))?.alreadyRevoked, true);
      assert.equal(a.activeKid, replacement, 'revoking a revoked key rotated again');
      assert.equal(await a.revoke('no-such-kid'), undefined);
      await Promise.all([a.close(), b.close()]);
    });

    it('a failing store is reported, not thrown: the ring keeps signing with the key it has', async () => {
      const clock = new ManualClock();
      const handle = store.reopen();
      const b = await processRing(clock, 1, handle.signingKeys);
      const kid = b.activeKid;
      const failures: unknown[] = [];
      b.start((error) => failures.push(error));
      try {
        await handle.close();
        await waitFor(async () => failures.length > 0, 15_000, 'the timer never reported the failed read');
        clock.advance(INTERVAL);
        assert.equal(kidOf(await b.sign({ sub: 'x' })), kid);
      } finally {
        await b.close();
      }
    });
  });

  describe(`signing-key store: revoke (${backend})`, () => {
    let store: TestStore;
    before(async () => {
      store = await createTestStore(backend);
    });
    after(async () => {
      await store.cleanup();
    });

    it('marks a key revoked (and retired), keeps the first times, and says when there is no such key', async () => {
      const clock = new ManualClock(1_000_000);
      const ring = new KeyRing({
        store: store.storage.signingKeys,
        keyEncryptionKey: Buffer.alloc(32, 3),
        clock,
        algorithm: 'ES256',
        retiredKeyRetentionSeconds: 7 * 86400,
        refreshIntervalSeconds: INTERVAL,
      });
      await ring.init();
      const first = ring.activeKid as string;
      clock.advance(10);
      const second = await ring.rotate();
      const keys = store.storage.signingKeys;
      const find = async (kid: string) => (await keys.list()).find((key) => key.kid === kid);

      assert.equal(await keys.revoke(first, 1_000_020), true);
      assert.deepEqual(
        { retiredAt: (await find(first))?.retiredAt, revokedAt: (await find(first))?.revokedAt },
        { retiredAt: 1_000_010, revokedAt: 1_000_020 },
      );
      assert.equal(await keys.revoke(first, 1_000_030), true);
      assert.equal((await find(first))?.revokedAt, 1_000_020);

      assert.equal(await keys.revoke(second, 1_000_040), true);
      assert.deepEqual(
        { retiredAt: (await find(second))?.retiredAt, revokedAt: (await find(second))?.revokedAt },
        { retiredAt: 1_000_040, revokedAt: 1_000_040 },
      );
      assert.equal(await keys.revoke('no-such-kid', 1_000_050), false);
      await ring.close();
    });
  });
}
