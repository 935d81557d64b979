import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { generate } from 'selfsigned';
import { verifyPassword } from '../../src/core/users/passwords.js';
import { randomToken, sha256 } from '../../src/shared/crypto.js';
import { backends } from '../helpers/backends.js';
import {
  CLI,
  assertOk,
  assertRefused,
  cleanEnv,
  cliStore,
  newSecret,
  runCli,
  type RunResult,
} from '../helpers/cli.js';

interface ClientJson {
  client_id: string;
  client_secret?: string;
  name: string;
  redirect_uris: string[];
  scopes: string[];
  token_type: string;
}

const json = <T>(result: RunResult): T => {
  assertOk(result);
  return JSON.parse(result.stdout) as T;
};

for (const backend of backends()) {
  describe(`management commands (${backend})`, () => {
    it('clients update and rotate-secret, users update and set-password, grants list and revoke; built-in scopes stay', async (t) => {
      const store = await cliStore(backend);
      t.after(() => store.cleanup());
      const secret = newSecret();
      const cli = (args: string[], stdin?: string) => store.cli(args, { secret, stdin });
      assertOk(await cli(['init']));
      const client = json<ClientJson>(
        await cli([
          'clients',
          'create',
          '--name',
          'Notes',
          '--redirect-uri',
          'https://notes.example/cb',
          '--json',
        ]),
      );
      const [updated, rotated, alice, profile, admin] = await Promise.all([
        cli([
          'clients',
          'update',
          client.client_id,
          '--name',
          'Notes 2',
          '--scopes',
          'notes:read notes:write',
          '--json',
        ]),
        cli(['clients', 'rotate-secret', client.client_id, '--json']),
        cli(['users', 'create', '--username', 'alice', '--password-stdin', '--json'], 'first password'),
        cli(['scopes', 'delete', 'profile']),
        cli(['scopes', 'delete', 'admin', '--json']),
      ]);
      const updatedClient = json<ClientJson>(updated);
      assert.equal(updatedClient.name, 'Notes 2');
      assert.deepEqual(updatedClient.scopes, ['notes:read', 'notes:write']);
      assert.deepEqual(
        updatedClient.redirect_uris,
        ['https://notes.example/cb'],
        'what was not given is kept',
      );
      const { client_secret: newClientSecret } = json<{ client_secret: string }>(rotated);
      assert.notEqual(newClientSecret, client.client_secret);
      const user = json<{ id: string; username: string }>(alice);
      assertRefused(profile, 1, /built-in scope profile cannot be deleted/);
      assert.equal(JSON.parse(admin.stderr.trim()).error, 'conflict');

      const storage = store.open();
      const stored = await storage.clients.get(client.client_id);
      assert.equal(
        stored?.secretHash,
        sha256(newClientSecret),
        'the new secret is the one stored; the old is gone',
      );
      assert.deepEqual(
        (await storage.scopes.list())
          .map((s) => s.name)
          .filter((n) => n === 'profile' || n === 'admin')
          .sort(),
        ['admin', 'profile'],
      );

      // What a sign-in and a code flow would have left: a grant, a refresh token, a browser session.
      const now = Math.floor(Date.now() / 1000);
      const grantId = randomUUID();
      await storage.grants.insert({
        id: grantId,
        clientId: client.client_id,
        userId: user.id,
        scope: ['notes:read'],
        createdAt: now,
        expiresAt: null,
        revokedAt: null,
      });
      const refreshHash = sha256(randomToken('rt_'));
      await storage.refreshTokens.insert({
        hash: refreshHash,
        grantId,
        clientId: client.client_id,
        userId: user.id,
        scope: ['notes:read'],
        createdAt: now,
        expiresAt: null,
        retiredAt: null,
        authTime: null,
        sid: null,
        resources: [],
        dpopJkt: null,
      });
      const sessionHash = sha256(randomToken('bs_'));
      await storage.browserSessions.insert({
        hash: sessionHash,
        userId: user.id,
        createdAt: now,
        expiresAt: now + 3600,
      });

      const renamed = json<{ username: string }>(
        await cli(['users', 'update', user.id, '--username', 'alice2', '--json']),
      );
      assert.equal(renamed.username, 'alice2');
      assert.ok(await storage.browserSessions.get(sessionHash, now), 'a rename alone ends no session');
      assertOk(
        await cli(['users', 'set-password', '--username', 'alice2', '--password-stdin'], 'second password\n'),
      );
      const changed = await storage.users.get(user.id);
      assert.equal(await verifyPassword(changed?.passwordHash ?? '', 'second password'), true);
      assert.equal(
        await storage.browserSessions.get(sessionHash, now),
        undefined,
        'the browser session is ended',
      );
      assert.notEqual(
        (await storage.grants.get(grantId))?.revokedAt,
        null,
        'the grant is revoked: its refresh token and access tokens stop working',
      );
      assert.ok(await storage.refreshTokens.get(refreshHash), 'revoked with its grant, not deleted');

      // A grant given after the new password, to list and revoke.
      const laterGrantId = randomUUID();
      await storage.grants.insert({
        id: laterGrantId,
        clientId: client.client_id,
        userId: user.id,
        scope: ['notes:read'],
        createdAt: now,
        expiresAt: null,
        revokedAt: null,
      });
      const [byUser, byClient] = await Promise.all([
        cli(['grants', 'list', '--user', 'alice2', '--json']),
        cli(['grants', 'list', '--client', client.client_id, '--json']),
      ]);
      assert.deepEqual(
        json<{ id: string }[]>(byUser).map((g) => g.id),
        [laterGrantId],
      );
      assert.deepEqual(
        json<{ id: string }[]>(byClient).map((g) => g.id),
        [laterGrantId],
      );
      assertOk(await cli(['grants', 'revoke', laterGrantId]));
      assert.notEqual((await storage.grants.get(laterGrantId))?.revokedAt, null);
      const [after, again] = await Promise.all([
        cli(['grants', 'list', '--user', user.id, '--json']),
        cli(['grants', 'revoke', laterGrantId, '--json']),
      ]);
      assert.deepEqual(json(after), []);
      assert.equal(again.code, 1);
      assert.equal(JSON.parse(again.stderr.trim()).error, 'not_found');
    });

    it('OpenID Connect options: users --email/--name, clients --post-logout-redirect-uri and --id-token-signed-response-alg', async (t) => {
      const store = await cliStore(backend);
      t.after(() => store.cleanup());
      const secret = newSecret();
      const cli = (args: string[], stdin?: string) => store.cli(args, { secret, stdin });
      assertOk(await cli(['init']));
      type UserJson = { id: string; username: string; email: string | null; name: string | null };
      type OidcClientJson = ClientJson & {
        post_logout_redirect_uris: string[];
        id_token_signed_response_alg: string;
      };
      const [carol, badEmail, rp, badUri, badAlg, plain] = await Promise.all([
        cli(
          [
            'users',
            'create',
            '--username',
            'carol',
            '--password-stdin',
            '--email',
            'carol@example.com',
            '--name',
            'Carol C',
            '--json',
          ],
          'carol password',
        ),
        cli(
          ['users', 'create', '--username', 'dave', '--password-stdin', '--email', 'dave@', '--json'],
          'dave password',
        ),
        cli([
          'clients',
          'create',
          '--name',
          'RP',
          '--redirect-uri',
          'https://rp.example/cb',
          '--post-logout-redirect-uri',
          'https://rp.example/bye',
          '--post-logout-redirect-uri',
          'https://rp.example/again',
          '--id-token-signed-response-alg',
          'ES256',
          '--json',
        ]),
        cli([
          'clients',
          'create',
          '--name',
          'X',
          '--redirect-uri',
          'https://x.example/cb',
          '--post-logout-redirect-uri',
          'https://x.example/#f',
        ]),
        cli([
          'clients',
          'create',
          '--name',
          'Y',
          '--redirect-uri',
          'https://y.example/cb',
          '--id-token-signed-response-alg',
          'none',
        ]),
        cli(['clients', 'create', '--name', 'Plain', '--redirect-uri', 'https://p.example/cb']),
      ]);
      const user = json<UserJson>(carol);
      assert.deepEqual([user.email, user.name], ['carol@example.com', 'Carol C']);
      assertRefused(badEmail, 1, /email/);
      const client = json<OidcClientJson>(rp);
      assert.deepEqual(client.post_logout_redirect_uris, [
        'https://rp.example/bye',
        'https://rp.example/again',
      ]);
      assert.equal(client.id_token_signed_response_alg, 'ES256');
      assertRefused(badUri, 1, /post_logout_redirect_uris/);
      assertRefused(badAlg, 1, /id_token_signed_response_alg/);
      assert.match(plain.stdout, /id_token_alg:\s+RS256/);

      // One user, so one command after the other: each writes the whole record it read.
      const renamed = await cli([
        'users',
        'update',
        '--username',
        'carol',
        '--name',
        'Carol Carter',
        '--json',
      ]);
      const cleared = await cli(['users', 'update', user.id, '--email', '', '--json']);
      const updatedClient = await cli([
        'clients',
        'update',
        client.client_id,
        '--post-logout-redirect-uri',
        '',
        '--id-token-signed-response-alg',
        'RS256',
        '--json',
      ]);
      assertOk(renamed);
      assertOk(cleared);
      const storage = store.open();
      const stored = await storage.users.get(user.id);
      assert.deepEqual([stored?.email, stored?.name, stored?.username], [null, 'Carol Carter', 'carol']);
      const changed = json<OidcClientJson>(updatedClient);
      assert.deepEqual(
        [changed.post_logout_redirect_uris, changed.id_token_signed_response_alg],
        [[], 'RS256'],
      );
    });

    it('RFC 9126: clients create --require-par, update --no-require-par and --require-par, both at once refused', async (t) => {
      const store = await cliStore(backend);
      t.after(() => store.cleanup());
      const secret = newSecret();
      const cli = (args: string[]) => store.cli(args, { secret });
      assertOk(await cli(['init']));
      type ParClientJson = ClientJson & { require_pushed_authorization_requests: boolean };
      const [strict, plain, both] = await Promise.all([
        cli([
          'clients',
          'create',
          '--name',
          'Strict',
          '--redirect-uri',
          'https://s.example/cb',
          '--require-par',
          '--json',
        ]),
        cli(['clients', 'create', '--name', 'Plain', '--redirect-uri', 'https://p.example/cb']),
        cli(['clients', 'create', '--name', 'Both', '--require-par', '--no-require-par']),
      ]);
      const created = json<ParClientJson>(strict);
      assert.equal(created.require_pushed_authorization_requests, true);
      assert.match(plain.stdout, /require_par:\s+false/);
      assertRefused(both, 2, /--require-par or --no-require-par/);
      const lifted = json<ParClientJson>(
        await cli(['clients', 'update', created.client_id, '--no-require-par', '--json']),
      );
      assert.equal(lifted.require_pushed_authorization_requests, false);
      const storage = store.open();
      assert.equal((await storage.clients.get(created.client_id))?.requirePushedAuthorizationRequests, false);
      const again = json<ParClientJson>(
        await cli(['clients', 'update', created.client_id, '--require-par', '--json']),
      );
      assert.equal(again.require_pushed_authorization_requests, true);
    });

    it('RFC 9449: clients create --require-dpop, update --no-require-dpop; refused with MAC tokens or both flags', async (t) => {
      const store = await cliStore(backend);
      t.after(() => store.cleanup());
      const secret = newSecret();
      const cli = (args: string[]) => store.cli(args, { secret });
      assertOk(await cli(['init']));
      type DpopClientJson = ClientJson & { dpop_bound_access_tokens: boolean };
      const [bound, plain, both, mac] = await Promise.all([
        cli([
          'clients',
          'create',
          '--name',
          'Bound',
          '--grant-types',
          'client_credentials',
          '--require-dpop',
          '--json',
        ]),
        cli(['clients', 'create', '--name', 'Plain', '--grant-types', 'client_credentials']),
        cli(['clients', 'create', '--name', 'Both', '--require-dpop', '--no-require-dpop']),
        cli(['clients', 'create', '--name', 'Mac', '--token-type', 'mac', '--require-dpop']),
      ]);
      const created = json<DpopClientJson>(bound);
      assert.equal(created.dpop_bound_access_tokens, true);
      assert.match(plain.stdout, /require_dpop:\s+false/);
      assertRefused(both, 2, /--require-dpop or --no-require-dpop/);
      assertRefused(mac, 1, /dpop_bound_access_tokens.*MAC/);
      const lifted = json<DpopClientJson>(
        await cli(['clients', 'update', created.client_id, '--no-require-dpop', '--json']),
      );
      assert.equal(lifted.dpop_bound_access_tokens, false);
      const storage = store.open();
      assert.equal((await storage.clients.get(created.client_id))?.dpopBoundAccessTokens, false);
    });

    it('RFC 8693: clients create --grant-types token_exchange registers the URN; a public client is refused', async (t) => {
      const store = await cliStore(backend);
      t.after(() => store.cleanup());
      const secret = newSecret();
      const cli = (args: string[]) => store.cli(args, { secret });
      assertOk(await cli(['init']));
      const [short, full, publicOne] = await Promise.all([
        cli(['clients', 'create', '--name', 'Short', '--grant-types', 'token_exchange', '--json']),
        cli([
          'clients',
          'create',
          '--name',
          'Full',
          '--grant-types',
          'urn:ietf:params:oauth:grant-type:token-exchange,client_credentials',
          '--json',
        ]),
        cli(['clients', 'create', '--name', 'Public', '--public', '--grant-types', 'token_exchange']),
      ]);
      const urn = 'urn:ietf:params:oauth:grant-type:token-exchange';
      type GrantClientJson = ClientJson & { grant_types: string[] };
      assert.deepEqual(json<GrantClientJson>(short).grant_types, [urn]);
      assert.deepEqual(json<GrantClientJson>(full).grant_types, [urn, 'client_credentials']);
      assertRefused(publicOne, 1, /public client cannot use token exchange/);
    });

    it("decision 23: clients create and update --exchange-target (repeatable; '' clears)", async (t) => {
      const store = await cliStore(backend);
      t.after(() => store.cleanup());
      const secret = newSecret();
      const cli = (args: string[]) => store.cli(args, { secret });
      assertOk(await cli(['init']));
      type ExchangeClientJson = ClientJson & { token_exchange_targets: string[] };
      const [created, notExchanging, malformed] = await Promise.all([
        cli([
          'clients',
          'create',
          '--name',
          'Exchanger',
          '--grant-types',
          'token_exchange',
          '--exchange-target',
          'https://API.example/',
          '--exchange-target',
          'https://files.example/v1',
          '--json',
        ]),
        cli(['clients', 'create', '--name', 'Other', '--exchange-target', 'https://api.example']),
        cli([
          'clients',
          'create',
          '--name',
          'Bad',
          '--grant-types',
          'token_exchange',
          '--exchange-target',
          'https://api.example/#x',
        ]),
      ]);
      const client = json<ExchangeClientJson>(created);
      // Canonical, as `resource` is compared (RFC 8707 §2).
      assert.deepEqual(client.token_exchange_targets, ['https://api.example', 'https://files.example/v1']);
      assertRefused(notExchanging, 1, /token_exchange_targets/);
      assertRefused(malformed, 1, /token_exchange_targets/);
      const shown = await cli(['clients', 'show', client.client_id]);
      assert.match(shown.stdout, /exchange_to:\s+https:\/\/api\.example https:\/\/files\.example\/v1/);
      const cleared = json<ExchangeClientJson>(
        await cli(['clients', 'update', client.client_id, '--exchange-target', '', '--json']),
      );
      assert.deepEqual(cleared.token_exchange_targets, []);
      assert.deepEqual((await store.open().clients.get(client.client_id))?.tokenExchangeTargets, []);
    });

    it('decision 29: users create --admin, users update --admin / --no-admin', async (t) => {
      const store = await cliStore(backend);
      t.after(() => store.cleanup());
      const secret = newSecret();
      const cli = (args: string[], stdin?: string) => store.cli(args, { secret, stdin });
      assertOk(await cli(['init']));
      type RoleJson = { id: string; username: string; admin: boolean };
      const [root, plain, both] = await Promise.all([
        cli(
          ['users', 'create', '--username', 'root', '--password-stdin', '--admin', '--json'],
          'root password',
        ),
        cli(['users', 'create', '--username', 'plain', '--password-stdin', '--json'], 'plain password'),
        cli(['users', 'update', '--username', 'nobody', '--admin', '--no-admin']),
      ]);
      assert.equal(json<RoleJson>(root).admin, true);
      const user = json<RoleJson>(plain);
      assert.equal(user.admin, false, 'not an administrator unless given the role');
      assertRefused(both, 2, /--admin or --no-admin/);
      const storage = store.open();

      const granted = await cli(['users', 'update', user.id, '--admin']);
      assertOk(granted);
      assert.match(granted.stdout, /plain .* is now an administrator/);
      assert.equal((await storage.users.get(user.id))?.admin, true);
      const listed = await cli(['users', 'list']);
      assert.match(listed.stdout, new RegExp(`${user.id}  plain  admin`));

      const taken = json<RoleJson>(
        await cli(['users', 'update', '--username', 'plain', '--no-admin', '--json']),
      );
      assert.equal(taken.admin, false);
      assert.equal((await storage.users.get(user.id))?.admin, false);
      // --no-admin is update's alone.
      assertRefused(
        await cli(['users', 'create', '--username', 'x', '--password-stdin', '--no-admin'], 'x password'),
        2,
        /no option --no-admin/,
      );
    });

    it('private_key_jwt: clients create and update with --auth-method, --jwks-file and --jwks-uri', async (t) => {
      const store = await cliStore(backend);
      t.after(() => store.cleanup());
      const secret = newSecret();
      const cli = (args: string[]) => store.cli(args, { secret });
      assertOk(await cli(['init']));
      type KeyedClientJson = ClientJson & {
        token_endpoint_auth_method: string;
        jwks: { keys: Array<Record<string, unknown>> } | null;
        jwks_uri: string | null;
        public: boolean;
      };
      const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const publicFile = join(store.dataDir, 'client-keys.json');
      const privateFile = join(store.dataDir, 'leaked-keys.json');
      writeFileSync(
        publicFile,
        JSON.stringify({ keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'k1' }] }),
      );
      writeFileSync(privateFile, JSON.stringify({ keys: [privateKey.export({ format: 'jwk' })] }));
      const keyed = [
        'clients',
        'create',
        '--grant-types',
        'client_credentials',
        '--auth-method',
        'private_key_jwt',
      ];
      const [inline, remote, leaked, both, neither, notJson, text] = await Promise.all([
        cli([...keyed, '--name', 'Inline', '--jwks-file', publicFile, '--json']),
        cli([...keyed, '--name', 'Remote', '--jwks-uri', 'https://keys.example/jwks.json', '--json']),
        cli([...keyed, '--name', 'Leaked', '--jwks-file', privateFile]),
        cli([...keyed, '--name', 'Both', '--jwks-file', publicFile, '--jwks-uri', 'https://k.example/j']),
        cli([...keyed, '--name', 'Neither']),
        cli([...keyed, '--name', 'Bad file', '--jwks-file', store.dataDir]),
        cli([...keyed, '--name', 'Shown', '--jwks-uri', 'https://keys.example/shown']),
      ]);
      const inlineClient = json<KeyedClientJson>(inline);
      assert.equal(inlineClient.client_secret, undefined, 'no secret is printed: there is none');
      assert.deepEqual(
        [inlineClient.token_endpoint_auth_method, inlineClient.jwks?.keys[0]?.kid, inlineClient.public],
        ['private_key_jwt', 'k1', false],
      );
      assert.equal(json<KeyedClientJson>(remote).jwks_uri, 'https://keys.example/jwks.json');
      assertRefused(leaked, 1, /jwks: key 1: has the private member "d"/);
      assertRefused(both, 1, /exactly one of jwks and jwks_uri/);
      assertRefused(neither, 1, /exactly one of jwks and jwks_uri/);
      assertRefused(notJson, 2, /--jwks-file: cannot read/);
      assertOk(text);
      assert.match(text.stdout, /auth_method:\s+private_key_jwt/);
      assert.match(text.stdout, /jwks_uri:\s+https:\/\/keys\.example\/shown/);
      assert.doesNotMatch(text.stdout, /client_secret/);

      const rotate = await cli(['clients', 'rotate-secret', inlineClient.client_id]);
      assertRefused(rotate, 1, /private_key_jwt client has no secret/);
      // Back to a secret: a new one is printed once, and the keys are gone.
      const back = json<KeyedClientJson>(
        await cli([
          'clients',
          'update',
          inlineClient.client_id,
          '--auth-method',
          'client_secret_basic',
          '--json',
        ]),
      );
      assert.match(back.client_secret ?? '', /^cs_/);
      assert.deepEqual([back.jwks, back.jwks_uri], [null, null]);
    });
  });
}

describe('the command line itself', () => {
  it('global options before the command, plain usage errors, ranges, JSON errors, --version, unknown variables', async (t) => {
    const store = await cliStore('sqlite');
    t.after(() => store.cleanup());
    assertOk(await store.cli(['init']));
    const dir = store.dataDir;
    const run = (args: string[], env?: NodeJS.ProcessEnv) => store.cli(args, { env });
    const [
      before,
      version,
      versionJson,
      command,
      unknown,
      missing,
      extra,
      port,
      workers,
      invalidJson,
      usageJson,
      badTtl,
      typo,
      between,
    ] = await Promise.all([
      runCli(['--data-dir', dir, '--json', 'clients', 'list']),
      runCli(['--version']),
      runCli(['version', '--json']),
      run(['clients', 'update', 'x']),
      run(['clients', 'create', '--nam', 'x']),
      run(['clients', 'create', '--name']),
      run(['clients', 'list', 'extra']),
      runCli(['serve', '--port', '99999']),
      runCli(['serve', '--workers', '0']),
      run(['clients', 'create', '--name', '', '--json']),
      runCli(['frobnicate', '--json']),
      run(['clients', 'list'], { GATEHOUSE_ACCESS_TOKEN_TTL: 'abc' }),
      run(['clients', 'list'], { GATEHOUSE_ACESS_TOKEN_TTL: '60', GATEHOUSE_TRUST_PROXY: 'true' }),
      runCli(['users', '--data-dir', dir, '--json', 'list']),
    ]);
    assert.deepEqual(json(before), [], 'gatehouse --data-dir X --json clients list works');
    assert.deepEqual(json(between), [], 'gatehouse users --data-dir X --json list works');
    const expected = packageVersion();
    assert.equal(version.stdout, `gatehouse ${expected}\n`);
    assert.deepEqual(json(versionJson), { version: expected });
    assertRefused(command, 2, /clients update needs something to change/);
    for (const result of [unknown, missing, extra]) {
      assert.equal(result.code, 2, result.stderr);
      assert.doesNotMatch(result.stderr, /To specify a positional|argument missing|Unknown option/);
    }
    assert.match(unknown.stderr, /clients create has no option --nam/);
    assert.match(missing.stderr, /--name needs a value/);
    assert.match(extra.stderr, /clients list: unexpected argument "extra"/);
    assertRefused(port, 2, /--port must be between 1 and 65535/);
    assertRefused(workers, 2, /--workers must be between 1 and 256/);
    assert.equal(invalidJson.code, 1);
    const invalid = JSON.parse(invalidJson.stderr.trim()) as { error: string; message: string };
    assert.equal(invalid.error, 'invalid_input');
    assert.match(invalid.message, /name/);
    assert.equal(usageJson.code, 2);
    assert.deepEqual(JSON.parse(usageJson.stderr.trim()), {
      error: 'usage',
      message: 'unknown command "frobnicate"',
    });
    assertRefused(
      badTtl,
      1,
      /GATEHOUSE_ACCESS_TOKEN_TTL must be a whole number of seconds between 1 and 86400, got "abc"/,
    );
    assertOk(typo);
    assert.match(
      typo.stderr,
      /unknown environment variable GATEHOUSE_ACESS_TOKEN_TTL is ignored \(did you mean GATEHOUSE_ACCESS_TOKEN_TTL\?\)/,
    );
    assert.doesNotMatch(typo.stderr, /GATEHOUSE_TRUST_PROXY/);
  });

  it('check reports each check on its line, exit 1 on any failure, with the certificate expiry', async (t) => {
    const store = await cliStore('sqlite');
    t.after(() => store.cleanup());
    const secret = newSecret();
    assertOk(await store.cli(['init'], { secret }));
    const pems = async (notBefore: Date, notAfter: Date, name: string) => {
      const pair = await generate([{ name: 'commonName', value: 'localhost' }], {
        keyType: 'ec',
        curve: 'P-256',
        algorithm: 'sha256',
        notBeforeDate: notBefore,
        notAfterDate: notAfter,
      });
      const cert = join(store.dataDir, `${name}-cert.pem`);
      const key = join(store.dataDir, `${name}-key.pem`);
      writeFileSync(cert, pair.cert);
      writeFileSync(key, pair.private);
      return { GATEHOUSE_TLS_CERT: cert, GATEHOUSE_TLS_KEY: key };
    };
    const day = 86_400_000;
    const expiry = new Date(Math.floor((Date.now() + 30 * day) / 1000) * 1000);
    const valid = await pems(new Date(Date.now() - day), expiry, 'valid');
    const expired = await pems(new Date(Date.now() - 30 * day), new Date(Date.now() - day), 'expired');
    const [good, bad, human] = await Promise.all([
      store.cli(['check', '--json'], { secret, env: { ...valid, GATEHOUSE_ISSUER: 'https://auth.example' } }),
      store.cli(['check', '--json'], {
        secret: newSecret(),
        env: { ...expired, GATEHOUSE_ISSUER: 'http://auth.example' },
      }),
      store.cli(['check'], { secret, env: { GATEHOUSE_ISSUER: 'http://auth.example' } }),
    ]);
    type Report = { ok: boolean; checks: { check: string; ok: boolean; detail: string }[] };
    const goodReport = json<Report>(good);
    assert.equal(goodReport.ok, true);
    assert.deepEqual(
      goodReport.checks.map((c) => c.check),
      [
        'configuration',
        'store reachable',
        'migrations current',
        'secret opens the keys',
        'TLS certificate',
        'issuer is https',
      ],
    );
    assert.ok(goodReport.checks.every((c) => c.ok));
    const tls = goodReport.checks.find((c) => c.check === 'TLS certificate');
    assert.match(tls?.detail ?? '', new RegExp(`valid until ${expiry.toISOString().slice(0, 10)}`));

    assert.equal(bad.code, 1);
    const badReport = JSON.parse(bad.stdout) as Report;
    const failed = badReport.checks.filter((c) => !c.ok).map((c) => c.check);
    assert.deepEqual(failed, ['secret opens the keys', 'TLS certificate', 'issuer is https']);
    assert.match(badReport.checks.find((c) => c.check === 'TLS certificate')?.detail ?? '', /expired/);

    assert.equal(human.code, 1);
    assert.match(human.stdout, /^ok {4}configuration: valid$/m);
    assert.match(human.stdout, /^FAIL {2}issuer is https: http:\/\/auth\.example/m);
  });

  it(
    'users create --password-stdin on a terminal prompts without echo and asks twice',
    { skip: !existsSync('/usr/bin/python3') },
    async (t) => {
      // A real process on a pseudo-terminal: raw mode and the prompts need a terminal on standard input.
      const store = await cliStore('sqlite');
      t.after(() => store.cleanup());
      assertOk(await store.cli(['init']));
      const password = 'typed on a terminal';
      const result = await inTerminal(
        [
          process.execPath,
          CLI,
          'users',
          'create',
          '--username',
          'tty-user',
          '--password-stdin',
          ...store.args,
        ],
        [password, password],
      );
      assert.equal(result.code, 0, result.transcript);
      assert.match(result.transcript, /Password: /);
      assert.match(result.transcript, /Repeat password: /);
      assert.ok(!result.transcript.includes(password), `the password was echoed: ${result.transcript}`);
      assert.match(result.transcript, /Created user tty-user/);
      const user = await store.open().users.getByUsername('tty-user');
      assert.equal(await verifyPassword(user?.passwordHash ?? '', password), true);

      const mismatch = await inTerminal(
        [process.execPath, CLI, 'users', 'create', '--username', 'other', '--password-stdin', ...store.args],
        [password, 'something else'],
      );
      assert.equal(mismatch.code, 2);
      assert.match(mismatch.transcript, /the two passwords differ/);
    },
  );
});

/** The version in the repository's package.json (the nearest one upward named gatehouse-oauth). */
function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      const parsed = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version?: string };
      if (parsed.name === 'gatehouse-oauth') return parsed.version ?? '';
    }
    const parent = dirname(dir);
    assert.notEqual(parent, dir, 'package.json not found');
    dir = parent;
  }
}

// Runs a command on a pseudo-terminal (python3's pty module), answering each prompt ending in ": "
// with the next line, and returns what the terminal showed.
const PTY_DRIVER = `
import json, os, pty, select, sys, time
answers = json.loads(os.environ['ANSWERS'])
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
out = b''
def read_until(marker):
    global out
    deadline = time.time() + 120
    while marker not in out:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.time()))
        if not ready:
            return False
        try:
            chunk = os.read(fd, 1024)
        except OSError:
            return False
        if not chunk:
            return False
        out += chunk
    return True
prompts = [b'Password: ', b'Repeat password: ']
for prompt, answer in zip(prompts, answers):
    if not read_until(prompt):
        break
    os.write(fd, answer.encode() + b'\\r')
# Everything up to the exit; a command still waiting after the bound is killed (a failure, not a hang).
deadline = time.time() + 120
while True:
    ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.time()))
    if not ready:
        os.kill(pid, 9)
        break
    try:
        chunk = os.read(fd, 1024)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
_, status = os.waitpid(pid, 0)
print(json.dumps({'code': os.waitstatus_to_exitcode(status), 'transcript': out.decode('utf8', 'replace')}))
`;

function inTerminal(command: string[], answers: string[]): Promise<{ code: number; transcript: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/python3', ['-c', PTY_DRIVER, ...command], {
      env: { ...cleanEnv(), ANSWERS: JSON.stringify(answers) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.on('error', reject);
    child.on('close', () => {
      try {
        resolve(JSON.parse(stdout) as { code: number; transcript: string });
      } catch (error) {
        reject(new Error(`pty driver: ${(error as Error).message}: ${stdout}`));
      }
    });
  });
}
