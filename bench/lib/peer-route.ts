import formBody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';

/**
 * The bare Fastify route every figure is compared with: POST /token answering a fixed token-shaped
 * JSON `body`, behind the form parser Gatehouse uses, so the peer parses the same request body. The
 * HTTPS peer (peer-server.ts) and the in-process one (route-cost.ts) are this one route.
 */
export async function registerPeerRoute(app: FastifyInstance, body: string): Promise<void> {
  await app.register(formBody);
  app.post('/token', async function token(_request, reply) {
    reply.header('content-type', 'application/json;charset=UTF-8');
    reply.header('cache-control', 'no-store');
    reply.header('pragma', 'no-cache');
    return body;
  });
}
