import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SessionAuthentication } from '../../core/model.js';
import type { SignInDevice } from '../../core/sign-in/browser-sessions.js';
import { completePendingLink } from './federation/pending-link.js';
import { deviceTargetAfterSignIn } from './routes/device-routes.js';
import { SECURITY_NOTICE_COOKIE, SECURITY_NOTICE_OPTIONS } from './routes/security-routes.js';
import type { UiContext } from './ui-context.js';

const AUTHORIZE = '/authorize?';

export interface CompletedSignIn {
  userId: string;
  /**
   * What the browser session records (decision 30): every method used in this sign-in, in order (a
   * password then a one-time code, decision 34); one method alone may be given as itself.
   */
  authentication: SessionAuthentication | readonly SessionAuthentication[];
  /** Where the person goes next (already passed through safeNext). */
  next: string;
}

/**
 * Ends a sign-in, whichever method proved who the person is: a new browser id on every sign-in (an id
 * planted before sign-in never becomes a session: fixation), the session started with what was used,
 * the authorization request it was for marked as interacted with, and the redirect to `next`.
 */
export async function completeSignIn(
  ui: UiContext,
  request: FastifyRequest,
  reply: FastifyReply,
  signIn: CompletedSignIn,
): Promise<FastifyReply> {
  const { next } = signIn;
  const oldBrowserId = ui.browsers.browserId(request);
  // Decision 40: an upstream account waiting for this person to prove who they are is linked now,
  // when this sign-in proved one of its candidates with a password or a passkey.
  const linked = await completePendingLink(
    ui,
    request,
    reply,
    oldBrowserId,
    signIn.userId,
    signIn.authentication,
  );
  if (linked !== undefined) {
    const provider = await ui.engine.federation.provider(linked);
    reply.setCookie(SECURITY_NOTICE_COOKIE, `${provider?.name ?? 'Account'} linked`, {
      ...SECURITY_NOTICE_OPTIONS,
      maxAge: 60,
    });
  }
  await ui.engine.browserSessions.end(oldBrowserId);
  const browserId = await ui.engine.browserSessions.start(
    signIn.userId,
    signIn.authentication,
    signInDevice(request),
  );
  ui.browsers.setCookie(reply, browserId);
  // The person just proved who they are for this authorization request: what it asked for is done.
  if (next.startsWith(AUTHORIZE)) {
    ui.browsers.markInteraction(reply, browserId, next.slice(AUTHORIZE.length));
  }
  return reply.redirect(ui.config.basePath + deviceTargetAfterSignIn(ui, next, oldBrowserId, browserId), 303);
}

/** The device and address a session records (decision 37): the User-Agent header and the request's address. */
export function signInDevice(request: FastifyRequest): SignInDevice {
  return { userAgent: request.headers['user-agent'], address: request.ip };
}

/**
 * Ends a re-authentication (`reauth=1` on the sign-in page, decision 37), whichever method proved who
 * the person is again: when the browser is signed in as that same user, its session records the
 * method and its time (auth_time moves) and stays the same session under a renewed cookie
 * (BrowserSessions.renew); otherwise (signed out meanwhile, or another user) it is an ordinary sign-in
 * (completeSignIn), a new session.
 */
export async function completeReauthentication(
  ui: UiContext,
  request: FastifyRequest,
  reply: FastifyReply,
  signIn: CompletedSignIn,
): Promise<FastifyReply> {
  const browserId = await ui.engine.browserSessions.renew(
    ui.browsers.browserId(request),
    signIn.userId,
    signIn.authentication,
    signInDevice(request),
  );
  if (browserId === undefined) return completeSignIn(ui, request, reply, signIn);
  ui.browsers.setCookie(reply, browserId);
  return reply.redirect(ui.config.basePath + signIn.next, 303);
}
