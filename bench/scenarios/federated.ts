import { join } from 'node:path';
import { FlowClient, runFlowLoad, type FlowOutcome } from '../lib/flow-load.js';
import { cookieHeader, withCookies } from '../lib/sign-in-pages.js';
import { freePort, OIDC_UPSTREAM_PEER, runCli, ServerProcess } from '../lib/processes.js';
import { RATE_LIMITS_COUNTED } from '../lib/rate-limits.js';
import type { Check, Scenario } from '../lib/types.js';

const PROVIDER_ID = 'bench-upstream';
const CLIENT_ID = 'gatehouse-bench';
const CLIENT_SECRET = 'bench-upstream-client-secret-0123456789';
const NEXT = '/account/apps';

/**
 * Registers the upstream as an operator does (decision 39): `gatehouse idps create --issuer`, which
 * discovers it, trusting the bench's certificate through NODE_EXTRA_CA_CERTS as the server does.
 */
function registerProvider(dataDir: string, issuer: string, certFile: string): void {
  const env = { NODE_EXTRA_CA_CERTS: certFile };
  const args = [
    '--id',
    PROVIDER_ID,
    '--name',
    'Bench upstream',
    '--issuer',
    issuer,
    '--client-id',
    CLIENT_ID,
  ];
  runCli({ dataDir }, ['idps', 'create', ...args, '--client-secret-stdin'], `${CLIENT_SECRET}\n`, env);
}

/**
 * One federated sign-in, as a fresh browser does it (decision 40): GET /sign-in/upstream/:id (a
 * sealed state cookie, 303 to the upstream), the upstream's redirects (in the upstream's process; the
 * browser keeps its session there, so it is signed in at once as a person already signed in at their
 * provider is), then the callback: the state spent, the code redeemed at the upstream, the ID token
 * verified, userinfo read, the link used, a session started, 303 to `next`.
 */
async function signIn(
  gatehouse: FlowClient,
  gatehouseOrigin: string,
  upstream: FlowClient,
  upstreamOrigin: string,
  upstreamJar: Map<string, string>,
): Promise<FlowOutcome> {
  const start = await gatehouse.send('GET', `/sign-in/upstream/${PROVIDER_ID}?next=${NEXT}`, {});
  if (start.status !== 303 || start.location === undefined) {
    return { ok: false, failure: `the start answered ${start.status}` };
  }
  const jar = withCookies(new Map(), start);
  let location = new URL(start.location);
  for (let hop = 0; location.origin === upstreamOrigin; hop++) {
    if (hop === 6) return { ok: false, failure: 'too many redirects at the upstream' };
    const answer = await upstream.send('GET', `${location.pathname}${location.search}`, {
      cookie: cookieHeader(upstreamJar),
    });
    withCookies(upstreamJar, answer);
    if (answer.location === undefined)
      return { ok: false, failure: `the upstream answered ${answer.status}` };
    location = new URL(answer.location, location);
  }
  if (location.origin !== gatehouseOrigin) return { ok: false, failure: `sent to ${location.origin}` };
  const callback = await gatehouse.send('GET', `${location.pathname}${location.search}`, {
    cookie: cookieHeader(jar),
  });
  if (callback.status !== 303 || callback.location !== NEXT) {
    return { ok: false, failure: `the callback answered ${callback.status} (${callback.location ?? ''})` };
  }
  return { ok: true, sample: callback.location };
}

/**
 * Issue 29 point 6: Gatehouse's own CPU per federated sign-in. Gatehouse on SQLite, pinned, rate limits
 * counted, trusting the bench's certificate for its outbound calls (NODE_EXTRA_CA_CERTS); the upstream
 * (oidc-provider 9, bench/peers/oidc-upstream.ts) runs in a process of its own on the driver's core, so
 * only Gatehouse's process is measured: the start, the callback, and the calls it makes to the upstream
 * (the token request, userinfo; discovery and the JWK Set cached).
 */
export const federatedScenario: Scenario = {
  id: 'federated',
  title: 'federated sign-in through an upstream OpenID Provider (upstream excluded)',
  async run(context) {
    const workers = context.options.connections;
    const certFile = join(context.dataDir, 'tls', 'cert.pem');
    const server = await context.startGatehouse({
      label: 'gatehouse-federated',
      cpus: context.serverCpus,
      env: { ...RATE_LIMITS_COUNTED, NODE_EXTRA_CA_CERTS: certFile },
    });
    const gatehouseOrigin = server.url.replace('127.0.0.1', 'localhost');
    const upstreamPort = await freePort();
    const upstreamServer = await ServerProcess.start({
      label: 'oidc-upstream',
      port: upstreamPort,
      // The driver's core: the upstream's work never takes Gatehouse's core.
      cpus: context.serverCpus === undefined ? undefined : '1',
      ca: () => context.ca,
      args: [
        OIDC_UPSTREAM_PEER,
        '--port',
        String(upstreamPort),
        '--cert',
        certFile,
        '--key',
        join(context.dataDir, 'tls', 'key.pem'),
        '--client-id',
        CLIENT_ID,
        '--client-secret',
        CLIENT_SECRET,
        '--redirect-uri',
        `${gatehouseOrigin}/sign-in/callback/${PROVIDER_ID}`,
      ],
    });
    const upstreamOrigin = upstreamServer.url;
    const gatehouse = new FlowClient(server.url, context.ca, workers);
    const upstream = new FlowClient(upstreamServer.url, context.ca, workers);
    try {
      registerProvider(context.dataDir, upstreamOrigin, certFile);
      // One browser per connection, each keeping its session at the upstream across its sign-ins.
      const jars = Array.from({ length: workers }, () => new Map<string, string>());
      const measured = await context.measureCustom(server, (seconds) =>
        runFlowLoad({
          workers,
          duration: seconds,
          flow: (worker) => signIn(gatehouse, gatehouseOrigin, upstream, upstreamOrigin, jars[worker]!),
        }),
      );
      const failed = measured.statusCodes.failed ?? 0;
      const perCore = measured.rps / measured.serverCpu;
      const cpuMs = (measured.serverCpu * 1000) / Math.max(measured.rps, 1e-9);
      const checks: Check[] = [
        {
          name: 'federated sign-in: every sign-in ends in a 303 to the account',
          pass: failed === 0 && measured.warmupNon2xx === 0 && measured.requests > 0,
          detail:
            `${measured.requests} sign-ins, ${failed} failed, ${measured.warmupNon2xx} failed in warm-up` +
            (measured.failures.length > 0 ? `; first failures: ${measured.failures.join('; ')}` : ''),
        },
      ];
      return {
        rows: [
          {
            scenario: 'federated',
            label: `federated sign-ins/s (start 303 + callback 303; the upstream's work excluded), SQLite, 1 core, ${workers} browsers`,
            result: measured,
            compare: `${perCore.toFixed(0)}/s per core, ${cpuMs.toFixed(2)} ms Gatehouse CPU per sign-in`,
          },
        ],
        checks,
        targets: [
          {
            name: 'federated sign-in, Gatehouse CPU per sign-in (the upstream in its own process)',
            target: 'reported (no threshold)',
            judge: () => ({
              measured: `${perCore.toFixed(0)}/s per core, ${cpuMs.toFixed(2)} ms Gatehouse CPU per sign-in (2 requests, 2 outbound)`,
              pass: true,
              reported: true,
            }),
          },
        ],
        notes: [
          'federated: each sign-in is a fresh browser at Gatehouse (GET /sign-in/upstream/:id, 303, a sealed ' +
            'state cookie) that keeps its session at the upstream (oidc-provider 9 in its own process on the ' +
            "driver's core), then GET /sign-in/callback/:id: the state spent in the store, the code redeemed " +
            'at the upstream, the ES256 ID token verified, userinfo read, the link used, a session started. ' +
            "Only Gatehouse's process CPU is counted; latency columns include the upstream's redirects.",
        ],
      };
    } finally {
      gatehouse.close();
      upstream.close();
      await upstreamServer.stop();
      await server.stop();
    }
  },
};
