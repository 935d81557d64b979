import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ENDPOINTS } from '../../../config/endpoints.js';
import { byUser } from '../../../core/audit/audit-log.js';
import type { SignedInContext } from '../browser-context.js';
import { formatWait } from '../pages/format.js';
import { passwordSection } from '../security/password-section.js';
import { askToSignInAgain, signedInRecently } from '../security/recent-sign-in.js';
import { signInDevice } from '../sign-in-completion.js';
import { field, forbiddenForm, sendMessage, type UiContext } from '../ui-context.js';
import { SECURITY_NOTICE_COOKIE, SECURITY_NOTICE_OPTIONS, sendSecurityPage } from './security-routes.js';

/**
 * The security page's own forms (docs/decisions.md, decision 37): "Change password", "Sign out" of one
 * other session, and "Sign out everywhere else". Each is CSRF-checked and acts on the signed-in user's
 * own account only.
 */
export function registerAccountSecurityRoutes(app: FastifyInstance, ui: UiContext): void {
  const base = ui.config.basePath;

  /** The signed-in browser behind a checked form, or the answer already sent. */
  async function signedInForm(
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<SignedInContext | FastifyReply> {
    if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token'))) return forbiddenForm(ui, reply);
    const browser = await ui.browsers.load(request, reply);
    if (browser.user === undefined || browser.authentication === undefined) {
      return reply.redirect(`${base}/sign-in?next=/account/security`, 303);
    }
    return browser as SignedInContext;
  }

  /** Back to the page (303, so a reload sends nothing again), with a one-time notice of what was done. */
  function done(reply: FastifyReply, notice: string): FastifyReply {
    reply.setCookie(SECURITY_NOTICE_COOKIE, notice, { ...SECURITY_NOTICE_OPTIONS, maxAge: 60 });
    return reply.redirect(`${base}/account/security`, 303);
  }

  app.post(ENDPOINTS.accountPassword.path, async function changePassword(request, reply) {
    const browser = await signedInForm(request, reply);
    if (!('user' in browser)) return browser;
    // Decision 40: a user with no password has none to check; the section offers "Set a password".
    if (browser.user.passwordHash === '') {
      return sendSecurityPage(ui, request, reply, browser, {
        status: 409,
        replace: passwordSection(ui, browser),
      });
    }
    const result = await ui.engine.account.changePassword({
      user: browser.user,
      browserId: browser.browserId,
      currentPassword: field(request.body, 'current_password') ?? '',
      newPassword: field(request.body, 'new_password') ?? '',
      address: request.ip,
      device: signInDevice(request),
    });
    switch (result.outcome) {
      case 'changed':
        // The session stays, under a renewed cookie: its CSRF token changes with it.
        ui.browsers.setCookie(reply, result.browserId);
        return done(
          reply,
          'Password changed. You were signed out everywhere else, and apps you allowed will ask again.',
        );
      case 'throttled':
        reply.header('retry-after', String(result.retryAfter));
        return sendMessage(
          ui,
          reply,
          429,
          'Too many attempts',
          `Too many wrong passwords. Wait ${formatWait(result.retryAfter)} and try again.`,
          browser,
        );
      case 'wrong-password':
        return sendSecurityPage(ui, request, reply, browser, {
          status: 401,
          replace: passwordSection(ui, browser, {
            field: 'current',
            message: 'The current password is wrong.',
          }),
        });
      case 'invalid-new-password':
        return sendSecurityPage(ui, request, reply, browser, {
          status: 400,
          replace: passwordSection(ui, browser, {
            field: 'new',
            message: 'The new password must be 8 to 1024 characters.',
          }),
        });
    }
  });

  app.post(ENDPOINTS.accountSessionSignOut.path, async function signOutSession(request, reply) {
    const browser = await signedInForm(request, reply);
    if (!('user' in browser)) return browser;
    // Ending sessions is a change to the account's security: a stale sign-in proves itself again first.
    if (!signedInRecently(ui, browser)) return askToSignInAgain(ui, reply);
    // Only the user's own: a `sid` of another user's session names nothing here (endOf).
    const ended = await ui.engine.browserSessions.endOf(
      browser.user.id,
      field(request.body, 'session') ?? '',
      byUser(browser.user.id, request.ip),
    );
    return done(reply, ended ? 'Signed out of that session.' : 'That session had already ended.');
  });

  app.post(ENDPOINTS.accountSessionsSignOutOthers.path, async function signOutOthers(request, reply) {
    const browser = await signedInForm(request, reply);
    if (!('user' in browser)) return browser;
    if (!signedInRecently(ui, browser)) return askToSignInAgain(ui, reply);
    const ended = await ui.engine.browserSessions.endOthers(
      browser.user.id,
      browser.browserId,
      byUser(browser.user.id, request.ip),
    );
    return done(
      reply,
      ended === 1 ? 'Signed out of 1 other session.' : `Signed out of ${ended} other sessions.`,
    );
  });
}
