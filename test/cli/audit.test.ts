import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { backends } from '../helpers/backends.js';
import { assertOk, assertRefused, cliStore, newSecret, type RunResult } from '../helpers/cli.js';

interface EventJson {
  id: string;
  type: string;
  actor: { type: string; id: string | null } | null;
  client_id: string | null;
  user_id: string | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}
interface ListJson {
  items: EventJson[];
  next_cursor: string | null;
}

const json = <T>(result: RunResult): T => {
  assertOk(result);
  return JSON.parse(result.stdout) as T;
};

/** Issue 30, point 4 (docs/decisions.md, decision 41): `gatehouse audit list`. */
for (const backend of backends()) {
  describe(`gatehouse audit (${backend})`, () => {
    it('lists what commands changed, by cli, filtered and paged; each change also a JSON line on stderr', async (t) => {
      const store = await cliStore(backend);
      t.after(() => store.cleanup());
      const secret = newSecret();
      const cli = (...args: string[]) => store.cli(args, { secret });
      assertOk(await cli('init'));

      const created = await cli('clients', 'create', '--name', 'Audited', '--json');
      const client = json<{ client_id: string; client_secret: string }>(created);
      // The log line for a pipeline: one per event, after the change committed; never the secret.
      const line = created.stderr.split('\n').find((l) => l.startsWith('{"audit"'));
      assert.ok(line, created.stderr);
      const logged = (JSON.parse(line) as { audit: EventJson }).audit;
      assert.equal(logged.type, 'client.created');
      assert.ok(!created.stderr.includes(client.client_secret));
      assertOk(await cli('clients', 'update', client.client_id, '--name', 'Audited again'));
      assertOk(await cli('scopes', 'create', 'audit:read', '--description', 'Read the audit'));

      const ofClient = json<ListJson>(await cli('audit', 'list', '--client', client.client_id, '--json'));
      assert.deepEqual(
        ofClient.items.map((e) => [e.type, e.actor]),
        [
          ['client.updated', { type: 'cli', id: null }],
          ['client.created', { type: 'cli', id: null }],
        ],
      );
      assert.equal(ofClient.items[0]?.before?.name, 'Audited');
      assert.equal(ofClient.items[0]?.after?.name, 'Audited again');
      assert.equal(ofClient.next_cursor, null);

      const scopes = json<ListJson>(
        await cli('audit', 'list', '--type', 'scope.created,scope.deleted', '--json'),
      );
      assert.deepEqual(
        scopes.items.map((e) => e.type),
        ['scope.created'],
      );

      // Pages: one event each, the cursor of one the start of the next.
      const first = json<ListJson>(await cli('audit', 'list', '--limit', '1', '--json'));
      assert.equal(first.items.length, 1);
      assert.ok(first.next_cursor !== null);
      const second = json<ListJson>(
        await cli('audit', 'list', '--limit', '1', '--cursor', first.next_cursor, '--json'),
      );
      assert.notEqual(second.items[0]?.id, first.items[0]?.id);

      // One line per event, newest first.
      const human = await cli('audit', 'list', '--client', client.client_id);
      assertOk(human);
      const lines = human.stdout.trim().split('\n');
      assert.equal(lines.length, 2);
      assert.match(lines[0]!, new RegExp(`client\\.updated  by cli  client ${client.client_id}$`));
      assert.match(lines[1]!, /client\.created/);

      const later = json<ListJson>(await cli('audit', 'list', '--since', '2999-01-01T00:00:00Z', '--json'));
      assert.deepEqual(later.items, []);

      assertRefused(await cli('audit', 'list', '--since', 'yesterday'), 2, /--since/);
      assertRefused(await cli('audit', 'list', '--limit', '500'), 2, /--limit/);
      assertRefused(await cli('audit', 'list', '--cursor', 'nonsense'), 2, /--cursor/);
      assertRefused(await cli('audit', 'list', '--type', 'Bad Type'), 2, /--type/);
    });

    it('records identity providers and initial access tokens changed on the command line, never their secrets', async (t) => {
      const store = await cliStore(backend);
      t.after(() => store.cleanup());
      const secret = newSecret();
      const upstreamSecret = 'upstream-secret-kept-out-of-events';
      const cli = (args: string[], stdin?: string) =>
        store.cli(args, { secret, ...(stdin === undefined ? {} : { stdin }) });
      assertOk(await cli(['init']));
      const github = [
        '--authorization-endpoint',
        'https://github.example/login/oauth/authorize',
        '--token-endpoint',
        'https://github.example/login/oauth/access_token',
        '--userinfo-endpoint',
        'https://api.github.example/user',
        '--client-id',
        'Iv1.abc',
        '--client-secret-stdin',
        '--subject-claim',
        'id',
      ];
      assertOk(await cli(['idps', 'create', '--name', 'GitHub', ...github], upstreamSecret));
      assertOk(await cli(['idps', 'update', 'github', '--name', 'GitHub Enterprise']));
      assertOk(await cli(['idps', 'delete', 'github']));
      const made = json<{ id: string; initial_access_token: string }>(
        await cli(['initial-access-tokens', 'create', '--scopes', 'read', '--json']),
      );
      assertOk(await cli(['initial-access-tokens', 'delete', made.id]));

      const listed = await cli([
        'audit',
        'list',
        '--type',
        'identity-provider.created,identity-provider.updated,identity-provider.deleted,' +
          'initial-access-token.created,initial-access-token.deleted',
        '--json',
      ]);
      const { items } = json<ListJson>(listed);
      assert.deepEqual(
        items.map((e) => [e.type, e.actor]),
        [
          ['initial-access-token.deleted', { type: 'cli', id: null }],
          ['initial-access-token.created', { type: 'cli', id: null }],
          ['identity-provider.deleted', { type: 'cli', id: null }],
          ['identity-provider.updated', { type: 'cli', id: null }],
          ['identity-provider.created', { type: 'cli', id: null }],
        ],
      );
      const updated = items[3];
      assert.equal(updated?.before?.name, 'GitHub');
      assert.equal(updated?.after?.name, 'GitHub Enterprise');
      assert.equal(updated?.after?.client_secret_set, true);
      assert.deepEqual(items[1]?.after?.scopes, ['read']);
      assert.equal(items[0]?.before?.id, made.id);
      assert.ok(!listed.stdout.includes(upstreamSecret));
      assert.ok(!listed.stdout.includes(made.initial_access_token));
    });
  });
}
