import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SessionAuthentication } from '../../../core/model.js';
import type { PendingLink } from '../../../core/federation/federation.js';
import { PASSKEY, PASSWORD, SYNCED_PASSKEY } from '../../../core/sign-in/methods.js';
import { sha256 } from '../../../shared/crypto.js';
import type { UiContext } from '../ui-context.js';

/**
 * An upstream account waiting to be linked to a local user who must first prove they are that user
 * (docs/decisions.md, decision 40, case d): which upstream person, and which local users it may be.
 * It travels in a cookie signed by @fastify/cookie (as the pending sign-in of a second factor does),
 * bound to the browser id it was made in, for ten minutes; the sign-in that ends with a password or
 * a passkey (and its second factor, if any) as one of the candidates makes the link (completeSignIn).
 */
export const PENDING_LINK_COOKIE = '__Host-gatehouse-pending-link';
export const PENDING_LINK_SECONDS = 10 * 60;

const OPTIONS = { path: '/', secure: true, httpOnly: true, sameSite: 'lax', signed: true } as const;

/** The methods that prove a local user here: a link is made only after one of them (decision 40). */
const PROVING_METHODS: ReadonlySet<string> = new Set([PASSWORD.name, PASSKEY.name, SYNCED_PASSKEY.name]);

interface Stored {
  p: string;
  i: string;
  s: string;
  l: string | null;
  c: string[];
  r: 'email' | 'username';
  b: string;
  e: number;
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
    b: sha256(browserId),
    e: ui.engine.clock.now() + PENDING_LINK_SECONDS,
  };
  reply.setCookie(PENDING_LINK_COOKIE, Buffer.from(JSON.stringify(stored)).toString('base64url'), {
    ...OPTIONS,
    maxAge: PENDING_LINK_SECONDS,
  });
}

/** The pending link of this browser (`browserId`, the request's own by default), if genuine and unexpired. */
export function pendingLink(
  ui: UiContext,
  request: FastifyRequest,
  browserId = ui.browsers.browserId(request),
): PendingLink | undefined {
  const raw = request.cookies[PENDING_LINK_COOKIE];
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
    providerId: stored.p,
    issuer: stored.i,
    subject: stored.s,
    label: stored.l,
    candidates: stored.c,
    reason: stored.r === 'username' ? 'username' : 'email',
  };
}

export function clearPendingLink(reply: FastifyReply): void {
  reply.clearCookie(PENDING_LINK_COOKIE, { path: '/', secure: true, httpOnly: true, sameSite: 'lax' });
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
