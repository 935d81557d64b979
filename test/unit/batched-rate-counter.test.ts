import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { BatchedRateCounter } from '../../src/core/ops/batched-rate-counter.js';
import { backends, createTestStore, type TestStore } from '../helpers/backends.js';
import { tableRows } from '../helpers/store-sql.js';

for (const backend of backends()) {
  describe(`batched rate counter (${backend})`, () => {
    let store: TestStore;
    before(async () => {
      store = await createTestStore(backend);
    });
    after(async () => {
      await store.cleanup();
    });

    it('counts exactly within one process, with no store write until a flush', async () => {
      const counter = new BatchedRateCounter({
        store: store.storage.rateLimits,
        windowSeconds: 60,
        flushIntervalMs: 60_000,
      });
      const now = 1_800_000_000;
      for (let i = 1; i <= 5; i++) assert.equal(counter.hit('k1', now).count, i);
      assert.equal(counter.hit('k1', now).resetAt, Math.floor(now / 60) * 60 + 60);
      const before = await tableRows(store.storage, 'throttle');
      assert.equal(before.filter((row) => row.key.startsWith('k1@')).length, 0);
      await counter.flush();
      const rows = await tableRows(store.storage, 'throttle');
      assert.deepEqual(
        rows.filter((row) => row.key.startsWith('k1@')).map((row) => Number(row.count)),
        [6],
      );
      counter.stop();
    });

    it('merges the counts of two processes through the store', async () => {
      const options = { store: store.storage.rateLimits, windowSeconds: 60, flushIntervalMs: 60_000 };
      const a = new BatchedRateCounter(options);
      const b = new BatchedRateCounter(options);
      const now = 1_800_000_100;
      for (let i = 0; i < 3; i++) a.hit('shared', now);
      for (let i = 0; i < 4; i++) b.hit('shared', now);
      await a.flush();
      await b.flush();
      // b learnt a's 3 in its merge; a learns b's 4 at its next one, even with nothing new to send.
      assert.equal(b.hit('shared', now).count, 8);
      await a.flush();
      assert.equal(a.hit('shared', now).count, 8);
      a.stop();
      b.stop();
    });

    it('starts a new window when the old one ends', () => {
      const counter = new BatchedRateCounter({
        store: store.storage.rateLimits,
        windowSeconds: 10,
        flushIntervalMs: 60_000,
      });
      const now = 1_800_000_200;
      counter.hit('w', now);
      counter.hit('w', now);
      assert.equal(counter.hit('w', now + 10).count, 1);
      counter.stop();
    });

    it('merges nothing more once stopped: neither a failed flush nor a late count re-arms its timer', async () => {
      // A store closed under the counter, as when a server shuts down: every merge fails.
      const closed = store.reopen();
      await closed.ping(); // Kysely starts a handle on first use; one never used would start again
      await closed.close();
      const errors: unknown[] = [];
      const counter = new BatchedRateCounter({
        store: closed.rateLimits,
        windowSeconds: 60,
        flushIntervalMs: 20,
        onError: (error) => errors.push(error),
      });
      const now = 1_800_000_300;
      counter.hit('late', now);
      counter.stop();
      await assert.rejects(counter.flush());
      counter.hit('late', now);
      await sleep(200);
      assert.deepEqual(errors, [], 'no background merge after stop()');
    });
  });
}
