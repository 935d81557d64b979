import type { FastifyInstance } from 'fastify';
import { ProtectedResource } from 'gatehouse-oauth-resource-server/protected-resource';
import type { GatehouseConfig } from '../../../config.js';
import { ENDPOINTS, endpointUrl, routePath } from '../../../config/endpoints.js';
import { ADMIN_SCOPE } from '../../../core/scopes/admin-scope.js';
import { DPOP_SIGNING_ALGORITHMS } from '../../../core/tokens/dpop.js';

/**
 * /v1 as an RFC 9728 protected resource (docs/decisions.md, decision 47): its identifier is
 * `<issuer>/v1`, its one authorization server the issuer. The document is the resource-server
 * library's, so that /v1 and a service built on the library publish the same members the same way.
 */
export function managementApiResource(
  config: Pick<GatehouseConfig, 'issuer' | 'productName'>,
): ProtectedResource {
  const resource = endpointUrl(config.issuer, ENDPOINTS.managementApi);
  return new ProtectedResource({
    resource,
    authorizationServers: [config.issuer],
    // The scope of the management operations; `profile` (GET /v1/users/me) is any OpenID client's.
    scopesSupported: [ADMIN_SCOPE],
    // The header works on every route; a form body only where there is no JSON body, the query only
    // when an operator allows it (RFC 6750 §5.3): a client is pointed at the one that always works.
    bearerMethodsSupported: ['header'],
    resourceName: `${config.productName} management API`,
    // GET /v1/openapi, public: the OpenAPI document (docs/api.md).
    resourceDocumentation: `${resource}/openapi`,
  });
}

/** Where /v1's metadata is (RFC 9728 §3.1): what its challenges name as `resource_metadata` (§5.1). */
export function managementApiMetadataUrl(config: Pick<GatehouseConfig, 'issuer'>): string {
  return endpointUrl(config.issuer, ENDPOINTS.managementApiMetadata);
}

/**
 * GET /.well-known/oauth-protected-resource<base path>/v1 (RFC 9728 §3.1): at the origin's root, outside
 * the base path the other routes are mounted under (decision 47). Registered on the root instance.
 */
export function registerManagementApiMetadataRoute(
  app: FastifyInstance,
  config: Pick<GatehouseConfig, 'issuer' | 'productName' | 'basePath'>,
): void {
  const resource = managementApiResource(config);
  const document = {
    ...resource.metadata(),
    // RFC 9728 §2: /v1 takes DPoP proofs in the algorithms the token endpoint does (RFC 9449 §5.1).
    dpop_signing_alg_values_supported: DPOP_SIGNING_ALGORITHMS,
  };
  app.get(
    routePath(ENDPOINTS.managementApiMetadata, config.basePath),
    async function managementApiMetadata(_request, reply) {
      // As the authorization server's metadata (RFC 8414 §3.2): the same for everyone, for a minute.
      reply.header('cache-control', 'public, max-age=60');
      return document;
    },
  );
}
