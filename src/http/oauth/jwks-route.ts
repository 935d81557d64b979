import type { FastifyInstance } from 'fastify';
import type { KeyRing } from '../../core/keys/key-ring.js';
import { ENDPOINTS } from '../../config/endpoints.js';

/** GET /jwks: the active and recently retired public signing keys (RFC 7517 JWK Set). */
export function registerJwksRoute(app: FastifyInstance, keyRing: KeyRing): void {
  app.get(ENDPOINTS.jwks.path, async function jwks(_request, reply) {
    // Short cache: resource servers refetch on an unknown kid anyway, so a rotation is seen quickly.
    reply.header('cache-control', 'public, max-age=300');
    reply.type('application/json');
    return keyRing.publicJwks();
  });
}
