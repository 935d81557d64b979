import type { FastifyReply } from 'fastify';
import type { SignedInContext } from '../browser-context.js';
import type { UiContext } from '../ui-context.js';

/**
 * How long a sign-in counts as recent for a change to how the account signs in (a passkey added, a
 * second factor set up or removed, the password changed, sessions ended): older, the person proves who
 * they are again first, so a browser left signed in cannot be used to take the account over.
 */
export const RECENT_SIGN_IN_SECONDS = 5 * 60;

export function signedInRecently(ui: UiContext, browser: SignedInContext): boolean {
  return ui.engine.clock.now() - browser.authentication.authTime <= RECENT_SIGN_IN_SECONDS;
}

/**
 * Sends the person to sign in again, then back to `next` (a path under the base path that safeNext
 * accepts). The sign-in page shows a signed-in person the form again when `reauth=1`.
 */
export function askToSignInAgain(
  ui: UiContext,
  reply: FastifyReply,
  next = '/account/security',
): FastifyReply {
  return reply.redirect(`${ui.config.basePath}/sign-in?reauth=1&next=${encodeURIComponent(next)}`, 303);
}
