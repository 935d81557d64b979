import type { FastifyReply, FastifyRequest } from 'fastify';
import { open, seal } from '../../../core/keys/sealed-box.js';
import { sha256 } from '../../../shared/crypto.js';

/**
 * The admin console's two cookies (docs/decisions.md, decision 42), both sealed with AES-256-GCM under
 * a key derived from the server secret for the console alone, with the browser id's hash as associated
 * data (as the upstream flow's cookie, decision 40): any process opens them, nobody reads or makes one,
 * and a copy opens in no other browser. `__Host-` keeps other hosts from planting them; SameSite=Lax
 * sends the flow's on the redirect back from /authorize.
 *
 * - The flow: `state` and the PKCE verifier (RFC 7636 §4.1) of the authorization request the console
 *   started, and the console page to return to, for ten minutes. Not bound to the browser id: signing
 *   in renews that id (decision 37) between the start and the callback. The random `state` it holds,
 *   which the callback must carry, is what ties the callback to this browser (RFC 6749 §10.12).
 * - The session: the access token /token issued to the console for the administrator, and whose it is.
 *   It never reaches the page's script (HttpOnly) and is sent only to /v1, in process.
 */
export const CONSOLE_FLOW_COOKIE = '__Host-gatehouse-admin-flow';
export const CONSOLE_SESSION_COOKIE = '__Host-gatehouse-admin';
export const CONSOLE_FLOW_SECONDS = 10 * 60;

const OPTIONS = { path: '/', secure: true, httpOnly: true, sameSite: 'lax' } as const;
const MAX_COOKIE_LENGTH = 4096;

export interface ConsoleFlow {
  state: string;
  codeVerifier: string;
  /** The console page to show after sign-in: a path under /admin. */
  next: string;
  expiresAt: number;
}

export interface ConsoleSession {
  accessToken: string;
  /** The user the token acts for (its `sub`): the browser's signed-in user must be this one. */
  userId: string;
  expiresAt: number;
}

const aad = (purpose: string, browserId: string | null) =>
  browserId === null ? `admin-console-${purpose}` : `admin-console-${purpose}:${sha256(browserId)}`;

function write(
  reply: FastifyReply,
  name: string,
  key: Buffer,
  purpose: string,
  browserId: string | null,
  value: object,
  maxAge: number,
): void {
  reply.setCookie(name, seal(key, Buffer.from(JSON.stringify(value)), aad(purpose, browserId)), {
    ...OPTIONS,
    maxAge,
  });
}

function read(
  request: FastifyRequest,
  name: string,
  key: Buffer,
  purpose: string,
  browserId: string | null | undefined,
): Record<string, unknown> | undefined {
  const raw = request.cookies[name];
  if (raw === undefined || browserId === undefined || raw.length > MAX_COOKIE_LENGTH) return undefined;
  try {
    const value: unknown = JSON.parse(open(key, raw, aad(purpose, browserId)).toString());
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export function setConsoleFlow(reply: FastifyReply, key: Buffer, flow: ConsoleFlow): void {
  write(
    reply,
    CONSOLE_FLOW_COOKIE,
    key,
    'flow',
    null,
    { s: flow.state, v: flow.codeVerifier, n: flow.next, e: flow.expiresAt },
    CONSOLE_FLOW_SECONDS,
  );
}

export function consoleFlow(request: FastifyRequest, key: Buffer, now: number): ConsoleFlow | undefined {
  const v = read(request, CONSOLE_FLOW_COOKIE, key, 'flow', null);
  if (v === undefined) return undefined;
  const { s, n, e } = v;
  const verifier = v['v'];
  if (typeof s !== 'string' || typeof verifier !== 'string' || typeof n !== 'string') return undefined;
  if (typeof e !== 'number' || e < now) return undefined;
  return { state: s, codeVerifier: verifier, next: n, expiresAt: e };
}

export function clearConsoleFlow(reply: FastifyReply): void {
  reply.clearCookie(CONSOLE_FLOW_COOKIE, OPTIONS);
}

export function setConsoleSession(
  reply: FastifyReply,
  key: Buffer,
  browserId: string,
  session: ConsoleSession,
  now: number,
): void {
  write(
    reply,
    CONSOLE_SESSION_COOKIE,
    key,
    'session',
    browserId,
    { t: session.accessToken, u: session.userId, e: session.expiresAt },
    Math.max(1, session.expiresAt - now),
  );
}

export function consoleSession(
  request: FastifyRequest,
  key: Buffer,
  browserId: string | undefined,
  now: number,
): ConsoleSession | undefined {
  const v = read(request, CONSOLE_SESSION_COOKIE, key, 'session', browserId);
  if (v === undefined) return undefined;
  const { t, u, e } = v;
  if (typeof t !== 'string' || typeof u !== 'string' || typeof e !== 'number' || e <= now) return undefined;
  return { accessToken: t, userId: u, expiresAt: e };
}

export function clearConsoleSession(reply: FastifyReply): void {
  reply.clearCookie(CONSOLE_SESSION_COOKIE, OPTIONS);
}
