import type { FastifyInstance } from 'fastify';
import { ENDPOINTS } from '../../../config/endpoints.js';
import { sendMessage, type UiContext } from '../ui-context.js';

/**
 * INTEGRATION PLACEHOLDER (issue 29, h29-admin): the upstream sign-in's start and callback are
 * declared in the endpoint table, and a server refuses to start with a declared route unserved. The
 * broker's routes (issue 29 point 2) serve them; this file and its one registration in ../plugin.ts
 * are to be deleted when they are merged. Until then both answer that no upstream sign-in is served.
 */
export function registerUpstreamPlaceholderRoutes(app: FastifyInstance, ui: UiContext): void {
  for (const endpoint of [ENDPOINTS.signInUpstream, ENDPOINTS.signInCallback]) {
    app.get(endpoint.path, async function upstreamSignInNotServed(_request, reply) {
      return sendMessage(
        ui,
        reply,
        404,
        'Not available',
        'Signing in through another identity provider is not available on this server.',
      );
    });
  }
}
