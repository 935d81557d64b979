import type { FastifyInstance } from 'fastify';
import { listConnectedApps, revokeConnectedApp } from '../../../core/authorize/connected-apps.js';
import { appsPage } from '../pages/apps-page.js';
import { forbiddenForm, field, frameFor, sendPage, type UiContext } from '../ui-context.js';

/** GET /account/apps (connected apps) and POST /account/apps/:clientId/revoke. */
export function registerAccountRoutes(app: FastifyInstance, ui: UiContext): void {
  const base = ui.config.basePath;

  app.get('/account/apps', async function connectedApps(request, reply) {
    const browser = await ui.browsers.load(request, reply);
    if (browser.user === undefined) return reply.redirect(`${base}/sign-in?next=/account/apps`, 303);
    const [apps, scopes] = await Promise.all([
      listConnectedApps(ui.storage, ui.clock, browser.user.id),
      ui.storage.scopes.list(),
    ]);
    const descriptions = new Map(scopes.map((s) => [s.name, s.description]));
    const revokedId = (request.query as Record<string, unknown>).revoked;
    const revoked = typeof revokedId === 'string' ? await ui.storage.clients.get(revokedId) : undefined;
    return sendPage(
      reply,
      200,
      appsPage(frameFor(ui, browser), {
        csrfToken: browser.csrfToken,
        apps,
        describe: (name) => descriptions.get(name) ?? name,
        ...(revoked ? { revoked: revoked.name } : {}),
      }),
    );
  });

  app.post<{ Params: { clientId: string } }>(
    '/account/apps/:clientId/revoke',
    async function revokeApp(request, reply) {
      if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token')))
        return forbiddenForm(ui, reply);
      const browser = await ui.browsers.load(request, reply);
      if (browser.user === undefined) return reply.redirect(`${base}/sign-in?next=/account/apps`, 303);
      const { clientId } = request.params;
      await revokeConnectedApp(ui.storage, ui.clock, browser.user.id, clientId);
      return reply.redirect(`${base}/account/apps?revoked=${encodeURIComponent(clientId)}`, 303);
    },
  );
}
