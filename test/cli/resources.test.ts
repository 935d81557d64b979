import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { backends } from '../helpers/backends.js';
import { assertOk, assertRefused, cliStore, newSecret, type RunResult } from '../helpers/cli.js';

interface ResourceJson {
  uri: string;
  name: string | null;
  scopes: string[];
  created_at: string;
}

const json = <T>(result: RunResult): T => {
  assertOk(result);
  return JSON.parse(result.stdout) as T;
};

for (const backend of backends()) {
  describe(`gatehouse resources (${backend})`, () => {
    it('creates, lists and deletes resource servers; refuses bad input, changing nothing', async (t) => {
      const store = await cliStore(backend);
      t.after(() => store.cleanup());
      const secret = newSecret();
      const cli = (...args: string[]) => store.cli(args, { secret });
      assertOk(await cli('init'));

      const created = json<ResourceJson>(
        await cli(
          'resources',
          'create',
          '--uri',
          'HTTPS://Calendar.example/',
          '--scopes',
          'cal:read cal:write',
          '--name',
          'Calendar',
          '--json',
        ),
      );
      assert.deepEqual(
        { uri: created.uri, name: created.name, scopes: created.scopes },
        { uri: 'https://calendar.example', name: 'Calendar', scopes: ['cal:read', 'cal:write'] },
      );
      const plain = await cli('resources', 'create', '--uri', 'http://localhost:9000/mcp');
      assertOk(plain);
      assert.match(plain.stdout, /^uri: +http:\/\/localhost:9000\/mcp$/m);
      assert.match(plain.stdout, /^scopes: +\(any\)$/m);

      // The scopes named were registered, as clients create --scopes registers them.
      const scopes = json<{ name: string; description: string }[]>(await cli('scopes', 'list', '--json'));
      assert.equal(scopes.find((scope) => scope.name === 'cal:write')?.description, 'Access “cal:write”');

      assertRefused(
        await cli('resources', 'create', '--uri', 'https://calendar.example:443'),
        1,
        /is registered/,
      );
      assertRefused(
        await cli('resources', 'create', '--uri', 'https://x.example/#a', '--json'),
        1,
        /"error":"invalid_input"/,
      );
      assertRefused(await cli('resources', 'create', '--uri', 'http://x.example'), 1, /https/);
      assertRefused(await cli('resources', 'create'), 2, /needs --uri/);
      assertRefused(await cli('resources', 'create', '--uri', 'https://x.example', 'extra'), 2, /./);
      assertRefused(await cli('resources', 'list', '--uri', 'https://x.example'), 2, /has no option --uri/);
      assertRefused(await cli('resources', 'frobnicate'), 2, /unknown resources action/);

      const listed = json<ResourceJson[]>(await cli('resources', 'list', '--json'));
      assert.deepEqual(
        listed.map((item) => item.uri),
        ['http://localhost:9000/mcp', 'https://calendar.example'],
      );
      const text = await cli('resources', 'list');
      assertOk(text);
      assert.match(text.stdout, /^https:\/\/calendar\.example {2}cal:read cal:write {2}Calendar$/m);

      const deleted = json<{ deleted: string }>(
        await cli('resources', 'delete', 'https://calendar.example/', '--json'),
      );
      assert.equal(deleted.deleted, 'https://calendar.example');
      assertRefused(await cli('resources', 'delete', 'https://calendar.example'), 1, /no resource/);
      assertRefused(await cli('resources', 'delete'), 2, /needs a URI/);
      const after = json<ResourceJson[]>(await cli('resources', 'list', '--json'));
      assert.deepEqual(
        after.map((item) => item.uri),
        ['http://localhost:9000/mcp'],
      );
      const empty = await cli('resources', 'delete', 'http://localhost:9000/mcp');
      assertOk(empty);
      assert.match((await cli('resources', 'list')).stdout, /No resources\./);
    });
  });
}
