import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SessionAuthentication } from '../../../core/model.js';
import { sha256 } from '../../../shared/crypto.js';
import type { UiContext } from '../ui-context.js';

/**
 * A sign-in whose password was right and whose second factor is still to come (docs/decisions.md,
 * decision 34): who, the password's time (the session records it first), where to go next, and the
 * browser it happened in. It travels in a cookie signed by @fastify/cookie (HMAC-SHA-256 under a key
 * derived from the server secret), so any process can read it and no one can make one; `__Host-` keeps
 * other hosts from planting it. It lasts five minutes, and it is bound to the browser id it was made
 * for, so a copy taken elsewhere is worth nothing without that browser's cookie too.
 */
export const PENDING_SIGN_IN_COOKIE = '__Host-gatehouse-pending-sign-in';
export const PENDING_SIGN_IN_SECONDS = 5 * 60;

const OPTIONS = { path: '/', secure: true, httpOnly: true, sameSite: 'lax', signed: true } as const;

export interface PendingSignIn {
  userId: string;
  /** What the session records before the second factor: the password (or a federated sign-in), when. */
  first: SessionAuthentication;
  next: string;
  /** Whether the user must set an authenticator app up (they have no second factor). */
  setUp: boolean;
  /**
   * A signed-in person proving it again (`reauth=1`, decision 37): the second factor ends in
   * completeReauthentication, the session kept, not in a new sign-in.
   */
  reauth?: boolean;
}

interface Stored {
  u: string;
  m: string;
  t: number;
  n: string;
  s: 0 | 1;
  r?: 1;
  /** A federated first step (decision 40): its provider, and a trusted upstream's amr and acr. */
  p?: string;
  a?: { amr?: string[]; acr?: string };
  /** SHA-256 of the browser id it was made in. */
  b: string;
  e: number;
}

export function setPendingSignIn(
  ui: UiContext,
  reply: FastifyReply,
  browserId: string,
  pending: PendingSignIn,
): void {
  const stored: Stored = {
    u: pending.userId,
    m: pending.first.method,
    t: pending.first.at,
    n: pending.next,
    s: pending.setUp ? 1 : 0,
    ...(pending.reauth === true ? { r: 1 as const } : {}),
    ...(pending.first.provider !== undefined ? { p: pending.first.provider } : {}),
    ...(pending.first.upstream !== undefined ? { a: pending.first.upstream } : {}),
    b: sha256(browserId),
    e: ui.engine.clock.now() + PENDING_SIGN_IN_SECONDS,
  };
  reply.setCookie(PENDING_SIGN_IN_COOKIE, Buffer.from(JSON.stringify(stored)).toString('base64url'), {
    ...OPTIONS,
    maxAge: PENDING_SIGN_IN_SECONDS,
  });
}

/** The pending sign-in of this browser, if its cookie is genuine, unexpired and made in this browser. */
export function pendingSignIn(ui: UiContext, request: FastifyRequest): PendingSignIn | undefined {
  const raw = request.cookies[PENDING_SIGN_IN_COOKIE];
  const browserId = ui.browsers.browserId(request);
  if (raw === undefined || browserId === undefined) return undefined;
  const unsigned = request.unsignCookie(raw);
  if (!unsigned.valid || unsigned.value === null) return undefined;
  let stored: Stored;
  try {
    stored = JSON.parse(Buffer.from(unsigned.value, 'base64url').toString()) as Stored;
  } catch {
    return undefined;
  }
  if (stored.e < ui.engine.clock.now() || stored.b !== sha256(browserId)) return undefined;
  return {
    userId: stored.u,
    first: {
      method: stored.m,
      at: stored.t,
      ...(stored.p !== undefined ? { provider: stored.p } : {}),
      ...(stored.a !== undefined ? { upstream: stored.a } : {}),
    },
    next: stored.n,
    setUp: stored.s === 1,
    ...(stored.r === 1 ? { reauth: true } : {}),
  };
}

export function clearPendingSignIn(reply: FastifyReply): void {
  reply.clearCookie(PENDING_SIGN_IN_COOKIE, { path: '/', secure: true, httpOnly: true, sameSite: 'lax' });
}
