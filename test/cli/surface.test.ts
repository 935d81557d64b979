import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { loadTls } from '../../src/compose/dev-certificate.js';
import { backends } from '../helpers/backends.js';
import {
  CLI,
  assertOk,
  assertRefused,
  cleanEnv,
  cliStore,
  newSecret,
  runCli,
  freePort,
} from '../helpers/cli.js';

function scratch(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-surface-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * A running `gatehouse serve`: its output so far, and a way to wait for a line on standard error. A
 * real process: serve owns the process it runs in (signals, exit code), and what is tested is what
 * a process writes to each of its streams (the start line, the JSON log).
 */
function startServe(t: TestContext, args: string[]) {
  const child = spawn(process.execPath, [CLI, 'serve', ...args], {
    env: { ...cleanEnv(), GATEHOUSE_LOG_LEVEL: 'info', GATEHOUSE_PURGE_INTERVAL_SECONDS: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output.stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output.stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return {
    child,
    output,
    exited,
    /** The first standard-error line matching `pattern` (a failure bound only: 60 s). */
    stderrLine(pattern: RegExp): Promise<string> {
      return new Promise((resolve, reject) => {
        const look = () => {
          const line = output.stderr.split('\n').find((candidate) => pattern.test(candidate));
          if (line === undefined) return false;
          clearTimeout(timer);
          child.stderr.off('data', look);
          resolve(line);
          return true;
        };
        const timer = setTimeout(() => reject(new Error(`no ${pattern}; stderr: ${output.stderr}`)), 60_000);
        if (look()) return;
        child.stderr.on('data', look);
        void exited.then((code) => {
          if (!look()) reject(new Error(`serve exited ${code}; stderr: ${output.stderr}`));
        });
      });
    },
  };
}

/** Stops a server with SIGTERM; resolves with its exit code once it (and its workers) are gone. */
async function stop(server: { child: ChildProcess; exited: Promise<number | null> }): Promise<number | null> {
  server.child.kill('SIGTERM');
  return server.exited;
}

describe('serve says where it listens and its issuer; one format per output stream', () => {
  it('one process on --host 127.0.0.1 with another issuer: the start line on stderr, JSON alone on stdout', async (t) => {
    const dataDir = scratch(t);
    const port = await freePort();
    const issuer = 'https://auth.example.test';
    const server = startServe(t, [
      ...['--host', '127.0.0.1', '--port', String(port), '--issuer', issuer, '--data-dir', dataDir],
    ]);
    const line = await server.stderrLine(/listening on/);
    assert.match(
      line,
      new RegExp(`^Gatehouse listening on https://127\\.0\\.0\\.1:${port} \\(issuer ${issuer}\\)`),
    );
    assert.ok(line.includes(join(dataDir, 'tls', 'cert.pem')), line);
    assert.equal(await stop(server), 0);
    const lines = server.output.stdout.split('\n').filter((l) => l !== '');
    assert.ok(lines.length > 0, 'the JSON log (info) says something on stdout');
    for (const l of lines) assert.doesNotThrow(() => JSON.parse(l), `not a JSON log line on stdout: ${l}`);
    assert.ok(
      !server.output.stdout.includes('listening on https'),
      'the human line is not in the log stream',
    );
  });

  it("--workers 2 --host 127.0.0.1: the workers' address and port and the issuer, once all listen", async (t) => {
    const dataDir = scratch(t);
    const port = await freePort();
    const issuer = 'https://auth.example.test/base';
    const server = startServe(t, [
      ...['--workers', '2', '--host', '127.0.0.1', '--port', String(port), '--issuer', issuer],
      ...['--data-dir', dataDir],
    ]);
    const line = await server.stderrLine(/workers\) listening on/);
    assert.match(
      line,
      new RegExp(
        `^Gatehouse \\(2 workers\\) listening on https://127\\.0\\.0\\.1:${port} \\(issuer ${issuer}\\)`,
      ),
    );
    assert.ok(!line.includes('localhost'), line);
    assert.equal(await stop(server), 0);
    for (const l of server.output.stdout.split('\n').filter((x) => x !== '')) {
      assert.doesNotThrow(() => JSON.parse(l), `not a JSON log line on stdout: ${l}`);
    }
  });
});

for (const backend of backends()) {
  describe(`gatehouse check and the development certificate (${backend})`, () => {
    it('warns when the development certificate would serve an issuer that is not localhost; not with --trust-proxy or --tls-cert', async (t) => {
      const store = await cliStore(backend);
      t.after(() => store.cleanup());
      const secret = newSecret();
      assertOk(await store.cli(['init'], { secret }));
      // The development certificate serve makes on its first start, made here the same way.
      await loadTls({ dataDir: store.dataDir });

      const issuer = 'https://auth.example.test';
      const warned = await store.cli(['check', '--issuer', issuer], { secret });
      assertOk(warned); // a warning, not a failure
      assert.match(warned.stdout, /^ok +TLS certificate: development certificate /m);
      const warning = warned.stdout.split('\n').find((line) => line.startsWith('warn'));
      assert.ok(warning !== undefined, warned.stdout);
      assert.match(
        warning,
        /development certificate .*localhost only.* issuer https:\/\/auth\.example\.test/,
      );
      assert.match(warning, /--tls-cert and --tls-key.*--trust-proxy/);
      if (backend === 'postgres') assert.match(warning, /PostgreSQL/);

      const asJson = await store.cli(['check', '--issuer', issuer, '--json'], { secret });
      assertOk(asJson);
      const report = JSON.parse(asJson.stdout) as {
        ok: boolean;
        checks: Array<{ check: string; warning?: boolean }>;
      };
      assert.equal(report.ok, true);
      assert.deepEqual(
        report.checks.filter((c) => c.warning === true).map((c) => c.check),
        ['certificate matches the issuer'],
      );

      for (const args of [
        ['check', '--issuer', issuer, '--trust-proxy'],
        ['check'], // the issuer is https://localhost:<port>, which the certificate names
      ]) {
        const quiet = await store.cli(args, { secret });
        assertOk(quiet);
        assert.ok(!/^warn/m.test(quiet.stdout), `${args.join(' ')}: ${quiet.stdout}`);
      }
    });
  });
}

describe('command-line mistakes: required flags, did you mean', () => {
  for (const backend of backends()) {
    it(`a flag the usage marks required is refused with exit 2, and nothing is made (${backend})`, async (t) => {
      const store = await cliStore(backend);
      t.after(() => store.cleanup());
      const secret = newSecret();
      assertOk(await store.cli(['init'], { secret }));
      assertRefused(
        await store.cli(['scopes', 'create', 'foo'], { secret }),
        2,
        /scopes create needs --description/,
      );
      assertRefused(await store.cli(['resources', 'create'], { secret }), 2, /resources create needs --uri/);
      assertRefused(await store.cli(['clients', 'create'], { secret }), 2, /clients create needs --name/);
      assertRefused(
        await store.cli(['users', 'create', '--username', 'ann'], { secret }),
        2,
        /users create needs --password-stdin/,
      );
      const scopes = await store.cli(['scopes', 'list', '--json'], { secret });
      assertOk(scopes);
      assert.ok(
        !(JSON.parse(scopes.stdout) as Array<{ name: string }>).some((scope) => scope.name === 'foo'),
        'the scope was not created',
      );
    });
  }

  it('a mistyped flag, command or action names the nearest one (exit 2)', async () => {
    const cases: Array<[string[], RegExp]> = [
      [
        ['scopes', 'create', 'foo', '--descripton', 'x'],
        /has no option --descripton \(did you mean --description\?\)/,
      ],
      [['clients', 'list', '--jsn'], /has no option --jsn \(did you mean --json\?\)/],
      [['serve', '--prot', '1'], /serve has no option --prot \(did you mean --port\?\)/],
      [['clints', 'list'], /unknown command "clints" \(did you mean clients\?\)/],
      [['clients', 'lst'], /unknown clients action "lst" \(did you mean list\?\)/],
      [['--data-dri', 'x', 'clients', 'list'], /unknown option --data-dri \(did you mean --data-dir\?\)/],
    ];
    const results = await Promise.all(cases.map(([args]) => runCli(args)));
    for (const [i, [args, pattern]] of cases.entries()) {
      assertRefused(results[i]!, 2, pattern);
      assert.ok(results[i]!.stderr.length > 0, args.join(' '));
    }
    // Nothing near: no guess.
    const far = await runCli(['frobnicate']);
    assertRefused(far, 2, /unknown command "frobnicate"/);
    assert.ok(!far.stderr.includes('did you mean'), far.stderr);
  });
});

describe('gatehouse completion bash', () => {
  it('is a script bash sources; it completes commands, actions and flags from the command table', async (t) => {
    // Real processes: bash runs `gatehouse` from PATH, as a shell with the package installed does.
    const dir = scratch(t);
    // `gatehouse` on PATH, as an installed package has it.
    const bin = join(dir, 'gatehouse');
    writeFileSync(bin, `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
    chmodSync(bin, 0o755);
    const script = `
      set -e
      source <(gatehouse completion bash)
      complete -p gatehouse
      show() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _gatehouse; echo "\${COMPREPLY[*]}"; }
      show gatehouse cli
      show gatehouse clients ''
      show gatehouse clients cr
      show gatehouse scopes create foo --d
      show gatehouse --data-dir /tmp/x keys ''
      show gatehouse serve --tls-cert ''
      show gatehouse serve --wo
    `;
    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
      (resolve, reject) => {
        const child = spawn('bash', ['-c', script], {
          env: { ...cleanEnv(), PATH: `${dir}:${process.env.PATH ?? ''}` },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      },
    );
    assert.equal(result.code, 0, result.stderr);
    const [registered, commands, actions, create, description, keys, file, workers] =
      result.stdout.split('\n');
    assert.match(registered ?? '', /^complete -o default -F _gatehouse gatehouse$/);
    assert.equal(commands, 'clients');
    assert.equal(actions, 'create list show update rotate-secret delete --help');
    assert.equal(create, 'create');
    assert.equal(description, '--description --data-dir --database-url');
    assert.equal(keys, 'rotate list revoke --help');
    assert.equal(file, '', 'after a flag that takes a value, bash completes file names');
    assert.equal(workers, '--workers');
  });

  it('the help names it', async () => {
    const main = await runCli(['--help']);
    assertOk(main);
    assert.match(main.stdout, /completion bash/);
    const own = await runCli(['completion', '--help']);
    assertOk(own);
    assert.match(own.stdout, /source <\(gatehouse completion bash\)/);
    assertRefused(await runCli(['completion', 'fish']), 2, /no script for "fish"/);
  });
});

describe('a command loads only what it needs', () => {
  /**
   * The modules a CLI run loads, recorded by a module hook (node:module register) into a file: a
   * fact, not a timing, so it holds on a busy machine. Fastify and the HTTP layer are for serve only.
   * A real process: what is measured is a cold start's, which a process that has loaded them already
   * cannot show.
   */
  async function loaded(t: TestContext, args: string[], env: NodeJS.ProcessEnv = {}): Promise<string[]> {
    const dir = scratch(t);
    const record = join(dir, 'loaded.txt');
    writeFileSync(
      join(dir, 'hooks.mjs'),
      `import { appendFileSync } from 'node:fs';\n` +
        `export async function load(url, context, next) { appendFileSync(${JSON.stringify(record)}, url + '\\n'); return next(url, context); }\n`,
    );
    writeFileSync(
      join(dir, 'register.mjs'),
      `import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n`,
    );
    writeFileSync(record, '');
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', join(dir, 'register.mjs'), CLI, ...args], {
        env: { ...cleanEnv(), ...env },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stderr }));
    });
    assert.equal(result.code, 0, result.stderr);
    return readFileSync(record, 'utf8')
      .split('\n')
      .filter((url) => url !== '');
  }

  it('--version loads no package and none of the store, the engine or the server', async (t) => {
    const urls = await loaded(t, ['--version']);
    assert.ok(
      urls.some((url) => url.endsWith('/src/cli/main.js')),
      'the hook saw the CLI load',
    );
    assert.deepEqual(
      urls.filter((url) => /node_modules|\/src\/(http|storage|core\/engine|compose\/gatehouse)/.test(url)),
      [],
    );
  });

  it('clients list opens the store and the engine, but neither Fastify nor the HTTP layer', async (t) => {
    const dataDir = scratch(t);
    assertOk(await runCli(['init', '--data-dir', dataDir]));
    const urls = await loaded(t, ['clients', 'list', '--data-dir', dataDir]);
    assert.ok(
      urls.some((url) => url.includes('/src/core/engine.js')),
      'the engine was loaded',
    );
    assert.deepEqual(
      urls.filter((url) =>
        /node_modules\/(fastify|@fastify|pino|selfsigned|prom-client)\/|\/src\/http\//.test(url),
      ),
      [],
    );
  });
});
