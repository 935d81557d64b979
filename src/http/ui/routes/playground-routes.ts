import type { FastifyInstance } from 'fastify';
import { playgroundCallbackPage, playgroundClient, playgroundPage } from '../pages/playground-page.js';
import { frameFor, sendPage, type UiContext } from '../ui-context.js';

const MAX_LISTED_CLIENTS = 200;

/** GET /playground (signed-in developers) and GET /playground/callback (the example client page). */
export function registerPlaygroundRoutes(app: FastifyInstance, ui: UiContext): void {
  app.get('/playground', async function playground(request, reply) {
    const browser = await ui.browsers.load(request, reply);
    // Signed in only: the page lists the registered clients.
    if (browser.user === undefined)
      return reply.redirect(`${ui.config.basePath}/sign-in?next=/playground`, 303);
    const { items } = await ui.storage.clients.list({ limit: MAX_LISTED_CLIENTS, offset: 0 });
    return sendPage(reply, 200, playgroundPage(frameFor(ui, browser), items.map(playgroundClient)));
  });

  app.get('/playground/callback', async function playgroundCallback(request, reply) {
    const browser = await ui.browsers.load(request, reply);
    return sendPage(reply, 200, playgroundCallbackPage(frameFor(ui, browser)));
  });
}
