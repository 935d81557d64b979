import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, decodeProtectedHeader, errors, jwtVerify } from 'jose';
import { generateSigningKey, KeyRing, type SigningAlgorithm } from '../../src/core/keys/key-ring.js';
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

  describe(`key ring: an active key per algorithm, for access tokens and ID tokens (${backend})`, () => {
    const KEK = Buffer.alloc(32, 4);
    const RETENTION = 7 * 86400;

    /** A ring as one process has it, on its own handle of a store of its own (`handle`). */
    async function ring(
      clock: ManualClock,
      keys: SigningKeyStore,
      algorithm: SigningAlgorithm = 'ES256',
    ): Promise<KeyRing> {
      const made = new KeyRing({
        store: keys,
        keyEncryptionKey: KEK,
        clock,
        algorithm,
        retiredKeyRetentionSeconds: RETENTION,
        refreshIntervalSeconds: INTERVAL,
      });
      await made.init();
      return made;
    }

    /** The token's header and whether the ring's published keys verify it. */
    async function published(ring: KeyRing, token: string, clock: ManualClock) {
      const jwks = createLocalJWKSet(await ring.publicJwks());
      const { protectedHeader } = await jwtVerify(token, jwks, { currentDate: new Date(clock.now() * 1000) });
      return protectedHeader;
    }

    /** A fresh, empty store per case: the cases count keys. */
    async function freshKeys(): Promise<{ keys: SigningKeyStore; done: () => Promise<void> }> {
      const own = await createTestStore(backend);
      return { keys: own.storage.signingKeys, done: () => own.cleanup() };
    }

    it('holds the access tokens’ key (EdDSA here) and RS256 and ES256 keys; signs each with its typ', async () => {
      const { keys, done } = await freshKeys();
      const clock = new ManualClock(2_000_000);
      const r = await ring(clock, keys, 'EdDSA');
      try {
        assert.deepEqual((await keys.list()).map((key) => key.alg).sort(), ['ES256', 'EdDSA', 'RS256']);
        const claims = { sub: 'u', exp: clock.now() + 60 };
        const access = await published(r, await r.sign(claims), clock);
        assert.deepEqual([access.alg, access.typ, access.kid], ['EdDSA', 'at+jwt', r.activeKid]);
        for (const alg of ['RS256', 'ES256'] as const) {
          const header = await published(r, await r.signWith(alg, claims, 'JWT'), clock);
          assert.deepEqual([header.alg, header.typ, header.kid], [alg, 'JWT', r.activeKidFor(alg)]);
        }
        assert.equal((await r.publicJwks()).keys.length, 3);
      } finally {
        await r.close();
        await done();
      }
    });

    it('a store an older Gatehouse left with one ES256 key: init adds an RS256 key, retiring nothing, once', async () => {
      const { keys, done } = await freshKeys();
      const clock = new ManualClock(2_000_000);
      const old = await generateSigningKey('ES256', KEK, clock.now() - 100);
      await keys.insert(old);
      const a = await ring(clock, keys);
      const b = await ring(clock, keys);
      try {
        assert.equal(a.activeKid, old.kid, 'access tokens keep their key');
        const listed = await keys.list();
        assert.deepEqual(listed.map((key) => [key.alg, key.retiredAt]).sort(), [
          ['ES256', null],
          ['RS256', null],
        ]);
        assert.equal(b.activeKidFor('RS256'), a.activeKidFor('RS256'), 'the second start added none');
      } finally {
        await Promise.all([a.close(), b.close()]);
        await done();
      }
    });

    it('rotation makes a key of each algorithm; the retired ones verify until the retention ends', async () => {
      const { keys, done } = await freshKeys();
      const clock = new ManualClock(2_000_000);
      const r = await ring(clock, keys);
      try {
        const claims = { sub: 'u', exp: clock.now() + 2 * RETENTION };
        const oldIdToken = await r.signWith('RS256', claims, 'JWT');
        const oldRs = r.activeKidFor('RS256');
        clock.advance(10);
        const rotated = await r.rotateAll();
        assert.deepEqual(rotated.kids.map((key) => key.alg).sort(), ['ES256', 'RS256']);
        assert.equal(rotated.kid, r.activeKid);
        assert.notEqual(r.activeKidFor('RS256'), oldRs);
        assert.equal((await keys.list()).filter((key) => key.retiredAt === null).length, 2);
        assert.equal((await published(r, oldIdToken, clock)).kid, oldRs, 'retired, still published');
        clock.advance(RETENTION);
        await assert.rejects(published(r, oldIdToken, clock), errors.JWKSNoMatchingKey);
      } finally {
        await r.close();
        await done();
      }
    });

    it('revoking the RS256 key replaces it alone: the access-token key signs on, another process follows', async () => {
      const { keys, done } = await freshKeys();
      const clock = new ManualClock(2_000_000);
      const a = await ring(clock, keys);
      const b = await ring(clock, keys);
      try {
        const accessKid = a.activeKid;
        const compromised = a.activeKidFor('RS256') as string;
        const idToken = await a.signWith('RS256', { sub: 'u', exp: clock.now() + 60 }, 'JWT');
        const revocation = await a.revoke(compromised);
        const replacement = revocation?.replacement as string;
        assert.equal(typeof replacement, 'string');
        assert.equal(a.activeKidFor('RS256'), replacement);
        assert.equal(a.activeKid, accessKid, 'the ES256 access-token key is untouched');
        assert.equal((await keys.list()).find((key) => key.kid === accessKid)?.retiredAt, null);
        await assert.rejects(published(a, idToken, clock), errors.JWKSNoMatchingKey);
        // B, once its view is stale, signs ID tokens with the replacement.
        clock.advance(INTERVAL);
        const next = await b.signWith('RS256', { sub: 'u' }, 'JWT');
        assert.equal(kidOf(next), replacement);
        assert.equal(kidOf(await b.sign({ sub: 'u' })), accessKid);
      } finally {
        await Promise.all([a.close(), b.close()]);
        await done();
      }
    });
  });
}
