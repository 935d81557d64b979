import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { backends } from '../helpers/backends.js';
import { assertOk, assertRefused, cliStore, newSecret, type RunResult } from '../helpers/cli.js';

/** docs/decisions.md, decision 34: clients --require-mfa and users reset-mfa. */

const json = <T>(result: RunResult): T => {
  assertOk(result);
  return JSON.parse(result.stdout) as T;
};

for (const backend of backends()) {
  describe(`second factors on the command line (${backend})`, () => {
    it('clients create --require-mfa, update --no-require-mfa; both flags refused', async (t) => {
      const store = await cliStore(backend);
      t.after(() => store.cleanup());
      const secret = newSecret();
      const cli = (args: string[]) => store.cli(args, { secret });
      assertOk(await cli(['init']));
      type Json = { client_id: string; require_mfa: boolean };
      const [required, plain, both] = await Promise.all([
        cli([
          'clients',
          'create',
          '--name',
          'Payroll',
          '--redirect-uri',
          'https://pay.example/cb',
          '--require-mfa',
          '--json',
        ]),
        cli(['clients', 'create', '--name', 'Notes', '--redirect-uri', 'https://notes.example/cb']),
        cli(['clients', 'create', '--name', 'Both', '--require-mfa', '--no-require-mfa']),
      ]);
      const created = json<Json>(required);
      assert.equal(created.require_mfa, true);
      assert.match(plain.stdout, /require_mfa:\s+false/);
      assertRefused(both, 2, /--require-mfa or --no-require-mfa/);
      const lifted = json<Json>(
        await cli(['clients', 'update', created.client_id, '--no-require-mfa', '--json']),
      );
      assert.equal(lifted.require_mfa, false);
      assert.equal((await store.open().clients.get(created.client_id))?.requireMfa, false);
    });

    it('users reset-mfa removes the authenticator app and the recovery codes, and shows no secret', async (t) => {
      const store = await cliStore(backend);
      t.after(() => store.cleanup());
      const secret = newSecret();
      const cli = (args: string[], stdin?: string) => store.cli(args, { secret, stdin });
      assertOk(await cli(['init']));
      const user = json<{ id: string }>(
        await cli(
          ['users', 'create', '--username', 'alice', '--password-stdin', '--json'],
          'a long password\n',
        ),
      );
      const storage = store.open();
      const sealed = 'sealed-secret-that-must-not-be-shown';
      assert.equal(
        await storage.secondFactors.beginTotp({ userId: user.id, secretSealed: sealed, createdAt: 1 }),
        true,
      );
      assert.equal(await storage.secondFactors.useTotpStep(user.id, 5, 2, true), true);
      await storage.secondFactors.replaceRecoveryCodes(user.id, ['h1', 'h2', 'h3'], 2);

      const help = await cli(['users', 'reset-mfa', '--help']);
      assertOk(help);
      assert.match(help.stdout, /gatehouse users reset-mfa \(USER_ID \| --username NAME\)/);
      assertRefused(await cli(['users', 'reset-mfa']), 2, /USER_ID or --username/);

      const reset = await cli(['users', 'reset-mfa', '--username', 'alice']);
      assertOk(reset);
      assert.equal(
        reset.stdout,
        'Removed the second factors of alice: the authenticator app and 3 recovery code(s).\n',
      );
      assert.ok(!reset.stdout.includes(sealed) && !reset.stderr.includes(sealed));
      assert.equal(await storage.secondFactors.getTotp(user.id), undefined);
      assert.equal(await storage.secondFactors.countRecoveryCodes(user.id), 0);
      assert.deepEqual(json(await cli(['users', 'reset-mfa', user.id, '--json'])), {
        user: user.id,
        authenticator_app_removed: false,
        recovery_codes_removed: 0,
      });
    });
  });
}
