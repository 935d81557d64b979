import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryNonceStore, NonceStoreFullError } from 'gatehouse-oauth-resource-server';

describe('MemoryNonceStore', () => {
  it('refuses a replay while the nonce is inside its window, per token', async () => {
    const store = new MemoryNonceStore();
    assert.equal(await store.remember('jti-1', 'n', 1300, 1000), true);
    assert.equal(await store.remember('jti-1', 'n', 1300, 1000), false);
    assert.equal(await store.remember('jti-1', 'n', 1400, 1299), false, 'still inside the window');
    assert.equal(await store.remember('jti-2', 'n', 1300, 1000), true, 'another token, another key');
  });

  it('lets nonces go once their window has passed, without being asked about them', async () => {
    const store = new MemoryNonceStore();
    for (let i = 0; i < 1000; i++) await store.remember('jti', `n${i}`, 1000 + (i % 10), 990);
    assert.equal(store.size, 1000);
    await store.remember('jti', 'other', 2000, 1004);
    // Expiries 1000..1004 have passed: half of them are gone.
    assert.equal(store.size, 501);
    await store.remember('jti', 'late', 3000, 1009);
    assert.equal(store.size, 2);
    // A nonce whose window has passed may be seen again (the timestamp check refuses it anyway).
    assert.equal(await store.remember('jti', 'n0', 1100, 1010), true);
  });

  it('drops expired nonces across a long gap in time too', async () => {
    const store = new MemoryNonceStore();
    await store.remember('jti', 'a', 1_000, 900);
    await store.remember('jti', 'b', 5_000, 900);
    await store.remember('jti', 'c', 2_000_000_000, 1_000_000_000);
    assert.equal(store.size, 1);
  });

  it('never keeps a nonce that expired before it was stored', async () => {
    const store = new MemoryNonceStore();
    await store.remember('jti', 'a', 2000, 2000);
    await store.remember('jti', 'stale', 1500, 2000);
    await store.remember('jti', 'b', 3000, 2001);
    assert.equal(store.size, 1);
  });

  it('refuses new nonces when full, rather than forgetting ones still inside their window', async () => {
    const store = new MemoryNonceStore({ maxEntries: 3 });
    for (const nonce of ['a', 'b', 'c']) assert.equal(await store.remember('jti', nonce, 1300, 1000), true);
    await assert.rejects(store.remember('jti', 'd', 1300, 1000), NonceStoreFullError);
    // The ones held are still refused as replays: none was evicted.
    for (const nonce of ['a', 'b', 'c']) assert.equal(await store.remember('jti', nonce, 1300, 1100), false);
    // Once their window passes there is room again.
    assert.equal(await store.remember('jti', 'd', 1600, 1300), true);
    assert.equal(store.size, 1);
  });

  it('refuses a maximum that is not a positive whole number', () => {
    assert.throws(() => new MemoryNonceStore({ maxEntries: 0 }));
    assert.throws(() => new MemoryNonceStore({ maxEntries: 1.5 }));
  });
});
