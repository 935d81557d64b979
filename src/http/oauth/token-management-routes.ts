import type { FastifyInstance } from 'fastify';
import type { ClientStore } from '../../core/ports.js';
import type { TokenServices } from '../../core/token-services.js';
import { registerIntrospectRoute } from './introspect-route.js';
import { registerRevokeRoute } from './revoke-route.js';

/** POST /introspect and POST /revoke. */
export function registerTokenManagementRoutes(
  app: FastifyInstance,
  clients: ClientStore,
  services: TokenServices,
): void {
  registerIntrospectRoute(app, clients, services.introspector);
  registerRevokeRoute(app, clients, services.revoker);
}

/** Their RFC 8414 metadata members. */
export function tokenManagementEndpoints(issuer: string): Record<string, string> {
  return {
    introspection_endpoint: `${issuer}/introspect`,
    revocation_endpoint: `${issuer}/revoke`,
  };
}
