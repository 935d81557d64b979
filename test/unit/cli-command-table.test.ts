import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCommandArgs, UsageError } from '../../src/cli/args.js';
import { COMMANDS, GLOBAL_FLAGS, type CommandSpec } from '../../src/cli/command-table.js';
import * as help from '../../src/cli/help.js';
import { closestName, editDistance } from '../../src/shared/did-you-mean.js';

/**
 * Every `gatehouse COMMAND ACTION ...` usage line of the help texts, continuation lines joined: the
 * flags it names, and those it names outside [brackets] and (alternatives), which it marks required.
 */
function usageLines(): Array<{ command: string; action: string; flags: Set<string>; required: Set<string> }> {
  const lines: Array<{ command: string; action: string; flags: Set<string>; required: Set<string> }> = [];
  for (const text of Object.values(help)) {
    if (typeof text !== 'string') continue;
    const joined: string[] = [];
    for (const line of text.split('\n')) {
      if (/^ {2}gatehouse [a-z-]+ [a-z-]+/.test(line)) joined.push(line.trim());
      else if (joined.length > 0 && /^ {20,}[[-]/.test(line)) joined[joined.length - 1] += ' ' + line.trim();
    }
    for (const line of joined) {
      const [, command, action] = line.split(/\s+/) as [string, string, string];
      const usage = line.replace(/ {3,}.*$/, ''); // keys' lines end in a description
      const flags = new Set([...usage.matchAll(/--([a-z-]+)/g)].map((m) => m[1] as string));
      let depth = 0;
      let outside = '';
      for (const char of usage) {
        if (char === '[' || char === '(') depth++;
        else if (char === ']' || char === ')') depth--;
        else if (depth === 0) outside += char;
      }
      const required = new Set([...outside.matchAll(/--([a-z-]+)/g)].map((m) => m[1] as string));
      lines.push({ command, action, flags, required });
    }
  }
  return lines;
}

describe('the command table and the help texts', () => {
  const globals = new Set(Object.keys(GLOBAL_FLAGS));

  it('every usage line names an action of the table, with exactly its flags and its required ones', () => {
    const lines = usageLines();
    assert.ok(lines.length >= 25, `${lines.length} usage lines read`);
    const byAction = new Map<string, { flags: Set<string>; required: Set<string> | undefined }>();
    for (const line of lines) {
      // Commands without actions (completion's examples) have no per-action usage to compare.
      if ((COMMANDS as Record<string, CommandSpec>)[line.command]?.actions === undefined) continue;
      const key = `${line.command} ${line.action}`;
      const seen = byAction.get(key) ?? { flags: new Set<string>(), required: undefined };
      for (const flag of line.flags) if (!globals.has(flag)) seen.flags.add(flag);
      // A flag one form of the action leaves out (users update USER_ID | --username) is not required.
      seen.required = new Set(
        [...line.required].filter((flag) => !globals.has(flag) && (seen.required?.has(flag) ?? true)),
      );
      byAction.set(key, seen);
    }
    for (const [name, spec] of Object.entries(COMMANDS) as Array<[string, CommandSpec]>) {
      for (const [action, { flags }] of Object.entries(spec.actions ?? {})) {
        const usage = byAction.get(`${name} ${action}`);
        assert.ok(usage !== undefined, `no usage line for gatehouse ${name} ${action}`);
        assert.deepEqual([...usage.flags].sort(), Object.keys(flags).sort(), `flags of ${name} ${action}`);
        const required = Object.entries(flags)
          .filter(([, flag]) => flag.required === true)
          .map(([flag]) => flag);
        assert.deepEqual(
          [...(usage.required ?? [])].sort(),
          required.sort(),
          `required of ${name} ${action}`,
        );
        byAction.delete(`${name} ${action}`);
      }
    }
    assert.deepEqual([...byAction.keys()], [], 'usage lines of actions the table lacks');
  });
});

describe('parseCommandArgs and the table', () => {
  it('refuses an action run without a flag its usage marks required', () => {
    assert.throws(
      () => parseCommandArgs(['foo'], { description: { type: 'string' } }, 'scopes create', 1),
      (error: unknown) =>
        error instanceof UsageError && /scopes create needs --description/.test(error.message),
    );
    const parsed = parseCommandArgs(
      ['foo', '--description', 'Foo'],
      { description: { type: 'string' } },
      'scopes create',
      1,
    );
    assert.equal(parsed.values.description, 'Foo');
    // --help prints the usage instead, whatever is missing.
    assert.equal(
      parseCommandArgs(['--help'], { description: { type: 'string' } }, 'scopes create').values.help,
      true,
    );
  });

  it('names the nearest flag for a mistyped one, and none for a word far from every flag', () => {
    const options = { description: { type: 'string' } } as const;
    assert.throws(
      () => parseCommandArgs(['foo', '--descripton', 'x'], options, 'scopes create', 1),
      /has no option --descripton \(did you mean --description\?\)/,
    );
    assert.throws(
      () => parseCommandArgs(['--jsn'], options, 'scopes list'),
      /has no option --jsn \(did you mean --json\?\)/,
    );
    assert.throws(
      () => parseCommandArgs(['--frobnicate'], options, 'scopes list'),
      (error: unknown) => error instanceof UsageError && !error.message.includes('did you mean'),
    );
  });

  it("the distance is Levenshtein's, shared with the GATEHOUSE_* variable warnings", () => {
    assert.equal(editDistance('kitten', 'sitting'), 3);
    assert.equal(closestName('clints', ['clients', 'users']), 'clients');
    assert.equal(closestName('zzzzzz', ['clients', 'users'], 2), undefined);
  });
});
