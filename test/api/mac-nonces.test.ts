import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { backends, createTestStore, type TestStore } from '../helpers/backends.js';
import { tableRows } from '../helpers/store-sql.js';

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

    it('keeps a nonce until its window passes, then takes it again and lets the purge delete it', async () => {
      const { macNonces, purge } = store.storage;
      const now = 2_000_000;
      assert.equal(await macNonces.remember('j', 'n', now + 10, now), true);
      assert.equal(await macNonces.remember('j', 'n', now + 20, now + 9), false);
      // Once its window has passed, the same nonce is a new one (its row is taken over).
      assert.equal(await macNonces.remember('j', 'n', now + 20, now + 10), true);
      for (let i = 0; i < 100; i++) await macNonces.remember('j', `old-${i}`, now + 5, now);
      const cutoffs = { now: now + 21, revokedAccessTokensExpiredBefore: 0, grantsRevokedBefore: 0 };
      assert.equal(await purge.purgeBatch('mac_nonces', cutoffs, 1000), 101);
      assert.deepEqual(await tableRows(store.storage, 'mac_nonces'), []);
    });
  });
}
