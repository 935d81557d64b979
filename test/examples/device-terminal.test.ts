import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  browserSkip,
  clientContext,
  launchChromium,
  signIn,
  type TestBrowser,
} from '../helpers/browser-pages.js';
import { backends, TEST_DATABASE_URL } from '../helpers/backends.js';
import {
  CLI,
  createDatabase,
  freePort,
  runCli,
  serverEnv,
  spawnServer,
  type SpawnedServer,
  type SpawnOptions,
} from '../helpers/spawned-server.js';

// examples/device.ts as its README runs it: `gatehouse serve` in one process, the example in another
// (`node dist/examples/device.js ISSUER CLIENT_ID`, trusting the development certificate through
// NODE_EXTRA_CA_CERTS), a person in Chromium entering the code the terminal shows. Nothing here waits on
// the wall clock: the test waits for the example's output and its exit; the example itself waits the
// server's polling interval between polls, as a real device must (RFC 8628 §3.5).

const EXAMPLE = fileURLToPath(new URL('../../examples/device.js', import.meta.url));
const PASSWORD = 'a long device password';

/** A child's output as it arrives, with a wait for a pattern to appear in it. */
function watch(stream: NodeJS.ReadableStream) {
  let text = '';
  const waiters: Array<() => void> = [];
  stream.on('data', (chunk: Buffer) => {
    text += chunk.toString();
    for (const wake of waiters.splice(0)) wake();
  });
  return {
    text: () => text,
    async until(pattern: RegExp): Promise<RegExpMatchArray> {
      for (;;) {
        const match = text.match(pattern);
        if (match) return match;
        await new Promise<void>((wake) => waiters.push(wake));
      }
    },
  };
}

async function createUser(options: SpawnOptions): Promise<void> {
  const child = spawn(
    process.execPath,
    [CLI, 'users', 'create', '--username', 'dana', '--name', 'Dana Device', '--password-stdin'],
    {
      env: serverEnv(options),
    },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(`${PASSWORD}\n`);
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  assert.equal(code, 0, stderr);
}

describe('examples/device.js in a terminal, beside a gatehouse serve process', { skip: browserSkip }, () => {
  let browser: TestBrowser;
  before(async () => {
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });

  for (const backend of backends()) {
    describe(backend, () => {
      let dataDir: string;
      let database: { url: string; drop(): Promise<void> } | undefined;
      let server: SpawnedServer;
      let options: SpawnOptions;
      let issuer: string;
      before(async () => {
        dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-device-'));
        if (backend === 'postgres') database = await createDatabase(TEST_DATABASE_URL ?? '');
        const port = await freePort();
        issuer = `https://localhost:${port}`;
        options = {
          dataDir,
          port,
          ...(database ? { databaseUrl: database.url } : {}),
          env: { GATEHOUSE_ISSUER: issuer },
        };
        const migrated = await runCli(['migrate'], options);
        assert.equal(migrated.code, 0, migrated.stderr);
        server = await spawnServer(options);
      });
      after(async () => {
        await server?.stop();
        await database?.drop();
        rmSync(dataDir, { recursive: true, force: true });
      });

      it('prints a code, and once it is allowed in the browser, who signed in', async () => {
        await createUser(options);
        // As the README registers a device: a public client of the device grant.
        const created = await runCli(
          [
            'clients',
            'create',
            '--name',
            'Terminal device',
            '--public',
            '--grant-types',
            'device_code',
            '--scopes',
            'openid profile',
            '--json',
          ],
          options,
        );
        assert.equal(created.code, 0, created.stderr);
        const clientId = (JSON.parse(created.stdout) as { client_id: string }).client_id;

        const example = spawn(process.execPath, [EXAMPLE, issuer, clientId], {
          env: { PATH: process.env.PATH ?? '', NODE_EXTRA_CA_CERTS: join(dataDir, 'tls', 'cert.pem') },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        const exited = new Promise<number | null>((resolve) => example.on('exit', resolve));
        const stdout = watch(example.stdout);
        const stderr = watch(example.stderr);
        try {
          const [, shownUri, userCode] =
            (await stdout.until(
              /open (\S+) on your phone or computer and enter the code\s+([A-Z]{4}-[A-Z]{4})/,
            )) ?? [];
          assert.equal(shownUri, `${issuer}/device`);
          assert.ok(userCode);

          const { context, page } = await clientContext(browser);
          try {
            await page.goto(`${issuer}/device`);
            // Typed as a person would: lower case, without the dash.
            await page.getByLabel('Code').fill(userCode.replace('-', '').toLowerCase());
            await page.getByRole('button', { name: 'Continue' }).click();
            await signIn(page, 'dana', PASSWORD);
            assert.equal(await page.locator('#device-code').textContent(), userCode);
            await page.getByRole('button', { name: 'Allow' }).click();
            await page.getByRole('heading', { name: 'Device connected' }).waitFor();
          } finally {
            await context.close();
          }

          assert.equal(await exited, 0, stderr.text());
          assert.match(
            stdout.text(),
            /Signed in as Dana Device \(user name dana, id [0-9a-f-]{36}\); granted: openid profile\n/,
          );
        } finally {
          example.kill();
        }
      });
    });
  }
});
