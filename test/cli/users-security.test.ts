import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sha256 } from '../../src/shared/crypto.js';
import { backends } from '../helpers/backends.js';
import { assertOk, assertRefused, cliStore, newSecret, type RunResult } from '../helpers/cli.js';

interface UserJson {
  id: string;
  username: string;
  disabled: boolean;
  sessions: number;
  sign_in_methods: { method: string; description: string; count?: number }[];
}

const json = <T>(result: RunResult): T => {
  assertOk(result);
  return JSON.parse(result.stdout) as T;
};

for (const backend of backends()) {
  describe(`users show and users update --disabled (${backend}, decision 37)`, () => {
    it('show lists the ways of signing in and sessions, never a secret; --disabled ends them, --enabled lets the user in again', async (t) => {
      const store = await cliStore(backend);
      t.after(() => store.cleanup());
      const secret = newSecret();
      const cli = (args: string[], stdin?: string) => store.cli(args, { secret, stdin });
      assertOk(await cli(['init']));
      const user = json<UserJson>(
        await cli(
          [
            'users',
            'create',
            '--username',
            'ada',
            '--password-stdin',
            '--email',
            'ada@example.com',
            '--json',
          ],
          'ada password 1',
        ),
      );
      assert.equal(user.disabled, false);
      const storage = store.open();
      const now = Math.floor(Date.now() / 1000);
      for (const name of ['laptop', 'phone']) {
        await storage.browserSessions.insert({
          hash: sha256(`${name}-${user.id}`),
          userId: user.id,
          createdAt: now,
          expiresAt: now + 3600,
        });
      }

      const shown = await cli(['users', 'show', user.id]);
      assertOk(shown);
      assert.match(shown.stdout, /^User ada \(id [0-9a-f-]{36}\)$/m);
      assert.match(shown.stdout, /email: +ada@example\.com/);
      assert.match(shown.stdout, /disabled: +no/);
      assert.match(shown.stdout, /browser sessions: 2/);
      assert.match(shown.stdout, /signs in with:\n {4}password: set/);
      const stored = await storage.users.get(user.id);
      assert.ok(stored !== undefined && !shown.stdout.includes(stored.passwordHash));
      assert.ok(!shown.stdout.includes('ada password 1'));
      const byName = json<UserJson>(await cli(['users', 'show', '--username', 'ada', '--json']));
      assert.deepEqual(byName.sign_in_methods, [{ method: 'password', description: 'set' }]);
      assert.equal(byName.sessions, 2);
      assert.ok(!JSON.stringify(byName).includes('argon2'));

      const disabled = await cli(['users', 'update', user.id, '--disabled']);
      assertOk(disabled);
      assert.match(disabled.stdout, /ada .* is disabled: they cannot sign in/);
      assert.equal((await storage.users.get(user.id))?.disabled, true);
      assert.equal(await storage.browserSessions.get(sha256(`laptop-${user.id}`), now), undefined);
      const afterDisabling = json<UserJson>(await cli(['users', 'show', user.id, '--json']));
      assert.equal(afterDisabling.disabled, true);
      assert.equal(afterDisabling.sessions, 0);
      assert.match((await cli(['users', 'list'])).stdout, new RegExp(`${user.id}  ada  disabled`));

      const enabled = json<UserJson>(
        await cli(['users', 'update', '--username', 'ada', '--enabled', '--json']),
      );
      assert.equal(enabled.disabled, false);
      assert.equal((await storage.users.get(user.id))?.disabled, false);

      assertRefused(
        await cli(['users', 'update', user.id, '--disabled', '--enabled']),
        2,
        /--disabled or --enabled/,
      );
      assertRefused(await cli(['users', 'show']), 2, /USER_ID or --username/);
      assertRefused(await cli(['users', 'show', 'no-such-user']), 1, /no such user/);
      assertRefused(
        await cli(['users', 'create', '--username', 'x', '--password-stdin', '--disabled'], 'x password'),
        2,
        /no option --disabled/,
      );
      const help = await cli(['users', '--help']);
      assert.match(help.stdout, /gatehouse users show \(USER_ID \| --username NAME\)/);
      assert.match(help.stdout, /--disabled stops every sign-in of the user/);
    });

    it('show lists passkeys by name, the authenticator app and the recovery codes left, never a key or a code (decisions 33, 34)', async (t) => {
      const store = await cliStore(backend);
      t.after(() => store.cleanup());
      const secret = newSecret();
      const cli = (args: string[], stdin?: string) => store.cli(args, { secret, stdin });
      assertOk(await cli(['init']));
      const user = json<UserJson>(
        await cli(
          ['users', 'create', '--username', 'grace', '--password-stdin', '--json'],
          'grace password 1',
        ),
      );
      const storage = store.open();
      const now = Math.floor(Date.now() / 1000);
      const publicKey = 'pQECAyYgASFYIPublicKeyMaterialNotASecretButNotShownEither';
      for (const name of ['Laptop', 'Phone']) {
        assert.equal(
          await storage.passkeys.insert({
            id: `cred-${name}-${user.id}`,
            userId: user.id,
            name,
            publicKey,
            signCount: 0,
            transports: ['internal'],
            backupEligible: false,
            backedUp: false,
            createdAt: now,
            lastUsedAt: null,
          }),
          true,
        );
      }
      assert.equal(
        await storage.secondFactors.beginTotp({
          userId: user.id,
          secretSealed: 'sealed-secret',
          createdAt: now,
        }),
        true,
      );
      assert.equal(await storage.secondFactors.useTotpStep(user.id, 1000, now, true), true);
      const codes = ['code-one', 'code-two', 'code-three'].map((code) => sha256(code));
      await storage.secondFactors.replaceRecoveryCodes(user.id, codes, now);
      assert.equal(await storage.secondFactors.useRecoveryCode(user.id, codes[0]!, now), true);

      const shown = json<UserJson>(await cli(['users', 'show', user.id, '--json']));
      assert.deepEqual(shown.sign_in_methods, [
        { method: 'password', description: 'set' },
        { method: 'passkey', description: '2 passkeys (Laptop, Phone)', count: 2 },
        { method: 'totp', description: 'authenticator app set up' },
        { method: 'recovery-codes', description: '2 left', count: 2 },
      ]);
      const text = (await cli(['users', 'show', user.id])).stdout;
      assert.match(text, /passkey: 2 passkeys \(Laptop, Phone\)/);
      for (const secretPart of [publicKey, 'sealed-secret', codes[1]!, 'cred-Laptop']) {
        assert.ok(!text.includes(secretPart), `users show printed ${secretPart}`);
      }

      // reset-mfa takes the app and the codes; passkeys stay, a first factor of their own (decision 34).
      assertOk(await cli(['users', 'reset-mfa', user.id]));
      const reset = json<UserJson>(await cli(['users', 'show', user.id, '--json']));
      assert.deepEqual(
        reset.sign_in_methods.map((line) => line.method),
        ['password', 'passkey'],
      );
    });
  });
}
