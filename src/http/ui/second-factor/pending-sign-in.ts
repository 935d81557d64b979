import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SessionAuthentication } from '../../../core/model.js';
import {
  clearBrowserBoundCookie,
  readBrowserBoundCookie,
  writeBrowserBoundCookie,
  type BrowserBoundCookie,
} from '../browser-bound-cookie.js';
import type { UiContext } from '../ui-context.js';

/**
 * A sign-in whose password was right and whose second factor is still to come (docs/decisions.md,
 * decision 34): who, the password's time (the session records it first), where to go next, and the
 * browser it happened in. It travels in a browser-bound cookie (browser-bound-cookie.ts: signed, so any
 * process can read it and no one can make one; bound to the browser id it was made for) for five
 * minutes.
 */
export const PENDING_SIGN_IN_COOKIE = '__Host-gatehouse-pending-sign-in';
export const PENDING_SIGN_IN_SECONDS = 5 * 60;

const COOKIE: BrowserBoundCookie = { name: PENDING_SIGN_IN_COOKIE, seconds: PENDING_SIGN_IN_SECONDS };

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
  };
  writeBrowserBoundCookie(reply, COOKIE, browserId, ui.engine.clock.now(), stored);
}

/** The pending sign-in of this browser, if its cookie is genuine, unexpired and made in this browser. */
export function pendingSignIn(ui: UiContext, request: FastifyRequest): PendingSignIn | undefined {
  const stored = readBrowserBoundCookie<Stored>(
    request,
    COOKIE,
    ui.browsers.browserId(request),
    ui.engine.clock.now(),
  );
  if (stored === undefined) return undefined;
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
  clearBrowserBoundCookie(reply, COOKIE);
}
