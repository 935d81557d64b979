import type { FastifyInstance } from 'fastify';
import { ENDPOINTS } from '../../../config/endpoints.js';
import { negotiate } from '../../content-negotiation.js';
import { homePage } from '../pages/home-page.js';
import { frameFor, sendPage, type UiContext } from '../ui-context.js';

const HTML_TYPE = 'text/html';
const JSON_TYPE = 'application/json';

/**
 * GET / (under the base path): a small page for a person who opens the issuer in a browser. Every other
 * client (no Accept, `*\/*`, application/json) keeps the JSON 404 of any unknown path: OAuth clients
 * find the endpoints in the metadata document (RFC 8414 §3), not here.
 */
export function registerHomeRoutes(app: FastifyInstance, ui: UiContext): void {
  // Under a base path, /base and /base/ both reach this route (Fastify's prefixTrailingSlash 'both').
  app.get(ENDPOINTS.home.path, async function home(request, reply) {
    reply.header('vary', 'accept');
    if (negotiate(request.headers.accept, [JSON_TYPE, HTML_TYPE]) !== HTML_TYPE) {
      return reply.code(404).send({ error: 'not_found', error_description: 'no such endpoint' });
    }
    const browser = await ui.browsers.load(request, reply);
    return sendPage(reply, 200, homePage(frameFor(ui, browser)));
  });
}
