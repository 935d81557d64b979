import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCommandArgs, UsageError } from '../../src/cli/args.js';

const OPTIONS = { name: { type: 'string' }, public: { type: 'boolean' } } as const;

describe('command-line ids that begin with "-"', () => {
  const rows: Array<{ argv: string[]; positionals: string[]; values?: Record<string, unknown> }> = [
    // A JWK thumbprint (a key id) or an older client id can begin with "-".
    { argv: ['revoke', '-IqZ3b_x9'], positionals: ['revoke', '-IqZ3b_x9'] },
    { argv: ['revoke', '-IqZ3b_x9', '--json'], positionals: ['revoke', '-IqZ3b_x9'], values: { json: true } },
    { argv: ['--json', 'show', '-K1'], positionals: ['show', '-K1'], values: { json: true } },
    // An option's value stays the option's, whatever it looks like.
    {
      argv: ['update', '-Kid', '--name', 'n', '--public'],
      positionals: ['update', '-Kid'],
      values: { name: 'n', public: true },
    },
    { argv: ['update', '--name=-dash', 'id'], positionals: ['update', 'id'], values: { name: '-dash' } },
    // Known short flags are still flags; "--" still ends the options.
    { argv: ['list', '-h'], positionals: ['list'], values: { help: true } },
    { argv: ['show', '--', '--json'], positionals: ['show', '--json'] },
  ];
  for (const row of rows) {
    it(`reads ${JSON.stringify(row.argv)}`, () => {
      const parsed = parseCommandArgs(row.argv, OPTIONS, 'test');
      assert.deepEqual(parsed.positionals, row.positionals);
      for (const [key, value] of Object.entries(row.values ?? {})) {
        assert.equal((parsed.values as Record<string, unknown>)[key], value);
      }
    });
  }

  it('still refuses an unknown long option, and a lone unknown short one', () => {
    assert.throws(() => parseCommandArgs(['list', '--nope'], OPTIONS, 'test'), UsageError);
    assert.throws(() => parseCommandArgs(['list', '-x'], OPTIONS, 'test'), UsageError);
  });
});
