import type { FastifyInstance } from 'fastify';
import { CLIENT_ASSERTION_ALGORITHMS } from '../../core/clients/client-keys.js';
import type { Engine } from '../../core/engine.js';
import { CLIENT_AUTH_METHODS } from '../../core/model.js';
import { ENDPOINTS, endpointUrl } from '../../config/endpoints.js';
import { registerIntrospectRoute } from './introspect-route.js';
import { registerRevokeRoute } from './revoke-route.js';

/** POST /introspect and POST /revoke, under `issuer` (their URLs, for client assertions' audience). */
export function registerTokenManagementRoutes(
  app: FastifyInstance,
  engine: Pick<Engine, 'authenticateClient' | 'tokens'>,
  issuer: string,
): void {
  registerIntrospectRoute(app, engine, endpointUrl(issuer, ENDPOINTS.introspection));
  registerRevokeRoute(app, engine, endpointUrl(issuer, ENDPOINTS.revocation));
}

/**
 * How clients authenticate there (RFC 8414 §2): as at the token endpoint, except that introspection
 * refuses public clients (RFC 7662 §2.1, introspect-route.ts).
 */
export function tokenManagementAuthMetadata() {
  const algorithms = [...CLIENT_ASSERTION_ALGORITHMS];
  return {
    introspection_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS.filter((method) => method !== 'none'),
    introspection_endpoint_auth_signing_alg_values_supported: algorithms,
    revocation_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
    revocation_endpoint_auth_signing_alg_values_supported: algorithms,
  };
}
