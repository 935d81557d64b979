import { SoftwareAuthenticator } from '../../test/helpers/software-authenticator.js';
import { FlowClient, runFlowLoad, type FlowOutcome } from '../lib/flow-load.js';
import { cookieOf, form, FORM, hidden, signInWithPassword } from '../lib/sign-in-pages.js';
import type { Check, Scenario } from '../lib/types.js';

/**
 * One browser's set-up: its user signs in with the password and adds a passkey on the security page,
 * made by a software authenticator (P-256, test/helpers/software-authenticator.ts) as a browser's would
 * be: the same two requests, the same checks (decision 33).
 */
async function registerPasskey(
  http: FlowClient,
  origin: string,
  user: { username: string; password: string },
): Promise<SoftwareAuthenticator> {
  const cookie = await signInWithPassword(http, user, '/account/security');
  const security = await http.send('GET', '/account/security', { cookie });
  const csrf = hidden(security, 'csrf_token');
  const options = await http.send(
    'POST',
    '/account/security/passkeys/options',
    { cookie, 'content-type': FORM },
    form({ csrf_token: csrf }),
  );
  if (options.status !== 200) throw new Error(`passkey options answered ${options.status}`);
  const authenticator = new SoftwareAuthenticator({ origin });
  const credential = authenticator.create(
    JSON.parse(options.body) as Parameters<SoftwareAuthenticator['create']>[0],
  );
  const added = await http.send(
    'POST',
    '/account/security/passkeys',
    { cookie, 'content-type': FORM },
    form({ csrf_token: csrf, name: 'bench', credential: JSON.stringify(credential) }),
  );
  if (added.status !== 303 || !added.setCookie.some((c) => c.includes('Passkey%20added'))) {
    throw new Error(`adding the passkey answered ${added.status}`);
  }
  return authenticator;
}

/**
 * One passwordless sign-in, as a fresh browser does it: GET /sign-in (a browser id and its CSRF token),
 * POST /sign-in/passkey/options (a stored challenge), the authenticator's assertion (in the driver),
 * POST /sign-in/passkey -> 303 signed in.
 */
async function signIn(http: FlowClient, authenticator: SoftwareAuthenticator): Promise<FlowOutcome> {
  const page = await http.send('GET', '/sign-in', {});
  const cookie = cookieOf(page, undefined);
  if (cookie === undefined) return { ok: false, failure: 'GET /sign-in set no cookie' };
  const csrf = hidden(page, 'csrf_token');
  const options = await http.send(
    'POST',
    '/sign-in/passkey/options',
    { cookie, 'content-type': FORM },
    form({ csrf_token: csrf }),
  );
  if (options.status !== 200) return { ok: false, failure: `options answered ${options.status}` };
  const credential = authenticator.get(JSON.parse(options.body) as { challenge: string });
  const answer = await http.send(
    'POST',
    '/sign-in/passkey',
    { cookie, 'content-type': FORM },
    form({ csrf_token: csrf, next: '/account/apps', credential: JSON.stringify(credential) }),
  );
  if (answer.status !== 303 || answer.location !== '/account/apps') {
    return { ok: false, failure: `POST /sign-in/passkey answered ${answer.status}` };
  }
  return { ok: true, sample: answer.location };
}

/**
 * Issue 28 point 8: passkey sign-ins per second per core and CPU per sign-in, beside the password
 * grant's row. Gatehouse on SQLite, pinned, rate limits counted; each connection is a browser whose
 * user added a passkey before the measured seconds; every sign-in checks one ES256 signature and reads
 * the credential and its user.
 */
export const passkeyScenario: Scenario = {
  id: 'passkey',
  title: 'passkey sign-in (WebAuthn assertion, ES256)',
  async run(context) {
    const server = context.gatehouse;
    const origin = server.url.replace('127.0.0.1', 'localhost');
    const workers = context.options.connections;
    const http = new FlowClient(server.url, context.ca, workers);
    try {
      context.log(`  adding a passkey for each of ${workers} users`);
      const authenticators = await Promise.all(
        Array.from({ length: workers }, (_, i) =>
          registerPasskey(http, origin, context.users[i % context.users.length]!),
        ),
      );
      const measured = await context.measureCustom(server, (seconds) =>
        runFlowLoad({ workers, duration: seconds, flow: (worker) => signIn(http, authenticators[worker]!) }),
      );
      const failed = measured.statusCodes.failed ?? 0;
      const perCore = measured.rps / measured.serverCpu;
      const cpuMs = (measured.serverCpu * 1000) / Math.max(measured.rps, 1e-9);
      const checks: Check[] = [
        {
          name: 'passkey sign-in: every sign-in ends in a 303 to the account',
          pass: failed === 0 && measured.warmupNon2xx === 0 && measured.requests > 0,
          detail:
            `${measured.requests} sign-ins, ${failed} failed, ${measured.warmupNon2xx} failed in warm-up` +
            (measured.failures.length > 0 ? `; first failures: ${measured.failures.join('; ')}` : ''),
        },
      ];
      return {
        rows: [
          {
            scenario: 'passkey',
            label: `passkey sign-ins/s (GET /sign-in + POST options + POST assertion 303), SQLite, 1 core, ${workers} browsers`,
            result: measured,
            compare: `${perCore.toFixed(0)}/s per core, ${cpuMs.toFixed(2)} ms CPU per sign-in`,
          },
        ],
        checks,
        targets: [
          {
            name: 'passkey sign-in, per core and CPU per sign-in (beside the password grant row)',
            target: 'reported (no threshold)',
            judge: () => ({
              measured: `${perCore.toFixed(0)}/s per core, ${cpuMs.toFixed(2)} ms server CPU per sign-in (3 requests)`,
              pass: true,
              reported: true,
            }),
          },
        ],
        notes: [
          'passkey: each sign-in is a fresh browser (no cookie): GET /sign-in, POST /sign-in/passkey/options ' +
            '(a challenge stored), an ES256 assertion signed by a software authenticator in the driver, and ' +
            'POST /sign-in/passkey (the challenge taken, one signature verified, the counter stored, a ' +
            'session started); latency columns are per whole sign-in.',
        ],
      };
    } finally {
      http.close();
    }
  },
};
