import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { FederatedLink } from '../../src/core/model.js';
import { backends, withSchemaLock } from '../helpers/backends.js';
import {
  assertOk,
  assertRefused,
  cliStore,
  newSecret,
  spawnCli,
  type CliStore,
  type RunResult,
} from '../helpers/cli.js';
import { freePort } from '../helpers/spawned-server.js';
import { startTestServer } from '../helpers/server.js';

/** Decision 39: `gatehouse idps`, `users links|unlink`, `clients --identity-providers`. */

const CLIENT_SECRET = 'upstream-secret-that-is-never-printed';
/** The CLI's issuer when none is configured: what its redirect URIs start with. */
const CLI_ISSUER = 'https://localhost:8443';

const json = <T>(result: RunResult): T => {
  assertOk(result);
  return JSON.parse(result.stdout) as T;
};

/** No output of the command line ever carries the client secret. */
function assertNoSecret(...results: RunResult[]): void {
  for (const result of results) {
    assert.ok(!result.stdout.includes(CLIENT_SECRET), `stdout: ${result.stdout}`);
    assert.ok(!result.stderr.includes(CLIENT_SECRET), `stderr: ${result.stderr}`);
  }
}

const GITHUB = [
  '--authorization-endpoint',
  'https://github.example/login/oauth/authorize',
  '--token-endpoint',
  'https://github.example/login/oauth/access_token',
  '--userinfo-endpoint',
  'https://api.github.example/user',
  '--client-id',
  'Iv1.abc',
  '--client-secret-stdin',
];

/** Runs the compiled CLI as a process of its own on `store` (PostgreSQL runs hold the schema lock). */
function spawnOn(store: CliStore, args: string[], env: NodeJS.ProcessEnv, stdin?: string) {
  const run = () => spawnCli([...args, ...store.args], { env, stdin });
  return store.backend === 'postgres' ? withSchemaLock('shared', run) : run();
}

for (const backend of backends()) {
  describe(`gatehouse idps (${backend})`, () => {
    it('create --issuer discovers a real OpenID Provider, trusted through NODE_EXTRA_CA_CERTS, and prints the redirect URI', async (t) => {
      // The upstream: a second Gatehouse over HTTPS, its issuer the address it listens on (Discovery §4.3).
      const port = await freePort();
      const issuer = `https://localhost:${port}`;
      const upstream = await startTestServer(backend, { port, issuer }, { transport: 'https' });
      t.after(() => upstream.close());
      const store = await cliStore(backend);
      t.after(() => store.cleanup());
      const secret = newSecret();
      assertOk(await store.cli(['init'], { secret }));

      // In this process Node trusts only its roots: the upstream's certificate fails discovery, and
      // the error says so; nothing is created.
      const untrusted = await store.cli(
        [
          'idps',
          'create',
          '--name',
          'Acme SSO',
          '--issuer',
          issuer,
          '--client-id',
          'gatehouse',
          '--client-secret-stdin',
        ],
        { secret, stdin: CLIENT_SECRET },
      );
      assertRefused(untrusted, 1, /issuer: discovery failed at https:\/\/localhost:\d+: .*certificate/);
      assertNoSecret(untrusted);

      // A process started with NODE_EXTRA_CA_CERTS trusts it, as an operator's would.
      const ca = join(store.dataDir, 'upstream-ca.pem');
      writeFileSync(ca, upstream.ca);
      const env = { GATEHOUSE_SECRET: secret, NODE_EXTRA_CA_CERTS: ca };
      const created = await spawnOn(
        store,
        [
          'idps',
          'create',
          '--name',
          'Acme SSO',
          '--issuer',
          issuer,
          '--client-id',
          'gatehouse',
          '--client-secret-stdin',
          '--link-by-verified-email',
        ],
        env,
        `${CLIENT_SECRET}\n`,
      );
      assertOk(created);
      assertNoSecret(created);
      assert.match(
        created.stdout,
        /^Created identity provider acme-sso \(Acme SSO\), an OpenID Provider at https:\/\/localhost:\d+\./,
      );
      assert.match(
        created.stdout,
        new RegExp(
          `Register this redirect URI at the provider:\\n  ${CLI_ISSUER}/sign-in/callback/acme-sso\\n`,
        ),
      );
      assert.match(created.stdout, new RegExp(`token_endpoint: +${issuer}/token`));
      assert.match(created.stdout, /client_auth: +client_secret_basic \(client secret set\)/);
      assert.match(created.stdout, /link_by_verified_email: +true/);

      const storage = store.open();
      const stored = await storage.identityProviders.get('acme-sso');
      assert.equal(stored?.authorizationEndpoint, `${issuer}/authorize`);
      assert.ok(stored?.clientSecretSealed && !stored.clientSecretSealed.includes(CLIENT_SECRET));

      // --json: the provider with its id and redirect URI.
      const again = await spawnOn(
        store,
        [
          'idps',
          'create',
          '--name',
          'Acme EU',
          '--id',
          'acme-eu',
          '--issuer',
          issuer,
          '--client-id',
          'eu',
          '--client-auth',
          'none',
          '--json',
        ],
        env,
      );
      const view = json<{ id: string; redirect_uri: string; kind: string; client_secret_set: boolean }>(
        again,
      );
      assert.equal(view.id, 'acme-eu');
      assert.equal(view.redirect_uri, `${CLI_ISSUER}/sign-in/callback/acme-eu`);
      assert.equal(view.kind, 'oidc');
      assert.equal(view.client_secret_set, false);
    });

    it('a plain OAuth 2.0 provider: create, show, list, update, private_key_jwt, refusals', async (t) => {
      const store = await cliStore(backend);
      t.after(() => store.cleanup());
      const secret = newSecret();
      const cli = (args: string[], stdin?: string) => store.cli(args, { secret, stdin });
      assertOk(await cli(['init']));

      const created = await cli(
        [
          'idps',
          'create',
          '--name',
          'GitHub',
          ...GITHUB,
          '--subject-claim',
          'id',
          '--username-claim',
          'login',
        ],
        CLIENT_SECRET,
      );
      assertOk(created);
      assert.match(created.stdout, /a plain OAuth 2\.0 provider\./);
      assert.match(created.stdout, new RegExp(`  ${CLI_ISSUER}/sign-in/callback/github\\n`));
      assert.match(
        created.stdout,
        /claims: +subject=id username=login email=email email_verified=email_verified name=name/,
      );

      const keyed = await cli([
        'idps',
        'create',
        '--name',
        'Corp',
        '--client-auth',
        'private_key_jwt',
        ...GITHUB.slice(0, -1),
        '--subject-claim',
        'sub',
      ]);
      assertOk(keyed);
      const jwks = /And this public key \(a JWK Set\).*:\n {2}(\{.*\})\n/.exec(keyed.stdout)?.[1];
      const set = JSON.parse(jwks ?? 'null') as { keys: Array<Record<string, string>> };
      assert.equal(set.keys[0]?.kty, 'EC');
      assert.equal(set.keys[0]?.alg, 'ES256');
      assert.equal(set.keys[0]?.d, undefined, 'never the private key');

      const [shown, listed, listedJson] = await Promise.all([
        cli(['idps', 'show', 'github']),
        cli(['idps', 'list']),
        cli(['idps', 'list', '--json']),
      ]);
      assertOk(shown);
      assert.match(shown.stdout, /client_auth: +client_secret_basic \(client secret set\)/);
      assert.match(shown.stdout, /kind: +oauth2/);
      assert.match(
        listed.stdout,
        /^corp {2}Corp {2}oauth2 {2}https:\/\/github\.example\/login\/oauth\/authorize\ngithub {2}GitHub/,
      );
      assert.deepEqual(
        json<Array<{ id: string }>>(listedJson).map((provider) => provider.id),
        ['corp', 'github'],
      );
      assertNoSecret(created, keyed, shown, listed, listedJson);

      const updated = json<{
        name: string;
        link_by_verified_email: boolean;
        required_acr: string | null;
        claim_mapping: Record<string, string>;
      }>(
        await cli([
          'idps',
          'update',
          'github',
          '--name',
          'GitHub.com',
          '--link-by-verified-email',
          '--required-acr',
          'urn:x:mfa',
          '--email-claim',
          'mail',
          '--json',
        ]),
      );
      assert.equal(updated.name, 'GitHub.com');
      assert.equal(updated.link_by_verified_email, true);
      assert.equal(updated.required_acr, 'urn:x:mfa');
      assert.equal(updated.claim_mapping.email, 'mail');
      assert.equal(updated.claim_mapping.username, 'login', 'kept');
      const lifted = json<{ link_by_verified_email: boolean; required_acr: string | null }>(
        await cli([
          'idps',
          'update',
          'github',
          '--no-link-by-verified-email',
          '--required-acr',
          '',
          '--json',
        ]),
      );
      assert.equal(lifted.link_by_verified_email, false);
      assert.equal(lifted.required_acr, null);
      const rotated = await cli(['idps', 'update', 'github', '--client-secret-stdin'], 'a-newer-secret');
      assertOk(rotated);
      assert.ok(!rotated.stdout.includes('a-newer-secret'));

      const [taken, noClientId, noSubject, nothing, both, noSuch, badIssuer] = await Promise.all([
        cli(['idps', 'create', '--name', 'GitHub', ...GITHUB, '--subject-claim', 'id'], CLIENT_SECRET),
        cli(['idps', 'create', '--name', 'X', '--issuer', 'https://idp.example']),
        cli(['idps', 'create', '--name', 'Y', ...GITHUB], CLIENT_SECRET),
        cli(['idps', 'update', 'github']),
        cli(['idps', 'update', 'github', '--link-by-verified-email', '--no-link-by-verified-email']),
        cli(['idps', 'show', 'nope']),
        cli([
          'idps',
          'create',
          '--name',
          'Z',
          '--issuer',
          'http://idp.example',
          '--client-id',
          'z',
          '--client-auth',
          'none',
        ]),
      ]);
      assertRefused(taken, 1, /identity provider with id "github" exists already: choose another id \(--id/);
      assertRefused(noClientId, 2, /idps create needs --client-id/);
      assertRefused(noSubject, 1, /claim_mapping\.subject: a plain OAuth 2\.0 provider needs/);
      assertRefused(nothing, 2, /idps update needs something to change/);
      assertRefused(both, 2, /--link-by-verified-email or --no-link-by-verified-email/);
      assertRefused(noSuch, 1, /no identity provider with id "nope"/);
      assertRefused(badIssuer, 1, /issuer: must be an https URL/);
      assertNoSecret(taken, noSubject);
      assert.equal((await store.open().identityProviders.list(100, 0)).total, 2, 'nothing more was made');
    });

    it('users links, unlink and show; clients --identity-providers; idps delete says what it removed', async (t) => {
      const store = await cliStore(backend);
      t.after(() => store.cleanup());
      const secret = newSecret();
      const cli = (args: string[], stdin?: string) => store.cli(args, { secret, stdin });
      assertOk(await cli(['init']));
      assertOk(
        await cli(['idps', 'create', '--name', 'GitHub', ...GITHUB, '--subject-claim', 'id'], CLIENT_SECRET),
      );
      const alice = json<{ id: string }>(
        await cli(
          ['users', 'create', '--username', 'alice', '--password-stdin', '--json'],
          'a long password',
        ),
      );
      const storage = store.open();
      const link: FederatedLink = {
        id: randomUUID(),
        userId: alice.id,
        providerId: 'github',
        issuer: 'urn:gatehouse:idp:github',
        subject: '583231',
        label: 'octocat',
        createdAt: 1_800_000_000,
        lastUsedAt: null,
      };
      assert.equal(await storage.federatedLinks.insert(link), true);

      const [links, linksJson, shown] = await Promise.all([
        cli(['users', 'links', '--username', 'alice']),
        cli(['users', 'links', alice.id, '--json']),
        cli(['users', 'show', '--username', 'alice']),
      ]);
      assertOk(links);
      assert.match(
        links.stdout,
        new RegExp(
          `  ${link.id} {2}GitHub \\(github\\) {2}subject 583231 {2}octocat {2}linked 2027-01-15T08:00:00.000Z, never used`,
        ),
      );
      assert.deepEqual(
        json<Array<{ id: string; provider_name: string }>>(linksJson).map((each) => [
          each.id,
          each.provider_name,
        ]),
        [[link.id, 'GitHub']],
      );
      assert.match(shown.stdout, /federated: 1 linked account \(GitHub: octocat\)/);

      const client = json<{ client_id: string; identity_providers: string[] | null }>(
        await cli([
          'clients',
          'create',
          '--name',
          'App',
          '--redirect-uri',
          'https://app.example/cb',
          '--identity-providers',
          'github',
          '--json',
        ]),
      );
      assert.deepEqual(client.identity_providers, ['github']);
      const [unknown, both] = await Promise.all([
        cli([
          'clients',
          'create',
          '--name',
          'X',
          '--redirect-uri',
          'https://x.example/cb',
          '--identity-providers',
          'github,nope',
        ]),
        cli([
          'clients',
          'update',
          client.client_id,
          '--identity-providers',
          'github',
          '--all-identity-providers',
        ]),
      ]);
      assertRefused(unknown, 1, /identity_providers: no identity provider with id "nope"/);
      assertRefused(both, 2, /--identity-providers or --all-identity-providers/);

      const [wrongLink, unlinked] = [
        await cli(['users', 'unlink', alice.id, 'no-such-link']),
        await cli(['users', 'unlink', '--username', 'alice', link.id]),
      ];
      assertRefused(wrongLink, 1, /no link no-such-link of user alice/);
      assertOk(unlinked);
      assert.match(unlinked.stdout, /Removed the link of alice to GitHub \(subject 583231\)/);
      assert.match((await cli(['users', 'links', alice.id])).stdout, /alice has no linked accounts/);

      // Deleting the provider: its links go, and the clients that named it name it no more.
      assert.equal(await storage.federatedLinks.insert({ ...link, id: randomUUID() }), true);
      const deleted = await cli(['idps', 'delete', 'github']);
      assertOk(deleted);
      assert.match(
        deleted.stdout,
        /Deleted identity provider github \(GitHub\) and 1 link\(s\) of users to it/,
      );
      assert.match(deleted.stdout, /1 client\(s\) that offered it no longer do/);
      assert.match((await cli(['clients', 'show', client.client_id])).stdout, /identity_providers: \(none\)/);
      const every = await cli(['clients', 'update', client.client_id, '--all-identity-providers']);
      assert.match(every.stdout, /identity_providers: \(every one\)/);
      assertRefused(await cli(['idps', 'delete', 'github']), 1, /no identity provider with id "github"/);
    });
  });
}
