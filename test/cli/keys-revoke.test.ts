import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeProtectedHeader, type JSONWebKeySet } from 'jose';
import {
  clientCredentialsToken,
  introspection,
  tokenFor,
  type Credentials,
} from '../helpers/api-requests.js';
import { backends, TEST_DATABASE_URL, withSchemaLock } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';
import { assertOk, runCli as runCommandLine, type RunResult } from '../helpers/cli.js';

/** The running server re-reads its keys every 5 s (keyRefreshIntervalSeconds); this is the failure bound. */
const BOUND_MS = 15_000;

/**
 * Runs the CLI against the test server's store, with the server's secret: an engine and a store
 * connection of its own, which the server learns of only through the store, as it would of an
 * operator's command in another process.
 */
function runCli(server: TestServer, args: string[]): Promise<RunResult> {
  const env = { GATEHOUSE_SECRET: server.gatehouse.config.secret.toString('base64url') };
  const { store } = server;
  const location = ['--data-dir', store.dataDir];
  if (store.databaseUrl !== undefined && store.schema !== undefined) {
    const separator = store.databaseUrl.includes('?') ? '&' : '?';
    const options = encodeURIComponent(`-c search_path=${store.schema}`);
    location.push('--database-url', `${store.databaseUrl}${separator}options=${options}`);
  }
  const run = () => runCommandLine([...args, ...location], { env });
  // A command may scan the catalog for migrations: under the lock other suites' schema drops take.
  return store.backend === 'postgres' && TEST_DATABASE_URL ? withSchemaLock('shared', run) : run();
}

const kidOf = (token: string) => decodeProtectedHeader(token).kid as string;

for (const backend of backends()) {
  describe(`gatehouse keys revoke (${backend})`, () => {
    let server: TestServer;
    let reader: Credentials;
    before(async () => {
      // Listening starts the key ring's refresh, which brings the server what the command did.
      server = await startTestServer(backend, {}, { transport: 'https' });
      reader = (await clientCredentialsToken(server, ['read'])).credentials;
    });
    after(async () => {
      await server.close();
    });

    const token = async () =>
      (await tokenFor(server, { grant_type: 'client_credentials' }, reader)).access_token;
    const jwksKids = async () =>
      ((await server.http.request('/jwks')).json as JSONWebKeySet).keys.map((key) => key.kid);

    it('revokes the active key of a running server: replaced, gone from /jwks, its tokens inactive', async () => {
      const before = await token();
      const compromised = kidOf(before);

      const result = await runCli(server, ['keys', 'revoke', compromised, '--json']);
      assertOk(result);
      const { revoked, replacement } = JSON.parse(result.stdout) as { revoked: string; replacement: string };
      assert.equal(revoked, compromised);
      assert.equal(typeof replacement, 'string');
      assert.notEqual(replacement, compromised);

      assert.ok(!(await jwksKids()).includes(compromised), 'still in /jwks');
      assert.ok((await jwksKids()).includes(replacement));
      // The server, which holds the keys it read, stops trusting and using it within its refresh interval.
      await waitFor(
        async () => (await introspection(server, reader, before)).active === false,
        BOUND_MS,
        'a token of the revoked key stayed active',
      );
      assert.equal(kidOf(await token()), replacement);

      const listed = await runCli(server, ['keys', 'list', '--json']);
      assertOk(listed);
      const keys = JSON.parse(listed.stdout) as Array<{ kid: string; status: string }>;
      assert.equal(keys.find((key) => key.kid === compromised)?.status, 'revoked');
      assert.equal(keys.find((key) => key.kid === replacement)?.status, 'active');
    });

    it('revokes a retired key without rotating, in plain words; again, says it already was', async () => {
      const retired = kidOf(await token());
      const rotated = await runCli(server, ['keys', 'rotate', '--json']);
      assertOk(rotated);
      // Rotation makes one key per algorithm: the access tokens' and the ID tokens' (RS256).
      const { kid: active, keys: rotatedKeys } = JSON.parse(rotated.stdout) as {
        kid: string;
        keys: Array<{ kid: string; alg: string }>;
      };
      assert.ok(rotatedKeys.some((key) => key.kid === active));

      const result = await runCli(server, ['keys', 'revoke', retired]);
      assertOk(result);
      assert.match(result.stdout, new RegExp(`Revoked signing key ${retired}`));
      assert.doesNotMatch(result.stdout, /New signing key/);
      const again = await runCli(server, ['keys', 'revoke', retired]);
      assertOk(again);
      assert.match(again.stdout, /already revoked/);

      const listed = JSON.parse((await runCli(server, ['keys', 'list', '--json'])).stdout) as Array<{
        kid: string;
        status: string;
      }>;
      assert.deepEqual(
        listed
          .filter((key) => key.status === 'active')
          .map((key) => key.kid)
          .sort(),
        rotatedKeys.map((key) => key.kid).sort(),
      );
    });

    it('refuses a missing or unknown KID and changes nothing', async () => {
      const before = await jwksKids();
      const missing = await runCli(server, ['keys', 'revoke']);
      assert.equal(missing.code, 2, missing.stderr);
      assert.match(missing.stderr, /keys revoke needs a KID/);
      const unknown = await runCli(server, ['keys', 'revoke', 'no-such-kid']);
      assert.equal(unknown.code, 1, unknown.stderr);
      assert.match(unknown.stderr, /no signing key with kid no-such-kid/);
      assert.deepEqual(await jwksKids(), before);
    });

    it('documents revoke in keys --help', async () => {
      const help = await runCli(server, ['keys', '--help']);
      assertOk(help);
      assert.match(help.stdout, /gatehouse keys revoke KID/);
    });
  });
}
