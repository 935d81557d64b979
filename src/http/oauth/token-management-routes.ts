import type { FastifyInstance } from 'fastify';
import type { Engine } from '../../core/engine.js';
import { registerIntrospectRoute } from './introspect-route.js';
import { registerRevokeRoute } from './revoke-route.js';

/** POST /introspect and POST /revoke. */
export function registerTokenManagementRoutes(
  app: FastifyInstance,
  engine: Pick<Engine, 'authenticateClient' | 'tokens'>,
): void {
  registerIntrospectRoute(app, engine);
  registerRevokeRoute(app, engine);
}

/** Their RFC 8414 metadata members. */
export function tokenManagementEndpoints(issuer: string): Record<string, string> {
  return {
    introspection_endpoint: `${issuer}/introspect`,
    revocation_endpoint: `${issuer}/revoke`,
  };
}
