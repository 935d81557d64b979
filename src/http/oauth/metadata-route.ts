import type { FastifyInstance } from 'fastify';
import { RESPONSE_MODES, RESPONSE_TYPES } from '../../core/authorize/response.js';
import { CLIENT_ASSERTION_ALGORITHMS } from '../../core/clients/client-keys.js';
import { NEVER_REGISTRABLE_SCOPES } from '../../core/clients/dynamic-registration.js';
import { CLIENT_AUTH_METHODS, type Scope } from '../../core/model.js';
import { SUPPORTED_CLAIMS } from '../../core/scopes/claims.js';
import { ACR_VALUES } from '../../core/sign-in/assurance.js';
import { ID_TOKEN_SIGNING_ALGORITHMS } from '../../core/tokens/id-token.js';
import { ENDPOINTS, metadataEndpoints, type EndpointSettings } from '../../config/endpoints.js';

export interface MetadataOptions {
  issuer: string;
  /** What turns endpoints on and off: the documents name those that are on (endpoints.ts). */
  endpointSettings: EndpointSettings;
  grantTypes: string[];
  allowPlainPkce: boolean;
  /** Other RFC 8414 members other parts of the server add (their endpoints' auth methods, …). */
  extraMembers?: Record<string, string | boolean | readonly string[]>;
  /** RFC 9126 §5: /authorize takes only pushed requests, from every client. */
  requirePushedAuthorizationRequests?: boolean;
}

/** The RFC 8414 §2 members; OpenID Connect Discovery §3 adds its own to these. */
function authorizationServerMetadata(options: MetadataOptions, scopeNames: string[]) {
  return {
    issuer: options.issuer,
    // token_endpoint, jwks_uri, authorization_endpoint, …: the endpoint table's, in its order.
    ...metadataEndpoints(options.issuer, options.endpointSettings, 'both'),
    scopes_supported: scopeNames,
    // The response types and modes /authorize answers (core/authorize/response.ts).
    response_types_supported: RESPONSE_TYPES,
    response_modes_supported: RESPONSE_MODES,
    grant_types_supported: options.grantTypes,
    // RFC 8414 §2; private_key_jwt is RFC 7523 §2.2, signed with one of these algorithms.
    token_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
    token_endpoint_auth_signing_alg_values_supported: [...CLIENT_ASSERTION_ALGORITHMS],
    ...options.extraMembers,
    code_challenge_methods_supported: options.allowPlainPkce ? ['S256', 'plain'] : ['S256'],
    // RFC 9207 §3: every authorization response carries iss.
    authorization_response_iss_parameter_supported: true,
    token_types_supported: ['bearer', 'mac', 'DPoP'],
    mac_algorithms_supported: ['hmac-sha-256', 'hmac-sha-1'],
    // RFC 9126 §5; a client may still be held to it on its own (its require_pushed_authorization_requests).
    require_pushed_authorization_requests: options.requirePushedAuthorizationRequests ?? false,
    // Discovery §3 (registered for RFC 8414 too): the acr values sign-ins are reported with, weakest
    // first; acr_values and max_age are honoured on OAuth 2.0 requests as well (RFC 9470 §4; decision 36).
    acr_values_supported: [...ACR_VALUES],
  };
}

/**
 * GET /.well-known/oauth-authorization-server (RFC 8414 §3) and GET /.well-known/openid-configuration
 * (OpenID Connect Discovery §4): one issuer, the same endpoints and capabilities in both.
 */
export function registerMetadataRoute(
  app: FastifyInstance,
  scopes: { list(): Promise<Scope[]> },
  options: MetadataOptions,
): void {
  // RFC 8414 §2 lets a server leave supported scopes out of scopes_supported: `admin` (the /v1
  // management API) is held only by clients an operator registers by hand and is never open to a
  // client that registers itself (docs/decisions.md, decision 20), so it is not advertised; every other
  // scope is one a client may ask for (docs/api.md).
  const scopeNames = async () =>
    (await scopes.list())
      .map((scope) => scope.name)
      .filter((name) => !NEVER_REGISTRABLE_SCOPES.includes(name));
  app.get(ENDPOINTS.authorizationServerMetadata.path, async function metadata(_request, reply) {
    reply.header('cache-control', 'public, max-age=60');
    return authorizationServerMetadata(options, await scopeNames());
  });
  app.get(ENDPOINTS.openIdConfiguration.path, async function openIdConfiguration(_request, reply) {
    reply.header('cache-control', 'public, max-age=60');
    return {
      ...authorizationServerMetadata(options, await scopeNames()),
      // userinfo_endpoint (Discovery §3), end_session_endpoint (RP-Initiated Logout §2.1).
      ...metadataEndpoints(options.issuer, options.endpointSettings, 'openid-only'),
      // Core §8: the user id is the subject for every client.
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: [...ID_TOKEN_SIGNING_ALGORITHMS],
      claims_supported: SUPPORTED_CLAIMS,
      // Discovery §3 defaults request_uri_parameter_supported to true: said explicitly, as the others.
      // The claims parameter is read for its id_token.acr alone (Core §5.5.1.1), so it is not
      // announced: announcing it would promise every claim asked for by it (decision 36).
      claims_parameter_supported: false,
      request_parameter_supported: false,
      request_uri_parameter_supported: false,
    };
  });
}
