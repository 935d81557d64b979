import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Client } from '../../../core/model.js';
import { playgroundCallbackPage, playgroundClient, playgroundPage } from '../pages/playground-page.js';
import { frameFor, sendPage, type UiContext } from '../ui-context.js';

const MAX_LISTED_CLIENTS = 200;
const PAGE_SIZE = 500;

/**
 * The playground's callback URLs: under the issuer, and under the origin the page was opened at (its
 * script sends the browser back to that one).
 */
function callbackUrls(ui: UiContext, request: FastifyRequest): Set<string> {
  const path = `${ui.config.basePath}/playground/callback`;
  return new Set([`${ui.config.issuer}/playground/callback`, `${request.protocol}://${request.host}${path}`]);
}

/**
 * The clients a signed-in user may try in the playground: only those an operator registered for it,
 * with the playground's callback as a redirect URI. Every other client stays out of the page, so it
 * does not show the registry (ids, redirect URIs, scopes) to anyone who can sign in.
 */
async function playgroundClients(ui: UiContext, callbacks: Set<string>): Promise<Client[]> {
  const listed: Client[] = [];
  for (let offset = 0; listed.length < MAX_LISTED_CLIENTS; offset += PAGE_SIZE) {
    const { items, total } = await ui.engine.clients.list({ limit: PAGE_SIZE, offset });
    for (const client of items) {
      if (client.redirectUris.some((uri) => callbacks.has(uri))) listed.push(client);
    }
    if (items.length === 0 || offset + PAGE_SIZE >= total) break;
  }
  return listed.slice(0, MAX_LISTED_CLIENTS);
}

/** GET /playground (signed-in developers) and GET /playground/callback (the example client page). */
export function registerPlaygroundRoutes(app: FastifyInstance, ui: UiContext): void {
  app.get('/playground', async function playground(request, reply) {
    const browser = await ui.browsers.load(request, reply);
    // Signed in only: the page lists the clients registered for the playground.
    if (browser.user === undefined)
      return reply.redirect(`${ui.config.basePath}/sign-in?next=/playground`, 303);
    const clients = await playgroundClients(ui, callbackUrls(ui, request));
    return sendPage(reply, 200, playgroundPage(frameFor(ui, browser), clients.map(playgroundClient)));
  });

  app.get('/playground/callback', async function playgroundCallback(request, reply) {
    const browser = await ui.browsers.load(request, reply);
    return sendPage(reply, 200, playgroundCallbackPage(frameFor(ui, browser)));
  });
}
