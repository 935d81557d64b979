import type { FastifyInstance } from 'fastify';
import { ENDPOINTS, endpointUrl } from '../../../config/endpoints.js';
import type { Client } from '../../../core/model.js';
import { playgroundCallbackPage, playgroundClient, playgroundPage } from '../pages/playground-page.js';
import { frameFor, sendPage, type UiContext } from '../ui-context.js';

const MAX_LISTED_CLIENTS = 200;
const PAGE_SIZE = 500;

/**
 * The playground's callback URL: under the issuer, and only there. Never one built from the request's
 * Host header, which the caller chooses: a client registered with a callback at any host would be
 * listed to whoever sends that host.
 */
function callbackUrl(ui: UiContext): string {
  return endpointUrl(ui.config.issuer, ENDPOINTS.playgroundCallback);
}

/**
 * The clients a signed-in user may try in the playground: only those an operator registered for it,
 * with the playground's callback as a redirect URI. Every other client stays out of the page, so it
 * does not show the registry (ids, redirect URIs, scopes) to anyone who can sign in. A client that
 * registered itself (RFC 7591) is never one, whatever its redirect URIs: the search reads the
 * operator's clients only, by the store's index on how clients came (clients_by_registration), never
 * the self-registered ones, which anyone may add to.
 */
async function playgroundClients(ui: UiContext, callback: string): Promise<Client[]> {
  const listed: Client[] = [];
  for (let offset = 0; listed.length < MAX_LISTED_CLIENTS; offset += PAGE_SIZE) {
    const { items, total } = await ui.engine.clients.list({
      registration: 'operator',
      limit: PAGE_SIZE,
      offset,
    });
    for (const client of items) {
      if (client.redirectUris.includes(callback)) listed.push(client);
    }
    if (items.length === 0 || offset + PAGE_SIZE >= total) break;
  }
  return listed.slice(0, MAX_LISTED_CLIENTS);
}

/** GET /playground (signed-in developers) and GET /playground/callback (the example client page). */
export function registerPlaygroundRoutes(app: FastifyInstance, ui: UiContext): void {
  app.get(ENDPOINTS.playground.path, async function playground(request, reply) {
    const browser = await ui.browsers.load(request, reply);
    // Signed in only: the page lists the clients registered for the playground.
    if (browser.user === undefined)
      return reply.redirect(`${ui.config.basePath}/sign-in?next=/playground`, 303);
    const clients = await playgroundClients(ui, callbackUrl(ui));
    return sendPage(reply, 200, playgroundPage(frameFor(ui, browser), clients.map(playgroundClient)));
  });

  app.get(ENDPOINTS.playgroundCallback.path, async function playgroundCallback(request, reply) {
    const browser = await ui.browsers.load(request, reply);
    return sendPage(reply, 200, playgroundCallbackPage(frameFor(ui, browser)));
  });
}
