import { randomBytes, randomUUID } from 'node:crypto';
import { enginePolicy } from '../../src/compose/engine-policy.js';
import { openStorage } from '../../src/compose/gatehouse.js';
import { loadConfig } from '../../src/config.js';
import { SecondFactors } from '../../src/core/sign-in/second-factors.js';
import { totpCode, totpStep } from '../../src/core/sign-in/totp.js';
import { hashPassword } from '../../src/core/users/passwords.js';
import { systemClock } from '../../src/shared/clock.js';
import { FlowClient, runFlowLoad, type Exchange, type FlowOutcome } from '../lib/flow-load.js';
import { cookieHeader, withCookies } from '../lib/sign-in-pages.js';
import type { Check, Measured, Scenario } from '../lib/types.js';

/**
 * Issue 28 point 8: sign-ins through the sign-in page, with the password alone and with the password
 * and an authenticator app's code (decision 34), on the pinned SQLite Gatehouse. Reported beside each
 * other (and beside the password grant's row): the code adds a signed cookie, three HMAC-SHA-1, one
 * AES-GCM open and one conditional UPDATE to a sign-in whose cost is the argon2id verify.
 */
const FORM = 'application/x-www-form-urlencoded';
const NEXT = '/account/apps';
/**
 * A code is accepted once per user and time step (RFC 6238 §5.2), so each app user signs in at most
 * twice per 30 s (this step's code, then the next one's): enough users for every sign-in of a run.
 */
const APP_USERS = 1500;

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

function csrf(page: Exchange): string {
  const match = /name="csrf_token" value="([^"]*)"/.exec(page.body);
  if (match?.[1] === undefined) throw new Error(`page (${page.status}) has no csrf_token`);
  return match[1];
}

interface AppUser {
  username: string;
  secret: string;
  /** The last time step this driver used (the server refuses it and any before it). */
  lastStep: number;
}

/** Users with a confirmed authenticator app, made in-process in the bench store (one argon2 hash shared). */
async function createAppUsers(dataDir: string, password: string): Promise<AppUser[]> {
  const config = loadConfig({ dataDir });
  const storage = openStorage(config);
  try {
    const factors = new SecondFactors(
      storage.secondFactors,
      storage.users,
      systemClock,
      enginePolicy(config).secondFactors,
    );
    const passwordHash = await hashPassword(password);
    const now = systemClock.now();
    const users: AppUser[] = [];
    for (let i = 0; i < APP_USERS; i++) {
      const user = {
        id: randomUUID(),
        username: `bench-totp-${i}`,
        passwordHash,
        email: null,
        emailVerified: false,
        disabled: false,
        name: null,
        admin: false,
        createdAt: now,
        updatedAt: now,
      };
      await storage.users.insert(user);
      const setUp = await factors.beginTotp(user);
      if (setUp === undefined) throw new Error('could not begin a set-up');
      // Confirmed two steps back, so every code from now on is new to the store.
      const lastStep = totpStep(now) - 2;
      if (!(await storage.secondFactors.useTotpStep(user.id, lastStep, now, true))) {
        throw new Error('could not confirm a set-up');
      }
      users.push({ username: user.username, secret: setUp.secret, lastStep });
    }
    return users;
  } finally {
    await storage.close();
  }
}

/** One sign-in through the pages: GET /sign-in, POST /sign-in, and with `code`, POST the code. */
async function signIn(
  http: FlowClient,
  username: string,
  password: string,
  code: string | undefined,
): Promise<FlowOutcome> {
  const page = await http.send('GET', `/sign-in?next=${encodeURIComponent(NEXT)}`, {});
  const jar = withCookies(new Map(), page);
  const token = csrf(page);
  const posted = await http.send(
    'POST',
    '/sign-in',
    { cookie: cookieHeader(jar), 'content-type': FORM },
    form({ csrf_token: token, username, password, next: NEXT }),
  );
  if (code === undefined) {
    return posted.status === 303 && posted.location?.endsWith(NEXT)
      ? { ok: true }
      : { ok: false, failure: `POST /sign-in answered ${posted.status} to ${posted.location}` };
  }
  if (posted.status !== 303 || !posted.location?.endsWith('/sign-in/second-factor')) {
    return { ok: false, failure: `POST /sign-in answered ${posted.status} to ${posted.location}` };
  }
  const verified = await http.send(
    'POST',
    '/sign-in/second-factor',
    { cookie: cookieHeader(withCookies(jar, posted)), 'content-type': FORM },
    form({ csrf_token: token, code }),
  );
  return verified.status === 303 && verified.location?.endsWith(NEXT)
    ? { ok: true }
    : { ok: false, failure: `POST /sign-in/second-factor answered ${verified.status}` };
}

function allOk(name: string, result: Measured & { failures?: string[] }): Check {
  const failed = result.statusCodes.failed ?? 0;
  return {
    name: `${name}: every sign-in ends signed in`,
    pass: failed === 0 && result.warmupNon2xx === 0 && result.requests > 0,
    detail:
      `${result.requests} sign-ins, ${failed} failed, ${result.warmupNon2xx} failed in warm-up` +
      (result.failures !== undefined && result.failures.length > 0
        ? `; first failures: ${result.failures.join('; ')}`
        : ''),
  };
}

export const totpSignInScenario: Scenario = {
  id: 'totp',
  title: 'sign-in page: password, and password + TOTP (decision 34)',
  async run(context) {
    const server = context.gatehouse;
    const workers = context.options.connections;
    const password = randomBytes(12).toString('base64url');
    context.log(`  creating ${APP_USERS} users with an authenticator app`);
    const appUsers = await createAppUsers(context.dataDir, password);
    let next = 0;
    /** The next user with a code no sign-in used yet (this step's or the next one's), and that code. */
    const freshSignIn = (): { username: string; code: string } | undefined => {
      for (let tried = 0; tried < appUsers.length; tried++) {
        const user = appUsers[next++ % appUsers.length]!;
        const now = systemClock.now();
        const step = Math.max(user.lastStep + 1, totpStep(now));
        if (step > totpStep(now) + 1) continue;
        user.lastStep = step;
        return { username: user.username, code: totpCode(user.secret, step * 30) };
      }
      return undefined;
    };
    const http = new FlowClient(server.url, context.ca, workers);
    try {
      const plainUsers = context.users;
      const passwordOnly = await context.measureCustom(server, (seconds) =>
        runFlowLoad({
          workers,
          duration: seconds,
          flow: (worker) => {
            const user = plainUsers[worker % plainUsers.length]!;
            return signIn(http, user.username, user.password, undefined);
          },
        }),
      );
      const withCode = await context.measureCustom(server, (seconds) =>
        runFlowLoad({
          workers,
          duration: seconds,
          flow: () => {
            const chosen = freshSignIn();
            if (chosen === undefined) {
              return Promise.resolve({ ok: false, failure: 'no app user left with an unused step' });
            }
            return signIn(http, chosen.username, password, chosen.code);
          },
        }),
      );
      const perCore = (m: Measured) => m.rps / Math.max(m.serverCpu, 0.01);
      const cpuMs = (m: Measured) => (1000 * m.serverCpu) / Math.max(m.rps, 0.01);
      return {
        rows: [
          {
            scenario: 'totp',
            label: `password sign-in (GET + POST /sign-in), SQLite, 1 core, ${workers} browsers`,
            result: passwordOnly,
            compare: `${perCore(passwordOnly).toFixed(0)} sign-ins/s per core, ${cpuMs(passwordOnly).toFixed(1)} ms CPU each`,
          },
          {
            scenario: 'totp',
            label: `password + TOTP sign-in (+ POST /sign-in/second-factor), SQLite, 1 core, ${workers} browsers`,
            result: withCode,
            compare:
              `${perCore(withCode).toFixed(0)} sign-ins/s per core, ${cpuMs(withCode).toFixed(1)} ms CPU each; ` +
              `${(withCode.rps / passwordOnly.rps).toFixed(2)} x the password sign-in`,
          },
        ],
        checks: [allOk('password sign-in', passwordOnly), allOk('password + TOTP sign-in', withCode)],
        targets: [
          {
            name: 'password + TOTP sign-in next to the password sign-in',
            target: 'reported (no threshold)',
            judge: () => ({
              measured:
                `${withCode.rps.toFixed(0)} vs ${passwordOnly.rps.toFixed(0)} sign-ins/s; ` +
                `${cpuMs(withCode).toFixed(1)} vs ${cpuMs(passwordOnly).toFixed(1)} ms server CPU per sign-in`,
              pass: true,
              reported: true,
            }),
          },
        ],
        notes: [
          'totp: sign-ins driven by the keep-alive HTTPS loop of bench/lib/flow-load.ts (each a GET and a POST ' +
            `of /sign-in, and with TOTP a POST of the code); latency columns are per whole sign-in. ${APP_USERS} ` +
            'users with a confirmed app, each code used once (RFC 6238 §5.2), all sharing one argon2id hash.',
        ],
      };
    } finally {
      http.close();
    }
  },
};
