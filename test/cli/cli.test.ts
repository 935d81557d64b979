import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createLocalJWKSet, jwtVerify } from 'jose';
import pg from 'pg';
import { verifyPassword } from '../../src/core/users/passwords.js';
import { createSqlStorage } from '../../src/storage/sql/index.js';
import { dropTestSchema, TEST_DATABASE_URL, withSchemaLock } from '../helpers/backends.js';
import { basicAuth } from '../helpers/https-client.js';
import { CLI, assertOk, cleanEnv, freePort, runCli, spawnCli, type RunResult } from '../helpers/cli.js';

/** The repository root: the nearest folder upward holding gatehouse's package.json. */
function repoRoot(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      const { name } = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string };
      if (name === 'gatehouse-oauth') return dir;
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

function assertFails(result: RunResult, stderrPattern: RegExp): void {
  assert.notEqual(result.code, 0, `expected failure; stdout: ${result.stdout}`);
  assert.ok(result.code !== null, 'killed instead of exiting');
  assert.match(result.stderr, stderrPattern);
}

interface ClientJson {
  client_id: string;
  client_secret?: string;
  name: string;
  redirect_uris: string[];
  grant_types: string[];
  scopes: string[];
  token_type: string;
  public: boolean;
}

/**
 * Resolves with the first standard-error line matching `pattern` (serve's start line goes there;
 * standard output is the JSON log's); rejects if the process exits first.
 */
function waitForLine(child: ChildProcess, pattern: RegExp, timeoutMs = 60_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => reject(new Error(`no line ${pattern} within ${timeoutMs} ms`)), timeoutMs);
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      const line = buffered.split('\n').find((candidate) => pattern.test(candidate));
      if (line !== undefined) {
        clearTimeout(timer);
        resolve(line);
      }
    });
    child.stdout?.resume();
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before printing ${pattern}; stderr: ${buffered}`));
    });
  });
}

function httpsPost(
  url: string,
  ca: string,
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const agent = new Agent({ ca, keepAlive: false });
    const req = request(url, { method: 'POST', agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        agent.destroy();
        resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as unknown });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * A fresh data directory for one test, removed after it, and the CLI bound to it. Only serve, init
 * and migrate create a store, so with `init` (the default) the first command runs `gatehouse init`.
 */
function workspace(t: TestContext, options: { init?: boolean } = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-cli-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  let ready: Promise<void> | undefined = options.init === false ? Promise.resolve() : undefined;
  const initialised = () =>
    (ready ??= runCli(['init', '--data-dir', dataDir]).then((result) => assertOk(result)));
  return {
    dataDir,
    cli: async (...args: string[]) => {
      await initialised();
      return runCli([...args, '--data-dir', dataDir]);
    },
    cliWithStdin: async (stdin: string, ...args: string[]) => {
      await initialised();
      return runCli([...args, '--data-dir', dataDir], { stdin });
    },
  };
}

// Every test has its own data directory, so they run side by side. The commands run in this process
// (runCli); serve and bin/gatehouse.js are real processes, for what only a process shows.
function httpsGet(url: string, ca: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const agent = new Agent({ ca, keepAlive: false });
    request(url, { agent }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        agent.destroy();
        resolve(JSON.parse(text) as unknown);
      });
    })
      .on('error', reject)
      .end();
  });
}

describe('gatehouse command line (SQLite)', { concurrency: 4 }, () => {
  before(() => {
    assert.ok(existsSync(CLI), `compiled CLI not found at ${CLI}`);
  });

  it('migrate applies the migrations once, then reports the schema current', async (t) => {
    const { cli, dataDir } = workspace(t, { init: false });
    const first = await cli('migrate', '--json');
    assertOk(first);
    const { applied } = JSON.parse(first.stdout) as { applied: string[] };
    assert.ok(applied.includes('0001-initial'), first.stdout);
    const second = await cli('migrate', '--json');
    assertOk(second);
    assert.deepEqual(JSON.parse(second.stdout), { applied: [] });
    const human = await cli('migrate');
    assertOk(human);
    assert.match(human.stdout, /already current/);
    assert.ok(existsSync(join(dataDir, 'gatehouse.db')));
  });

  it('clients create, list, show and delete, with --json output', async (t) => {
    const { cli } = workspace(t);
    const created = await cli(
      'clients',
      'create',
      '--name',
      'Photo app',
      '--redirect-uri',
      'https://photos.example/cb',
      '--redirect-uri',
      'http://127.0.0.1:8080/cb',
      '--grant-types',
      'authorization_code,refresh_token',
      '--scopes',
      'photos:read photos:write',
      '--json',
    );
    assertOk(created);
    const client = JSON.parse(created.stdout) as ClientJson;
    assert.equal(client.name, 'Photo app');
    assert.deepEqual(client.redirect_uris, ['https://photos.example/cb', 'http://127.0.0.1:8080/cb']);
    assert.deepEqual(client.grant_types, ['authorization_code', 'refresh_token']);
    assert.deepEqual(client.scopes, ['photos:read', 'photos:write']);
    assert.equal(client.token_type, 'bearer');
    assert.equal(client.public, false);
    assert.match(client.client_secret ?? '', /^.{40,}$/, 'a high-entropy secret, shown once');

    const mac = await cli('clients', 'create', '--name', 'Mac service', '--token-type', 'mac', '--json');
    assertOk(mac);
    const macClient = JSON.parse(mac.stdout) as ClientJson;
    assert.equal(macClient.token_type, 'mac');
    assert.deepEqual(macClient.grant_types, ['client_credentials']);

    const pub = await cli(
      'clients',
      'create',
      '--name',
      'SPA',
      '--public',
      '--redirect-uri',
      'https://spa.example/cb',
      '--json',
    );
    assertOk(pub);
    const pubClient = JSON.parse(pub.stdout) as ClientJson;
    assert.equal(pubClient.public, true);
    assert.equal(pubClient.client_secret, undefined, 'a public client has no secret');

    const listed = await cli('clients', 'list', '--json');
    assertOk(listed);
    const ids = (JSON.parse(listed.stdout) as ClientJson[]).map((c) => c.client_id);
    assert.deepEqual(ids.sort(), [client.client_id, macClient.client_id, pubClient.client_id].sort());
    assert.ok(!listed.stdout.includes(client.client_secret ?? '-'), 'list never shows a secret');

    const human = await cli('clients', 'list');
    assertOk(human);
    assert.match(human.stdout, new RegExp(client.client_id));

    const shown = await cli('clients', 'show', client.client_id, '--json');
    assertOk(shown);
    const { client_secret: shownSecret, ...shownRest } = JSON.parse(shown.stdout) as ClientJson;
    assert.equal(shownSecret, undefined, 'the secret is shown only at creation');
    assert.deepEqual({ ...shownRest, client_secret: client.client_secret }, client);

    assertOk(await cli('clients', 'delete', client.client_id));
    assertFails(await cli('clients', 'show', client.client_id), /no client/);
    assertFails(await cli('clients', 'delete', client.client_id), /no client/);
    const after = JSON.parse((await cli('clients', 'list', '--json')).stdout) as ClientJson[];
    assert.deepEqual(after.map((c) => c.client_id).sort(), [macClient.client_id, pubClient.client_id].sort());
  });

  it('clients create takes the device grant by its RFC 8628 name or as device_code', async (t) => {
    const { cli } = workspace(t);
    const urn = 'urn:ietf:params:oauth:grant-type:device_code';
    for (const name of ['device_code', urn]) {
      const created = await cli(
        'clients',
        'create',
        '--name',
        'TV',
        '--public',
        '--grant-types',
        `${name},refresh_token`,
        '--json',
      );
      assertOk(created);
      const client = JSON.parse(created.stdout) as ClientJson;
      assert.deepEqual(client.grant_types, [urn, 'refresh_token']);
      assert.equal(client.client_secret, undefined);
    }
    assertFails(
      await cli('clients', 'create', '--name', 'x', '--grant-types', 'device'),
      /unknown grant type "device"/,
    );
  });

  it('refuses bad client input with a message on stderr and a non-zero exit, storing nothing', async (t) => {
    const { cli } = workspace(t);
    const unknownGrant = await cli(
      'clients',
      'create',
      '--name',
      'x',
      '--grant-types',
      'client_credentials,magic',
    );
    assertFails(unknownGrant, /unknown grant type "magic"/);
    assert.equal(unknownGrant.stdout, '');

    for (const uri of [
      'not a uri',
      'https://app.example/cb#frag',
      'http://app.example/cb',
      'javascript:alert(1)',
    ]) {
      const res = await cli('clients', 'create', '--name', 'x', '--redirect-uri', uri);
      assertFails(res, /redirect_uris/);
    }
    assertFails(await cli('clients', 'create', '--name', 'x', '--token-type', 'jwt'), /token_type/);
    assertFails(await cli('clients', 'create'), /--name/);
    assertFails(
      await cli('clients', 'create', '--name', 'x', '--no-such-option'),
      /no-such-option|Unknown option/i,
    );
    assertFails(await cli('clients', 'frobnicate'), /unknown clients action/);
    assertFails(await cli('clients', 'show'), /CLIENT_ID/);

    const listed = await cli('clients', 'list', '--json');
    assertOk(listed);
    assert.deepEqual(JSON.parse(listed.stdout), []);
  });

  it('users create reads the password from stdin, refuses a duplicate, lists and deletes', async (t) => {
    const { cli, cliWithStdin, dataDir } = workspace(t);
    const created = await cliWithStdin(
      's3cret passw0rd\n',
      'users',
      'create',
      '--username',
      'alice',
      '--password-stdin',
      '--json',
    );
    assertOk(created);
    const alice = JSON.parse(created.stdout) as { id: string; username: string };
    assert.equal(alice.username, 'alice');
    assert.ok(!created.stdout.includes('s3cret'), 'the password is never printed');

    // The stored hash verifies the password as typed, without the newline the pipe added.
    const storage = createSqlStorage({ dataDir });
    try {
      const user = await storage.users.getByUsername('alice');
      assert.ok(user);
      assert.match(user.passwordHash, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
      assert.equal(await verifyPassword(user.passwordHash, 's3cret passw0rd'), true);
      assert.equal(await verifyPassword(user.passwordHash, 's3cret passw0rd\n'), false);
    } finally {
      await storage.close();
    }

    const duplicate = await cliWithStdin(
      'another password',
      'users',
      'create',
      '--username',
      'alice',
      '--password-stdin',
    );
    assertFails(duplicate, /alice/);
    assertFails(
      await cliWithStdin('short', 'users', 'create', '--username', 'bob', '--password-stdin'),
      /password/,
    );
    assertFails(await cli('users', 'create', '--username', 'bob'), /--password-stdin/);

    const bob = await cliWithStdin(
      'bobs password',
      'users',
      'create',
      '--username',
      'bob',
      '--password-stdin',
      '--json',
    );
    assertOk(bob);
    const bobId = (JSON.parse(bob.stdout) as { id: string }).id;

    const listed = await cli('users', 'list', '--json');
    assertOk(listed);
    const users = JSON.parse(listed.stdout) as { id: string; username: string }[];
    assert.deepEqual(users.map((u) => u.username).sort(), ['alice', 'bob']);
    assert.ok(!listed.stdout.includes('argon2'), 'hashes are never listed');

    assertOk(await cli('users', 'delete', '--username', 'alice'));
    assertOk(await cli('users', 'delete', bobId));
    assertFails(await cli('users', 'delete', '--username', 'alice'), /no such user/);
    assertFails(await cli('users', 'delete'), /USER_ID/);
    assert.deepEqual(JSON.parse((await cli('users', 'list', '--json')).stdout), []);
  });

  it('keys rotate retires the active keys; keys list shows one active per algorithm and the retired ones', async (t) => {
    const { cli } = workspace(t);
    const first = await cli('keys', 'rotate', '--json');
    assertOk(first);
    const { kid: firstKid } = JSON.parse(first.stdout) as { kid: string };
    const second = await cli('keys', 'rotate', '--json');
    assertOk(second);
    const { kid: secondKid } = JSON.parse(second.stdout) as { kid: string };
    assert.notEqual(firstKid, secondKid);

    const listed = await cli('keys', 'list', '--json');
    assertOk(listed);
    const keys = JSON.parse(listed.stdout) as { kid: string; status: string; alg: string }[];
    // A key per algorithm each time: ES256 for access tokens, RS256 for ID tokens.
    assert.equal(keys.length, 6, "init's first keys, then two rotations");
    assert.equal(keys.find((k) => k.kid === secondKid)?.status, 'active');
    assert.equal(keys.find((k) => k.kid === firstKid)?.status, 'retired');
    assert.deepEqual(
      keys
        .filter((k) => k.status === 'active')
        .map((k) => k.alg)
        .sort(),
      ['ES256', 'RS256'],
    );
    assert.ok(!listed.stdout.includes('sealed') && !listed.stdout.includes('"d"'), 'no private key material');
  });

  it('prints help for every command, exit 0', async () => {
    const cases: [string[], RegExp][] = [
      [['--help'], /Commands:/],
      [['help'], /Commands:/],
      [['serve', '--help'], /gatehouse serve/],
      [['clients', '--help'], /gatehouse clients create/],
      [['clients', 'create', '--help'], /gatehouse clients create/],
      [['users', '--help'], /gatehouse users create/],
      [['users', 'create', '--help'], /gatehouse users create/],
      [['keys', '--help'], /gatehouse keys rotate/],
      [['scopes', '--help'], /gatehouse scopes/],
      [['resources', '--help'], /gatehouse resources create --uri URI/],
      [['migrate', '--help'], /gatehouse migrate/],
    ];
    const results = await Promise.all(cases.map(([args]) => runCli(args)));
    for (const [i, [args, pattern]] of cases.entries()) {
      const result = results[i] as RunResult;
      assert.equal(result.code, 0, `${args.join(' ')}: exit ${result.code}; stderr: ${result.stderr}`);
      assert.match(result.stdout, pattern, args.join(' '));
    }
    assertFails(await runCli(['frobnicate']), /unknown command/);
    const bare = await runCli([]);
    assert.notEqual(bare.code, 0, 'no command is a usage error');
    assert.match(bare.stdout, /Commands:/);
  });

  it('serve prints its URL and certificate, answers client_credentials over HTTPS, and exits 0 on SIGTERM', async (t) => {
    // A real process: serve owns the process it runs in (its signal handlers end it), and the exit
    // code on SIGTERM is the process's.
    const { cli, dataDir } = workspace(t);
    const port = await freePort();
    const server = spawn(process.execPath, [CLI, 'serve', '--port', String(port), '--data-dir', dataDir], {
      env: { ...cleanEnv(), GATEHOUSE_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    t.after(() => {
      if (server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
    });
    const line = await waitForLine(server, /listening on/);
    const url = `https://localhost:${port}`;
    const certPath = join(dataDir, 'tls', 'cert.pem');
    assert.ok(line.includes(url), line);
    assert.ok(line.includes(certPath), line);
    assert.ok(existsSync(certPath));

    // A client made by the CLI while the server runs: another process (this one) writing the same store.
    const created = await cli('clients', 'create', '--name', 'svc', '--scopes', 'read', '--json');
    assertOk(created);
    const client = JSON.parse(created.stdout) as ClientJson;
    const res = await httpsPost(
      `${url}/token`,
      readFileSync(certPath, 'utf8'),
      'grant_type=client_credentials',
      {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: basicAuth(client.client_id, client.client_secret ?? ''),
      },
    );
    assert.equal(res.status, 200, JSON.stringify(res.json));
    const body = res.json as { access_token: string; token_type: string; scope: string };
    assert.equal(body.token_type, 'bearer');
    assert.equal(body.scope, 'read');
    const claims = JSON.parse(Buffer.from(body.access_token.split('.')[1] ?? '', 'base64url').toString()) as {
      iss: string;
    };
    assert.equal(claims.iss, url, 'the issuer defaults to https://localhost:<port>');

    // `keys rotate` from another process (this one): the running server signs with the new key within its
    // refresh interval (10 s), and the token signed before still verifies against /jwks.
    const ca = readFileSync(certPath, 'utf8');
    const rotated = await cli('keys', 'rotate', '--json');
    assertOk(rotated);
    const { kid: newKid } = JSON.parse(rotated.stdout) as { kid: string };
    const tokenKid = (token: string) =>
      (JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString()) as { kid: string }).kid;
    assert.notEqual(tokenKid(body.access_token), newKid);
    let fresh = body.access_token;
    for (const started = Date.now(); tokenKid(fresh) !== newKid && Date.now() - started < 30_000;) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const again = await httpsPost(`${url}/token`, ca, 'grant_type=client_credentials', {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: basicAuth(client.client_id, client.client_secret ?? ''),
      });
      assert.equal(again.status, 200);
      fresh = (again.json as { access_token: string }).access_token;
    }
    assert.equal(tokenKid(fresh), newKid, 'the server never picked up the rotated key');
    const jwks = await httpsGet(`${url}/jwks`, ca);
    const keySet = createLocalJWKSet(jwks as Parameters<typeof createLocalJWKSet>[0]);
    await jwtVerify(body.access_token, keySet, { issuer: url, typ: 'at+jwt' });
    await jwtVerify(fresh, keySet, { issuer: url, typ: 'at+jwt' });

    const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
    server.kill('SIGTERM');
    assert.equal(await exited, 0);
  });

  it('bin/gatehouse.js runs the built CLI', async (t) => {
    // Real processes: what is tested is the program an installed package runs, its exit codes included.
    const { dataDir } = workspace(t);
    const root = repoRoot();
    const bin = root && join(root, 'bin', 'gatehouse.js');
    if (root === undefined || bin === undefined || !existsSync(join(root, 'dist', 'src', 'cli', 'main.js'))) {
      t.skip('dist/ is not built (npm run build); bin/gatehouse.js runs dist/src/cli/main.js');
      return;
    }
    const [help, refused] = await Promise.all([
      spawnCli(['--help'], {}, bin),
      spawnCli(['frobnicate'], {}, bin),
    ]);
    assertOk(help);
    assert.match(help.stdout, /Commands:/);
    // main.ts sets the process's exit code to the one the command line returns: 2, a usage error.
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /unknown command "frobnicate"/);
    assertOk(await spawnCli(['init', '--data-dir', dataDir], {}, bin));
    const created = await spawnCli(
      ['clients', 'create', '--name', 'via bin', '--json', '--data-dir', dataDir],
      {},
      bin,
    );
    assertOk(created);
    assert.equal((JSON.parse(created.stdout) as ClientJson).name, 'via bin');
  });
});

describe('gatehouse command line (PostgreSQL)', { skip: TEST_DATABASE_URL === undefined }, () => {
  // The CLI has no --schema option; libpq's `options` URL parameter (which pg passes through as a
  // startup parameter) sets search_path, so each run gets a fresh schema in the shared test database.
  const schema = `cli_${randomBytes(6).toString('hex')}`;
  // A PostgreSQL store needs its secret given: none is generated for it.
  const secret = randomBytes(32).toString('base64url');
  let databaseUrl: string;
  let dataDir: string;
  // Each command may migrate, scanning every schema's catalog: under the lock other suites' drops take.
  const cli = (...args: string[]) =>
    withSchemaLock('shared', () =>
      runCli([...args, '--data-dir', dataDir, '--database-url', databaseUrl], {
        env: { GATEHOUSE_SECRET: secret },
      }),
    );

  before(async () => {
    const base = TEST_DATABASE_URL ?? '';
    const separator = base.includes('?') ? '&' : '?';
    databaseUrl = `${base}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-cli-pg-'));
    const client = new pg.Client({ connectionString: base });
    await client.connect();
    await client.query(`CREATE SCHEMA ${schema}`);
    await client.end();
  });
  after(async () => {
    await dropTestSchema(schema);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('migrates and manages clients in the database the URL names, not in SQLite', async () => {
    const migrated = await cli('migrate', '--json');
    assertOk(migrated);
    assert.ok((JSON.parse(migrated.stdout) as { applied: string[] }).applied.includes('0001-initial'));

    const created = await cli('clients', 'create', '--name', 'pg client', '--json');
    assertOk(created);
    const client = JSON.parse(created.stdout) as ClientJson;
    const listed = await cli('clients', 'list', '--json');
    assertOk(listed);
    assert.deepEqual(
      (JSON.parse(listed.stdout) as ClientJson[]).map((c) => c.client_id),
      [client.client_id],
    );

    const db = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await db.connect();
    try {
      const { rows } = await db.query<{ id: string }>(`SELECT id FROM ${schema}.clients`);
      assert.deepEqual(
        rows.map((r) => r.id),
        [client.client_id],
      );
      const migrations = await db.query(`SELECT name FROM ${schema}.kysely_migration`);
      assert.ok(migrations.rows.length >= 1, 'the migration record lives in the same schema');
    } finally {
      await db.end();
    }
    assert.ok(!existsSync(join(dataDir, 'gatehouse.db')), 'no SQLite file was created');
  });
});
