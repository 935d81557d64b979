/**
 * Micro-benchmark: the cost of signing one access token on Gatehouse's lean path (KeyRing.signJwt,
 * synchronous node:crypto, header encoded once per key) against jose's SignJWT (async WebCrypto), for
 * ES256 and EdDSA. The design deviates from jose on the hot path; this is the measurement behind it.
 *
 *   node dist/bench/signing.js [--tokens N] [--rounds R] [--cpu C] [--no-write]
 *
 * Pinned to one core (taskset) so that WebCrypto's thread-pool work is charged to the same core.
 * Reports wall and CPU microseconds per token (median over rounds; CPU time resists a noisy machine).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { SignJWT, createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify, type JSONWebKeySet } from 'jose';
import { openStorage } from '../src/compose/gatehouse.js';
import { loadConfig } from '../src/config.js';
import { KeyRing, type SigningAlgorithm } from '../src/core/keys/key-ring.js';
import { systemClock } from '../src/shared/clock.js';
import { describeMachine, loadAverage } from './lib/machine.js';
import { repoRoot, writeBlock } from './lib/markdown-block.js';
import { pinSelf } from './lib/processes.js';

const { values: args } = parseArgs({
  options: {
    tokens: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '7' },
    cpu: { type: 'string', default: '0' },
    'no-write': { type: 'boolean', default: false },
  },
});
const TOKENS = Number(args.tokens);
const ROUNDS = Number(args.rounds);
const CONCURRENCY = 64;

/** The claims Gatehouse puts in a client_credentials token (RFC 9068), with a fresh jti each time. */
function claims(): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  return {
    iss: 'https://localhost:8443',
    sub: '6f1c2b9e-3d0a-4c55-9a77-0b1f2e3d4c5b',
    aud: 'https://localhost:8443',
    client_id: '6f1c2b9e-3d0a-4c55-9a77-0b1f2e3d4c5b',
    scope: 'profile',
    iat: now,
    exp: now + 3600,
    jti: randomUUID(),
  };
}

interface Sample {
  wallUs: number;
  cpuUs: number;
}

async function timed(run: () => Promise<void> | void): Promise<Sample> {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  await run();
  const wall = Number(process.hrtime.bigint() - start) / 1000;
  const used = process.cpuUsage(cpu);
  return { wallUs: wall / TOKENS, cpuUs: (used.user + used.system) / TOKENS };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
};

interface Variant {
  name: string;
  run(): Promise<void> | void;
  /** One token, verified against the variant's public key. */
  sample(): Promise<string> | string;
}

async function variants(alg: SigningAlgorithm, dataDir: string) {
  const storage = openStorage(loadConfig({ dataDir: join(dataDir, alg), secret: Buffer.alloc(32, 1) }, {}));
  await storage.migrate();
  const keyRing = new KeyRing({
    store: storage.signingKeys,
    keyEncryptionKey: Buffer.alloc(32, 2),
    clock: systemClock,
    algorithm: alg,
    retiredKeyRetentionSeconds: 86400,
    refreshIntervalSeconds: 86400, // no background re-read of the store during the measurement
  });
  await keyRing.init();
  const { privateKey, publicKey } = await generateKeyPair(alg, alg === 'EdDSA' ? { crv: 'Ed25519' } : {});
  const header = { alg, typ: 'at+jwt', kid: 'jose' };
  const joseSign = () => new SignJWT(claims()).setProtectedHeader(header).sign(privateKey);
  const list: Variant[] = [
    {
      name: 'Gatehouse KeyRing.signJwt (sync node:crypto)',
      run: () => {
        for (let i = 0; i < TOKENS; i++) keyRing.signJwt(claims());
      },
      sample: () => keyRing.signJwt(claims()),
    },
    {
      name: 'jose SignJWT, awaited one by one',
      run: async () => {
        for (let i = 0; i < TOKENS; i++) await joseSign();
      },
      sample: joseSign,
    },
    {
      name: `jose SignJWT, ${CONCURRENCY} in flight`,
      run: async () => {
        for (let i = 0; i < TOKENS; i += CONCURRENCY) {
          await Promise.all(Array.from({ length: Math.min(CONCURRENCY, TOKENS - i) }, joseSign));
        }
      },
      sample: joseSign,
    },
  ];
  const jwks: JSONWebKeySet = {
    keys: [...(await keyRing.publicJwks()).keys, { ...(await exportJWK(publicKey)), kid: 'jose', alg }],
  };
  return { list, jwks, close: () => storage.close() };
}

interface Line {
  alg: SigningAlgorithm;
  name: string;
  wallUs: number;
  cpuUs: number;
}

async function main(): Promise<void> {
  const pinned = pinSelf(args.cpu!);
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-signing-'));
  const lines: Line[] = [];
  const loadBefore = loadAverage();
  try {
    for (const alg of ['ES256', 'EdDSA'] as const) {
      const { list, jwks, close } = await variants(alg, dataDir);
      try {
        const keySet = createLocalJWKSet(jwks);
        for (const variant of list) {
          await jwtVerify(await variant.sample(), keySet, { typ: 'at+jwt' }); // correctness first
          await variant.run(); // warm-up
        }
        // Rounds interleave the variants, so a burst of load from a neighbour hits them alike.
        const samples = list.map(() => [] as Sample[]);
        for (let round = 0; round < ROUNDS; round++) {
          for (const [i, variant] of list.entries()) samples[i]!.push(await timed(() => variant.run()));
        }
        for (const [i, variant] of list.entries()) {
          lines.push({
            alg,
            name: variant.name,
            wallUs: median(samples[i]!.map((s) => s.wallUs)),
            cpuUs: median(samples[i]!.map((s) => s.cpuUs)),
          });
        }
      } finally {
        await close();
      }
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }

  const machine = describeMachine();
  const lean = (alg: SigningAlgorithm) => lines.find((l) => l.alg === alg && l.name.startsWith('Gatehouse'))!;
  const rows = lines.map((l) => [
    l.alg,
    l.name,
    l.wallUs.toFixed(1),
    l.cpuUs.toFixed(1),
    (l.wallUs / lean(l.alg).wallUs).toFixed(2),
    (l.cpuUs / lean(l.alg).cpuUs).toFixed(2),
  ]);
  const headers = ['alg', 'path', 'wall us/token', 'CPU us/token', 'x lean (wall)', 'x lean (CPU)'];
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  process.stdout.write(
    [headers, ...rows]
      .map((r) => r.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '))
      .join('\n') + '\n',
  );
  if (args['no-write']) return;
  const markdown = [
    `#### Latest signing run (${new Date().toISOString().replace(/\.\d+Z$/, 'Z')})`,
    '',
    `- Command: \`node dist/bench/signing.js${process.argv.length > 2 ? ' ' + process.argv.slice(2).join(' ') : ''}\``,
    `- Machine: ${machine.nproc} cores, ${machine.cpuModel}, Node ${machine.node}; ` +
      (pinned ? `pinned to core ${args.cpu} (thread pool included)` : 'not pinned') +
      `; load average before: ${loadBefore}`,
    `- ${TOKENS} tokens per round, median of ${ROUNDS} interleaved rounds; every path's token verified with jose first.`,
    '',
    `| ${headers.join(' | ')} |`,
    `|---|---|${headers
      .slice(2)
      .map(() => '---:')
      .join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
  const docs = join(repoRoot(), 'docs', 'benchmarks.md');
  await writeBlock(docs, 'signing', markdown);
  process.stderr.write(`[signing] results written to ${docs}\n`);
}

await main();
