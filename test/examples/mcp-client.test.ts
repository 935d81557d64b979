import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { clientMetadataDocument, DOCUMENT_CLIENT_NAME } from '../../examples/mcp-client.js';
import {
  browserSkip,
  clientContext,
  launchChromium,
  signIn,
  type TestBrowser,
} from '../helpers/browser-pages.js';
import { backends, TEST_DATABASE_URL } from '../helpers/backends.js';
import { startKeyServer, type KeyServer } from '../helpers/key-server.js';
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

// examples/mcp-client.ts as examples/README.md runs it: `gatehouse serve` open to dynamic registration
// for mcp:tools, the MCP server registered as a resource, examples/mcp-server.js in a second process and
// examples/mcp-client.js in a third, given only the MCP server's URL. A person in Chromium opens the
// address the client prints, signs in and allows; the client calls whoami with its token. Nothing waits
// on the wall clock: the test waits for the processes' output and their exit.
//
// Gatehouse takes Client ID Metadata Documents too (decision 46), so the same client run twice shows
// both ways the SDK identifies it: without --client-metadata-url it registers (RFC 7591) although the
// server would take a document; with it, it registers nothing and its client_id is the URL of its
// document, which a small https host serves (the key server; `gatehouse serve` trusts its certificate
// through NODE_EXTRA_CA_CERTS, Node's https using it when no `ca` of its own is given).

const SERVER_EXAMPLE = fileURLToPath(new URL('../../examples/mcp-server.js', import.meta.url));
const CLIENT_EXAMPLE = fileURLToPath(new URL('../../examples/mcp-client.js', import.meta.url));
const PASSWORD = 'a long mcp password';

/** A child's output as it arrives, with a wait for a pattern to appear in it. */
function watch(stream: NodeJS.ReadableStream | null) {
  let text = '';
  const waiters: Array<() => void> = [];
  stream?.on('data', (chunk: Buffer) => {
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

/** A spawned example, its output watched; `exited` settles with its exit code. */
function run(args: string[], env: Record<string, string>) {
  const child: ChildProcess = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { child, exited, stdout: watch(child.stdout), stderr: watch(child.stderr) };
}

/** `gatehouse clients list --json`: who the store holds, and how each came to be there. */
async function listClients(
  options: SpawnOptions,
): Promise<Array<{ client_id: string; registration: string }>> {
  const listed = await runCli(['clients', 'list', '--json'], options);
  assert.equal(listed.code, 0, listed.stderr);
  return JSON.parse(listed.stdout) as Array<{ client_id: string; registration: string }>;
}

async function createUser(options: SpawnOptions): Promise<string> {
  const child = spawn(
    process.execPath,
    [CLI, 'users', 'create', '--username', 'mona', '--password-stdin', '--json'],
    { env: serverEnv(options) },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(`${PASSWORD}\n`);
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  assert.equal(code, 0, stderr);
  return (JSON.parse(stdout) as { id: string }).id;
}

describe(
  'examples/mcp-client.js signs in through Gatehouse and calls the example MCP server',
  { skip: browserSkip },
  () => {
    let browser: TestBrowser;
    let documents: KeyServer;
    let caDir: string;
    let caFile: string;
    before(async () => {
      browser = await launchChromium();
      documents = await startKeyServer();
      caDir = mkdtempSync(join(tmpdir(), 'gatehouse-mcp-documents-'));
      caFile = join(caDir, 'ca.pem');
      writeFileSync(caFile, documents.ca);
    });
    after(async () => {
      await browser?.close();
      await documents?.close();
      if (caDir) rmSync(caDir, { recursive: true, force: true });
    });

    /**
     * The person's part: opens the address the client printed, signs in, allows `appName`, and is
     * sent back to the client's loopback listener. The consent page's wording beyond the name (the
     * document's host beside it, for one) is the consent tests' business.
     */
    async function allowInBrowser(authorization: URL, appName: string): Promise<void> {
      const { context, page } = await clientContext(browser);
      try {
        await page.goto(authorization.href);
        await signIn(page, 'mona', PASSWORD);
        await page.getByRole('heading', { name: `Allow ${appName}` }).waitFor();
        await page.getByRole('button', { name: 'Allow' }).click();
        await page.getByRole('heading', { name: 'Signed in' }).waitFor();
        assert.equal(
          new URL(page.url()).origin,
          new URL(authorization.searchParams.get('redirect_uri') ?? '').origin,
        );
      } finally {
        await context.close();
      }
    }

    for (const backend of backends()) {
      describe(backend, () => {
        let dataDir: string;
        let database: { url: string; drop(): Promise<void> } | undefined;
        let gatehouse: SpawnedServer;
        let options: SpawnOptions;
        let issuer: string;
        let mcpServer: ReturnType<typeof run>;
        let resource: string;
        let userId: string;
        before(async () => {
          dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-mcp-client-'));
          if (backend === 'postgres') database = await createDatabase(TEST_DATABASE_URL ?? '');
          const port = await freePort();
          issuer = `https://localhost:${port}`;
          options = {
            dataDir,
            port,
            ...(database ? { databaseUrl: database.url } : {}),
            // As examples/README.md starts Gatehouse: MCP clients may register themselves for mcp:tools,
            // or name their Client ID Metadata Document (here on 127.0.0.1, hence the private switch).
            env: {
              GATEHOUSE_ISSUER: issuer,
              GATEHOUSE_DYNAMIC_REGISTRATION: 'open',
              GATEHOUSE_DYNAMIC_REGISTRATION_SCOPES: 'mcp:tools',
              GATEHOUSE_CLIENT_ID_METADATA_DOCUMENTS: 'on',
              GATEHOUSE_ALLOW_PRIVATE_CLIENT_METADATA: 'true',
              NODE_EXTRA_CA_CERTS: caFile,
            },
          };
          const migrated = await runCli(['migrate'], options);
          assert.equal(migrated.code, 0, migrated.stderr);
          gatehouse = await spawnServer(options);

          const mcpPort = await freePort();
          resource = `http://127.0.0.1:${mcpPort}/mcp`;
          const created = await runCli(
            [
              'resources',
              'create',
              '--uri',
              resource,
              '--name',
              'Example MCP server',
              '--scopes',
              'mcp:tools',
            ],
            options,
          );
          assert.equal(created.code, 0, created.stderr);
          userId = await createUser(options);

          mcpServer = run([SERVER_EXAMPLE, '--issuer', issuer, '--port', String(mcpPort)], {
            GATEHOUSE_CA_FILE: join(dataDir, 'tls', 'cert.pem'),
          });
          await mcpServer.stdout.until(/^MCP server at /m);
        });
        after(async () => {
          mcpServer?.child.kill();
          await mcpServer?.exited;
          await gatehouse?.stop();
          await database?.drop();
          rmSync(dataDir, { recursive: true, force: true });
        });

        it('prints the address to sign in at; once allowed in the browser, whoami answers for the user', async () => {
          const client = run([CLIENT_EXAMPLE, resource], {
            NODE_EXTRA_CA_CERTS: join(dataDir, 'tls', 'cert.pem'),
          });
          try {
            const [, shown] = (await client.stdout.until(/open this address in your browser:\s+(\S+)/)) ?? [];
            assert.ok(shown);
            const authorization = new URL(shown);
            assert.equal(authorization.origin + authorization.pathname, `${issuer}/authorize`);
            // The SDK found Gatehouse from the server's 401 and metadata, registered, and asks for the
            // server's scope and for a token addressed to it (RFC 8707), with PKCE.
            const params = authorization.searchParams;
            assert.equal(params.get('resource'), resource);
            assert.equal(params.get('scope'), 'mcp:tools');
            assert.equal(params.get('code_challenge_method'), 'S256');
            assert.match(params.get('redirect_uri') ?? '', /^http:\/\/127\.0\.0\.1:\d+\/callback$/);

            const { context, page } = await clientContext(browser);
            try {
              await page.goto(authorization.href);
              await signIn(page, 'mona', PASSWORD);
              await page
                .getByRole('heading', { name: 'Allow Gatehouse example MCP client to access your account?' })
                .waitFor();
              // The consent page names the MCP server the token is for, as the operator registered it.
              await page.getByText(`This access is for Example MCP server (${resource}).`).waitFor();
              await page.getByRole('button', { name: 'Allow' }).click();
              // Back at the client's loopback listener.
              await page.getByRole('heading', { name: 'Signed in' }).waitFor();
              assert.equal(new URL(page.url()).origin, new URL(params.get('redirect_uri') ?? '').origin);
            } finally {
              await context.close();
            }

            assert.equal(await client.exited, 0, client.stderr.text());
            const [, answer] = client.stdout.text().match(/^whoami answered: (.+)$/m) ?? [];
            const whoami = JSON.parse(answer ?? '{}') as Record<string, unknown>;
            assert.equal(whoami.subject, userId);
            assert.equal(whoami.client_id, params.get('client_id'));
            assert.deepEqual(whoami.scopes, ['mcp:tools']);
            assert.equal(whoami.audience, resource);
            // Registered (RFC 7591), although the server takes documents: the SDK uses one only when given
            // its URL.
            const registered = (await listClients(options)).find((c) => c.client_id === whoami.client_id);
            assert.equal(registered?.registration, 'open');
          } finally {
            client.child.kill();
          }
        });

        it('with --client-metadata-url, registers nothing: its client_id is its document, fetched by Gatehouse', async () => {
          const path = `/${backend}/mcp-client.json`;
          const documentUrl = documents.url(path);
          documents.answers.set(path, { json: clientMetadataDocument(documentUrl) });
          const metadata = await gatehouse.http.request('/.well-known/oauth-authorization-server');
          assert.equal(
            (metadata.json as Record<string, unknown>).client_id_metadata_document_supported,
            true,
          );
          const before = await listClients(options);
          const fetched = documents.requested(path);

          const client = run([CLIENT_EXAMPLE, resource, '--client-metadata-url', documentUrl], {
            NODE_EXTRA_CA_CERTS: join(dataDir, 'tls', 'cert.pem'),
          });
          try {
            const [, shown] = (await client.stdout.until(/open this address in your browser:\s+(\S+)/)) ?? [];
            assert.ok(shown);
            const authorization = new URL(shown);
            const params = authorization.searchParams;
            assert.equal(params.get('client_id'), documentUrl);
            assert.equal(params.get('resource'), resource);
            // The port the client chose; the document lists the loopback callback without one (RFC 8252 §7.3).
            assert.match(params.get('redirect_uri') ?? '', /^http:\/\/127\.0\.0\.1:\d+\/callback$/);

            await allowInBrowser(authorization, DOCUMENT_CLIENT_NAME);
            await fetched;

            assert.equal(await client.exited, 0, client.stderr.text());
            const [, answer] = client.stdout.text().match(/^whoami answered: (.+)$/m) ?? [];
            const whoami = JSON.parse(answer ?? '{}') as Record<string, unknown>;
            assert.equal(whoami.subject, userId);
            assert.equal(whoami.client_id, documentUrl);
            assert.deepEqual(whoami.scopes, ['mcp:tools']);
            assert.equal(whoami.audience, resource);
          } finally {
            client.child.kill();
          }
          // No registration: the one client more is the document's.
          const after = await listClients(options);
          const added = after.filter((c) => !before.some((b) => b.client_id === c.client_id));
          assert.deepEqual(
            added.map((c) => [c.client_id, c.registration]),
            [[documentUrl, 'document']],
          );
          assert.equal(
            after.filter((c) => c.registration === 'open').length,
            before.filter((c) => c.registration === 'open').length,
          );
        });
      });
    }
  },
);
