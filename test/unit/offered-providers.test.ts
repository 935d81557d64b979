import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { offeredProviders } from '../../src/http/ui/sign-in-form.js';

/** Decision 39: which providers a client's sign-in page offers, and in which order. */
describe('offeredProviders', () => {
  // As the registry lists them: in name order.
  const all = [{ id: 'acme' }, { id: 'github' }, { id: 'google' }];
  const cases: Array<[string, readonly string[] | null, string[]]> = [
    ['no choice (null): every provider, in name order', null, ['acme', 'github', 'google']],
    ['a choice: those only, in the client’s order', ['google', 'acme'], ['google', 'acme']],
    ['an empty choice: none', [], []],
    ['an id no longer registered is skipped', ['gone', 'github'], ['github']],
  ];
  for (const [name, allowed, expected] of cases) {
    it(name, () => {
      assert.deepEqual(
        offeredProviders(all, allowed).map((provider) => provider.id),
        expected,
      );
    });
  }
});
