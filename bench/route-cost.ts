/**
 * CPU per request of Gatehouse's own code on a route, next to a bare Fastify route, in one process
 * with Fastify's inject (no sockets, no TLS): the noise-resistant counterpart of the introspect and cc
 * scenarios for an A/B comparison on a busy machine. Each round runs every route back to back; the
 * least of the rounds (a neighbour can only slow a round down) and the median of each round's
 * difference to bare Fastify are printed. The bare route's cost here is mostly inject's own.
 *
 *   node dist/bench/route-cost.js [--root DIR] [--rounds 60] [--requests 300] [--routes introspect,cc]
 *
 * `--root` loads another build of Gatehouse (a checkout whose `npm run build` has run, e.g. a scratch
 * worktree of an older commit); by default, this one. SQLite in a temporary directory; rate limits on,
 * raised out of reach (as the bench's "counted"). Prints one line.
 */
import Fastify, { type LightMyRequestResponse } from 'fastify';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { registerPeerRoute } from './lib/peer-route.js';
import { RATE_LIMITS_COUNTED } from './lib/rate-limits.js';

type Compose = typeof import('../src/compose/gatehouse.js');
type Config = typeof import('../src/config.js');

const { values } = parseArgs({
  options: {
    root: { type: 'string' },
    rounds: { type: 'string', default: '60' },
    requests: { type: 'string', default: '300' },
    routes: { type: 'string', default: 'introspect,cc' },
  },
});
const rounds = Number(values.rounds);
const requests = Number(values.requests);
const routes = (values.routes ?? '').split(',').filter((name) => name !== '');
if (!(rounds >= 2) || !(requests >= 1) || routes.some((name) => name !== 'introspect' && name !== 'cc')) {
  process.stderr.write(
    'usage: route-cost [--root DIR] [--rounds N>=2] [--requests N] [--routes introspect,cc]\n',
  );
  process.exit(2);
}

// Another build's modules, or this one's (dist/bench/ -> dist/src/).
const root = values.root === undefined ? undefined : resolve(values.root, 'dist', 'src');
const load = async <T>(path: string): Promise<T> =>
  (await import(root === undefined ? `../src/${path}` : pathToFileURL(join(root, path)).href)) as T;
const { createGatehouse } = await load<Compose>('compose/gatehouse.js');
const { loadConfig } = await load<Config>('config.js');

const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-route-cost-'));
const config = loadConfig(
  {
    dataDir,
    port: 0,
    host: '127.0.0.1',
    issuer: 'https://gatehouse.bench.test',
    secret: Buffer.alloc(32, 7),
    logLevel: 'warn',
  },
  RATE_LIMITS_COUNTED,
);
const gatehouse = await createGatehouse(config, { logger: false, purgeProcess: false });
const { client, secret } = await gatehouse.engine.clients.create({
  name: 'route-cost',
  grant_types: ['client_credentials'],
  scopes: [],
});
const headers = {
  authorization: `Basic ${Buffer.from(`${client.id}:${secret ?? ''}`).toString('base64')}`,
  'content-type': 'application/x-www-form-urlencoded',
};
const app = gatehouse.app;
await app.ready();
const issued = await app.inject({
  method: 'POST',
  url: '/token',
  headers,
  payload: 'grant_type=client_credentials',
});
if (issued.statusCode !== 200) throw new Error(`POST /token answered ${issued.statusCode}`);
const token = (JSON.parse(issued.body) as { access_token: string }).access_token;

// The bench's peer (peer-server.ts) in process, answering with a real token of this run.
const bare = Fastify({ logger: false });
await registerPeerRoute(bare, issued.body);
await bare.ready();

const cases: Record<string, () => Promise<LightMyRequestResponse>> = {
  bare: () =>
    bare.inject({ method: 'POST', url: '/token', headers, payload: 'grant_type=client_credentials' }),
  introspect: () =>
    app.inject({
      method: 'POST',
      url: '/introspect',
      headers,
      payload: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
    }),
  cc: () => app.inject({ method: 'POST', url: '/token', headers, payload: 'grant_type=client_credentials' }),
};
const names = ['bare', ...routes];
const perRound: Record<string, number[]> = {};
const overBare: Record<string, number[]> = {};
for (let round = 0; round < rounds; round++) {
  const cost: Record<string, number> = {};
  for (const name of names) {
    const run = cases[name] as () => Promise<LightMyRequestResponse>;
    const before = process.cpuUsage();
    for (let i = 0; i < requests; i++) {
      const response = await run();
      if (response.statusCode !== 200) throw new Error(`${name} answered ${response.statusCode}`);
    }
    const used = process.cpuUsage(before);
    cost[name] = (used.user + used.system) / requests;
  }
  // The first round warms up.
  if (round === 0) continue;
  for (const name of names) {
    (perRound[name] ??= []).push(cost[name] as number);
    (overBare[name] ??= []).push((cost[name] as number) - (cost.bare as number));
  }
}
await gatehouse.close();
await bare.close();
rmSync(dataDir, { recursive: true, force: true });

const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)] as number;
const least = (list: number[]) => Math.min(...list);
process.stdout.write(
  `CPU us per request, ${rounds - 1} rounds of ${requests} (inject, in process): ` +
    names
      .map((name) => {
        const own = perRound[name] ?? [];
        const line = `${name} least ${least(own).toFixed(1)} median ${median(own).toFixed(1)}`;
        return name === 'bare'
          ? line
          : `${line} (over bare: median ${median(overBare[name] ?? []).toFixed(1)})`;
      })
      .join('; ') +
    '\n',
);
