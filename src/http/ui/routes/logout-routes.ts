import { documentHost } from '../../../core/clients/metadata-documents.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ENDPOINTS } from '../../../config/endpoints.js';
import { BrowserSessions } from '../../../core/sign-in/browser-sessions.js';
import type { LogoutValidation } from '../../../core/oidc/logout.js';
import { allowFormTarget } from '../content-security-policy.js';
import { logoutPage, signedOutPage } from '../pages/logout-page.js';
import {
  field,
  formAsQuery,
  forbiddenForm,
  frameFor,
  rawQuery,
  sendMessage,
  sendPage,
  type UiContext,
} from '../ui-context.js';

/**
 * RP-initiated logout (RP-Initiated Logout 1.0) at the discovery document's `end_session_endpoint`:
 * GET and POST /logout (§2) show a confirmation page with a "Sign out" button (§3; POST
 * /logout/confirm, CSRF-protected), then the browser session ends and the browser goes to the
 * registered post_logout_redirect_uri with state, or sees "You are signed out". Access and refresh
 * tokens are not touched: signing out of the browser is not revoking what was granted.
 */
export function registerLogoutRoutes(app: FastifyInstance, ui: UiContext): void {
  const base = ui.config.basePath;

  function refused(reply: FastifyReply, validation: LogoutValidation): FastifyReply | undefined {
    if (validation.outcome !== 'error-page') return undefined;
    return sendMessage(ui, reply, 400, 'This sign-out request cannot be completed', validation.description);
  }

  async function logout(request: FastifyRequest, reply: FastifyReply, query: string): Promise<FastifyReply> {
    const validation = await ui.engine.logout.validate(query);
    const error = refused(reply, validation);
    if (error !== undefined || validation.outcome !== 'valid') return error as FastifyReply;
    const browser = await ui.browsers.load(request, reply);
    const location = ui.engine.logout.location(validation.request);
    if (browser.user === undefined) {
      // Nobody to sign out: straight back to the application, or say so.
      if (location !== undefined) return reply.redirect(location, 302);
      return sendPage(reply, 200, signedOutPage(frameFor(ui)));
    }
    // The confirmation's answer redirects to the application: its form may lead there.
    if (validation.request.postLogoutRedirectUri !== undefined) {
      allowFormTarget(reply, validation.request.postLogoutRedirectUri);
    }
    return sendPage(
      reply,
      200,
      logoutPage(frameFor(ui, browser), {
        csrfToken: browser.csrfToken,
        request: validation.request.query,
        clientName: validation.request.client?.name,
        clientHost:
          validation.request.client === undefined ? undefined : documentHost(validation.request.client),
      }),
    );
  }

  app.get(ENDPOINTS.endSession.path, async function logoutGet(request, reply) {
    return logout(request, reply, rawQuery(request.url));
  });

  // §2: POST too. On to GET with the same parameters, where the SameSite=Lax cookie comes along.
  app.post(ENDPOINTS.endSession.path, async function logoutPost(request, reply) {
    return reply.redirect(`${base}/logout?${formAsQuery(request.body)}`, 303);
  });

  app.post(ENDPOINTS.endSessionConfirmation.path, async function logoutConfirm(request, reply) {
    if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token'))) return forbiddenForm(ui, reply);
    const validation = await ui.engine.logout.validate(field(request.body, 'request') ?? '');
    const error = refused(reply, validation);
    if (error !== undefined || validation.outcome !== 'valid') return error;
    await ui.engine.browserSessions.end(ui.browsers.browserId(request));
    ui.browsers.setCookie(reply, BrowserSessions.newBrowserId());
    const location = ui.engine.logout.location(validation.request);
    if (location !== undefined) return reply.redirect(location, 303);
    return sendPage(reply, 200, signedOutPage(frameFor(ui)));
  });
}
