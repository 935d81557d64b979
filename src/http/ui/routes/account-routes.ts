import type { FastifyInstance } from 'fastify';
import { ENDPOINTS } from '../../../config/endpoints.js';
import { documentHost } from '../../../core/clients/metadata-documents.js';
import { appsPage } from '../pages/apps-page.js';
import { forbiddenForm, field, frameFor, sendPage, type UiContext } from '../ui-context.js';

/**
 * "Access for X was revoked" travels to the next page in a one-time cookie set only when grants were
 * revoked, never in the URL, where any link could make the page claim a revocation that did not happen.
 * `__Host-` (Secure, Path=/, no Domain) keeps other hosts from planting it.
 */
const NOTICE_COOKIE = '__Host-gatehouse-notice';
const NOTICE_OPTIONS = { path: '/', secure: true, httpOnly: true, sameSite: 'strict' } as const;

/** GET /account/apps (connected apps) and POST /account/apps/:clientId/revoke. */
export function registerAccountRoutes(app: FastifyInstance, ui: UiContext): void {
  const base = ui.config.basePath;

  app.get(ENDPOINTS.connectedApps.path, async function connectedApps(request, reply) {
    const browser = await ui.browsers.load(request, reply);
    if (browser.user === undefined) return reply.redirect(`${base}/sign-in?next=/account/apps`, 303);
    const [apps, scopes] = await Promise.all([
      ui.engine.connectedApps.list(browser.user.id),
      ui.engine.scopes.list(),
    ]);
    const descriptions = new Map(scopes.map((s) => [s.name, s.description]));
    // The notice is read once: shown on this page, then gone.
    const revokedId = request.cookies[NOTICE_COOKIE];
    if (revokedId !== undefined) reply.clearCookie(NOTICE_COOKIE, NOTICE_OPTIONS);
    const revoked = revokedId !== undefined ? await ui.engine.clients.get(revokedId) : undefined;
    return sendPage(
      reply,
      200,
      appsPage(frameFor(ui, browser), {
        csrfToken: browser.csrfToken,
        apps,
        describe: (name) => descriptions.get(name) ?? name,
        ...(revoked ? { revoked: { name: revoked.name, host: documentHost(revoked) } } : {}),
      }),
    );
  });

  app.post<{ Params: { clientId: string } }>(
    ENDPOINTS.connectedAppRevocation.path,
    async function revokeApp(request, reply) {
      if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token')))
        return forbiddenForm(ui, reply);
      const browser = await ui.browsers.load(request, reply);
      if (browser.user === undefined) return reply.redirect(`${base}/sign-in?next=/account/apps`, 303);
      const { clientId } = request.params;
      const revoked = await ui.engine.connectedApps.revoke(browser.user.id, clientId, request.ip);
      if (revoked > 0) reply.setCookie(NOTICE_COOKIE, clientId, { ...NOTICE_OPTIONS, maxAge: 60 });
      return reply.redirect(`${base}/account/apps`, 303);
    },
  );
}
