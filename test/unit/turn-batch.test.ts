import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TurnBatch } from '../../src/core/keys/turn-batch.js';

/** A scheduler the test runs by hand: the batch's flushes, in the order they were asked for. */
function manualTurns() {
  const pending: (() => void)[] = [];
  return {
    schedule: (flush: () => void) => pending.push(flush),
    get scheduled() {
      return pending.length;
    },
    /** Ends the turn: runs the flushes asked for so far, then lets their promises settle. */
    async end() {
      for (const flush of pending.splice(0)) flush();
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}

describe('signatures made in batches, one per event-loop turn (core/keys/turn-batch.ts, decision 28)', () => {
  it('runs nothing until the turn ends, then everything queued in it, in order, in one flush', async () => {
    const turns = manualTurns();
    const batch = new TurnBatch(turns.schedule);
    const ran: number[] = [];
    const results = [1, 2, 3].map((n) => batch.run(() => (ran.push(n), n * 10)));
    assert.deepEqual(ran, []);
    assert.equal(turns.scheduled, 1, 'one flush for the three');
    await turns.end();
    assert.deepEqual(ran, [1, 2, 3]);
    assert.deepEqual(await Promise.all(results), [10, 20, 30]);
  });

  const failures = [
    { name: 'an Error', thrown: new Error('no active ES256 key') },
    { name: 'a TypeError', thrown: new TypeError('claims not serialisable') },
  ];
  for (const { name, thrown } of failures) {
    it(`rejects only the work that threw ${name}; the rest of its batch is answered`, async () => {
      const turns = manualTurns();
      const batch = new TurnBatch(turns.schedule);
      const before = batch.run(() => 'a');
      const failing = batch.run(() => {
        throw thrown;
      });
      const after = batch.run(() => 'c');
      // Its handler attached before the turn ends, as a caller's await would be.
      const refused = assert.rejects(failing, (error) => error === thrown);
      await turns.end();
      assert.equal(await before, 'a');
      await refused;
      assert.equal(await after, 'c');
    });
  }

  it('leaves work queued by a batch’s own results for the next turn', async () => {
    const turns = manualTurns();
    const batch = new TurnBatch(turns.schedule);
    const order: string[] = [];
    const chained = batch.run(() => order.push('first')).then(() => batch.run(() => order.push('second')));
    await turns.end();
    assert.deepEqual(order, ['first']);
    assert.equal(turns.scheduled, 1, 'the next turn’s flush is asked for');
    await turns.end();
    await chained;
    assert.deepEqual(order, ['first', 'second']);
  });

  it('flushes on its own with the default scheduler (setImmediate)', async () => {
    const batch = new TurnBatch();
    assert.deepEqual(await Promise.all([batch.run(() => 'x'), batch.run(() => 'y')]), ['x', 'y']);
  });
});
