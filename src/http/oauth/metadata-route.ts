import type { FastifyInstance } from 'fastify';
import type { ScopeStore } from '../../core/ports.js';

export interface MetadataOptions {
  issuer: string;
  grantTypes: string[];
  allowPlainPkce: boolean;
  /** Endpoints other parts of the server add, keyed by their RFC 8414 member name. */
  extraEndpoints?: Record<string, string>;
  responseTypes?: string[];
}

/** GET /.well-known/oauth-authorization-server (RFC 8414 §3). */
export function registerMetadataRoute(
  app: FastifyInstance,
  scopes: ScopeStore,
  options: MetadataOptions,
): void {
  app.get('/.well-known/oauth-authorization-server', async function metadata(_request, reply) {
    const scopeNames = (await scopes.list()).map((scope) => scope.name);
    reply.header('cache-control', 'public, max-age=60');
    return {
      issuer: options.issuer,
      token_endpoint: `${options.issuer}/token`,
      jwks_uri: `${options.issuer}/jwks`,
      ...options.extraEndpoints,
      scopes_supported: scopeNames,
      response_types_supported: options.responseTypes ?? [],
      grant_types_supported: options.grantTypes,
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      code_challenge_methods_supported: options.allowPlainPkce ? ['S256', 'plain'] : ['S256'],
      token_types_supported: ['bearer', 'mac'],
      mac_algorithms_supported: ['hmac-sha-256', 'hmac-sha-1'],
    };
  });
}
