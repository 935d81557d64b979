import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SessionAuthentication } from '../../../core/model.js';
import type { PendingLink } from '../../../core/federation/federation.js';
import { PASSKEY, PASSWORD, SYNCED_PASSKEY } from '../../../core/sign-in/methods.js';
import {
  clearBrowserBoundCookie,
  readBrowserBoundCookie,
  writeBrowserBoundCookie,
  type BrowserBoundCookie,
} from '../browser-bound-cookie.js';
import type { UiContext } from '../ui-context.js';

/**
 * An upstream account waiting to be linked to a local user who must first prove they are that user
 * (docs/decisions.md, decision 40, case d): which upstream person, and which local users it may be.
 * It travels in a browser-bound cookie (browser-bound-cookie.ts, as the pending sign-in of a second
 * factor does) for ten minutes; the sign-in that ends with a password or
 * a passkey (and its second factor, if any) as one of the candidates makes the link (completeSignIn).
 */
export const PENDING_LINK_COOKIE = '__Host-gatehouse-pending-link';
export const PENDING_LINK_SECONDS = 10 * 60;

const COOKIE: BrowserBoundCookie = { name: PENDING_LINK_COOKIE, seconds: PENDING_LINK_SECONDS };

/** The methods that prove a local user here: a link is made only after one of them (decision 40). */
const PROVING_METHODS: ReadonlySet<string> = new Set([PASSWORD.name, PASSKEY.name, SYNCED_PASSKEY.name]);

interface Stored {
  p: string;
  i: string;
  s: string;
  l: string | null;
  c: string[];
  r: 'email' | 'username';
}

export function setPendingLink(
  ui: UiContext,
  reply: FastifyReply,
  browserId: string,
  pending: PendingLink,
): void {
  const stored: Stored = {
    p: pending.providerId,
    i: pending.issuer,
    s: pending.subject,
    l: pending.label,
    c: pending.candidates,
    r: pending.reason,
  };
  writeBrowserBoundCookie(reply, COOKIE, browserId, ui.engine.clock.now(), stored);
}

/** The pending link of this browser (`browserId`, the request's own by default), if genuine and unexpired. */
export function pendingLink(
  ui: UiContext,
  request: FastifyRequest,
  browserId = ui.browsers.browserId(request),
): PendingLink | undefined {
  const stored = readBrowserBoundCookie<Stored>(request, COOKIE, browserId, ui.engine.clock.now());
  if (stored === undefined) return undefined;
  return {
    providerId: stored.p,
    issuer: stored.i,
    subject: stored.s,
    label: stored.l,
    candidates: stored.c,
    reason: stored.r === 'username' ? 'username' : 'email',
  };
}

export function clearPendingLink(reply: FastifyReply): void {
  clearBrowserBoundCookie(reply, COOKIE);
}

/**
 * Ends a sign-in's pending link (decision 40, case d), called by completeSignIn with the browser id the
 * sign-in was made in: when the sign-in proved a local user with a password or a passkey and that user
 * is one of the link's candidates, the upstream account is linked to them. The cookie is spent either
 * way: signed in as someone else, the link is dropped, never made for them.
 */
export async function completePendingLink(
  ui: UiContext,
  request: FastifyRequest,
  reply: FastifyReply,
  browserId: string | undefined,
  userId: string,
  authentication: SessionAuthentication | readonly SessionAuthentication[],
): Promise<string | undefined> {
  if (request.cookies[PENDING_LINK_COOKIE] === undefined) return undefined;
  clearPendingLink(reply);
  const pending = pendingLink(ui, request, browserId);
  const record = 'method' in authentication ? [authentication] : authentication;
  if (pending === undefined || !record.some((entry) => PROVING_METHODS.has(entry.method))) return undefined;
  const result = await ui.engine.federation.completePendingLink(pending, userId);
  return result?.outcome === 'linked' ? pending.providerId : undefined;
}
