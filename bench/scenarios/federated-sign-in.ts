import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startOidcProvider, type OidcProvider } from '../../test/helpers/upstream-providers.js';
import { FlowClient, runFlowLoad, type FlowOutcome } from '../lib/flow-load.js';
import { runCli } from '../lib/processes.js';
import { RATE_LIMITS_COUNTED } from '../lib/rate-limits.js';
import { cookieOf } from '../lib/sign-in-pages.js';
import type { Check, Scenario } from '../lib/types.js';

const NEXT = '/account/apps';
const PROVIDER_ID = 'bench-upstream';
const CLIENT_SECRET = 'bench-upstream-client-secret';

/** The cookies a response sets (name=value), merged over what the browser had. */
function mergeCookies(jar: Map<string, string>, setCookie: string[]): string {
  for (const line of setCookie) {
    const pair = line.split(';', 1)[0]!;
    const eq = pair.indexOf('=');
    jar.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
  return [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
}

/**
 * One federated sign-in, as a fresh browser does it (decision 40): GET /sign-in/upstream/:id (the
 * state, nonce and PKCE verifier sealed into a cookie, 303 upstream); the person signs in at the
 * upstream (node-oidc-provider, in the driver's process: its CPU is not Gatehouse's); GET
 * /sign-in/callback/:id (the state spent in the store, the code redeemed upstream, the ID token's
 * ES256 signature checked, userinfo read, the link found, a session started) -> 303 to `next`.
 */
async function federatedSignIn(
  http: FlowClient,
  upstream: OidcProvider,
  account: { username: string; password: string },
): Promise<FlowOutcome> {
  const jar = new Map<string, string>();
  const start = await http.send(
    'GET',
    `/sign-in/upstream/${PROVIDER_ID}?next=${encodeURIComponent(NEXT)}`,
    {},
  );
  if (start.status !== 303 || start.location === undefined) {
    return { ok: false, failure: `GET /sign-in/upstream answered ${start.status}` };
  }
  const cookie = mergeCookies(jar, start.setCookie);
  const callback = await upstream.signIn(start.location, account);
  const back = await http.send('GET', `${callback.pathname}${callback.search}`, { cookie });
  if (back.status !== 303 || back.location !== NEXT || cookieOf(back, undefined) === undefined) {
    return { ok: false, failure: `GET /sign-in/callback answered ${back.status} to ${back.location ?? '-'}` };
  }
  return { ok: true, sample: back.location };
}

/**
 * Issue 29 point 6: Gatehouse's own CPU per federated sign-in, beside the password sign-in through the
 * pages (the totp-sign-in scenario's password row) and the passkey row. A Gatehouse of its own on the
 * bench's SQLite store, pinned like the shared one, trusting the upstream's certificate; the upstream
 * (a real node-oidc-provider) runs in the driver, so only Gatehouse's process CPU is counted. Each
 * connection is one upstream person, linked at its first sign-in (in the warm-up).
 */
export const federatedSignInScenario: Scenario = {
  id: 'federated',
  title: 'federated sign-in (upstream OpenID Provider, code flow with PKCE, ES256 ID token)',
  async run(context) {
    const workers = context.options.connections;
    const accounts = Array.from({ length: workers }, (_, i) => ({
      subject: `bench-person-${i}`,
      username: `bench-person-${i}`,
      password: `bench-upstream-password-${i}`,
      email: `bench-person-${i}@upstream.test`,
      emailVerified: true,
      name: `Bench Person ${i}`,
    }));
    const upstream = await startOidcProvider({ accounts });
    const caFile = join(context.dataDir, 'bench-upstream-ca.pem');
    writeFileSync(caFile, upstream.ca);
    // The command line discovers the upstream (decision 39): it trusts the upstream's certificate as
    // the server does, through NODE_EXTRA_CA_CERTS, read by Node at start-up.
    const previousCa = process.env.NODE_EXTRA_CA_CERTS;
    process.env.NODE_EXTRA_CA_CERTS = caFile;
    let created: { redirect_uri: string };
    try {
      created = runCli<{ redirect_uri: string }>(
        { dataDir: context.dataDir },
        [
          'idps',
          'create',
          '--id',
          PROVIDER_ID,
          '--name',
          'Bench upstream',
          '--issuer',
          upstream.issuer,
          '--client-id',
          'gatehouse-bench',
          '--client-secret-stdin',
        ],
        `${CLIENT_SECRET}\n`,
      );
    } finally {
      if (previousCa === undefined) delete process.env.NODE_EXTRA_CA_CERTS;
      else process.env.NODE_EXTRA_CA_CERTS = previousCa;
    }
    const server = await context.startGatehouse({
      label: 'Gatehouse (SQLite) signing people in through an upstream',
      cpus: context.serverCpus,
      env: { ...RATE_LIMITS_COUNTED, NODE_EXTRA_CA_CERTS: caFile },
    });
    // The redirect URI `idps create` printed names the issuer of a server on the default port; this
    // server's issuer is its own (https://localhost:PORT), and the upstream must know that one.
    const port = new URL(server.url).port;
    const redirectUri = `https://localhost:${port}${new URL(created.redirect_uri).pathname}`;
    upstream.registerClient({
      clientId: 'gatehouse-bench',
      clientSecret: CLIENT_SECRET,
      redirectUris: [redirectUri],
    });
    const http = new FlowClient(server.url, context.ca, workers);
    try {
      const measured = await context.measureCustom(server, (seconds) =>
        runFlowLoad({
          workers,
          duration: seconds,
          flow: (worker) => federatedSignIn(http, upstream, accounts[worker]!),
        }),
      );
      const failed = measured.statusCodes.failed ?? 0;
      const perCore = measured.rps / measured.serverCpu;
      const cpuMs = (measured.serverCpu * 1000) / Math.max(measured.rps, 1e-9);
      const checks: Check[] = [
        {
          name: 'federated sign-in: every sign-in ends in a 303 to the account, signed in',
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
            label: `federated sign-ins/s (GET start 303 + upstream + GET callback 303), SQLite, 1 core, ${workers} browsers`,
            result: measured,
            compare: `${perCore.toFixed(0)}/s per core, ${cpuMs.toFixed(2)} ms Gatehouse CPU per sign-in`,
          },
        ],
        checks,
        targets: [
          {
            name: 'federated sign-in, Gatehouse CPU per sign-in (beside the password sign-in row)',
            target: 'reported (no threshold)',
            judge: () => ({
              measured: `${perCore.toFixed(0)}/s per core, ${cpuMs.toFixed(2)} ms Gatehouse CPU per sign-in (2 requests, 3 upstream calls)`,
              pass: true,
              reported: true,
            }),
          },
        ],
        notes: [
          'federated: each sign-in is a fresh browser: GET /sign-in/upstream/:id, the upstream sign-in ' +
            '(node-oidc-provider in the driver; its CPU is not counted), GET /sign-in/callback/:id, which ' +
            'calls the upstream three times (token, its JWK Set at most once per process, userinfo), checks ' +
            'one ES256 ID token and starts a session; latency columns include the upstream.',
        ],
      };
    } finally {
      http.close();
      await server.stop();
      await upstream.close();
    }
  },
};
