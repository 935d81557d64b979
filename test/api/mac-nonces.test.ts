import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { backends, createTestStore, type TestStore } from '../helpers/backends.js';

for (const backend of backends()) {
  describe(`mac_nonces store (${backend})`, () => {
    let store: TestStore;
    beforeEach(async () => {
      store = await createTestStore(backend);
    });
    afterEach(async () => {
      await store.cleanup();
    });

    it('lets exactly one of many concurrent writers, on two handles, record a nonce', async () => {
      const other = store.reopen();
      const now = 1_000_000;
      const attempts = Array.from({ length: 20 }, (_, i) =>
        (i % 2 === 0 ? store.storage : other).macNonces.remember('jti-1', 'nonce-1', now + 300, now),
      );
      const results = await Promise.all(attempts);
      assert.equal(results.filter(Boolean).length, 1);
      // The same nonce for another token is another key.
      assert.equal(await other.macNonces.remember('jti-2', 'nonce-1', now + 300, now), true);
    });

    it('keeps a nonce until its window passes, then lets the row go', async () => {
      const { macNonces } = store.storage;
      const now = 2_000_000;
      assert.equal(await macNonces.remember('j', 'n', now + 10, now), true);
      assert.equal(await macNonces.remember('j', 'n', now + 20, now + 9), false);
      for (let i = 0; i < 100; i++) await macNonces.remember('j', `old-${i}`, now + 5, now);
      assert.equal(await macNonces.deleteExpired(now + 11), 64, 'one small batch at a time');
      await macNonces.deleteExpired(now + 11);
      const left = await store.storage.db.selectFrom('mac_nonces').select('nonce').execute();
      assert.deepEqual(left, []);
    });
  });
}
