import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import { ENDPOINTS, endpointUrl } from '../../../config/endpoints.js';
import { authRequirementOf } from './authentication.js';

const apiDescription = (issuer: string) => `The REST API of Gatehouse, version 1.

**Authentication.** Every operation needs an OAuth 2.0 access token from this server, sent as
\`Authorization: Bearer <token>\` (RFC 6750; a form-body \`access_token\` works on routes without a JSON body).
A DPoP-bound token (\`token_type\` \`DPoP\`, RFC 9449) is sent as \`Authorization: DPoP <token>\` with a \`DPoP\`
proof header for the request (\`htm\`, \`htu\` the operation's URL under ${issuer}, \`ath\`); as a Bearer token it is refused.
With nonces required, a 401 \`use_dpop_nonce\` carries the nonce to use in \`DPoP-Nonce\`.
The management operations need the scope \`admin\`: a client's own (client_credentials), or a user's token while
that user is an administrator (\`admin\` true on /v1/users; \`gatehouse users update U --admin\`); any other
user's token is refused 403 \`insufficient_scope\`. \`GET /v1/users/me\` needs \`profile\` and a token issued for a user.
An operator gets an admin token with a client made on the command line:

    gatehouse clients create --name admin --scopes admin --json
    curl -u "$CLIENT_ID:$CLIENT_SECRET" -d grant_type=client_credentials ${endpointUrl(issuer, ENDPOINTS.token)}

**Discovery.** This API is the protected resource \`${endpointUrl(issuer, ENDPOINTS.managementApi)}\` (RFC 9728): its metadata,
at ${endpointUrl(issuer, ENDPOINTS.managementApiMetadata)}, names this server, the scope \`admin\` and the
DPoP algorithms, and every 401 names it in \`WWW-Authenticate\` (\`resource_metadata\`). A token request may name
the API with \`resource=${endpointUrl(issuer, ENDPOINTS.managementApi)}\` (RFC 8707): the token is the one the issuer gets.

**Status codes.** 200 for GET, 201 for POST, PUT and PATCH (POST adds \`Location\`), 204 for DELETE,
400 for a bad request (nothing was changed), 401 without a valid token, 403 when its scope is not enough,
404 for a missing record (nothing was done), 405 for a method the path does not serve (with \`Allow\`),
409 for a conflict, 413 for a body over the size limit, 415 for a body that is not JSON, 500 for a server fault.

**Errors** are \`application/problem+json\` (RFC 9457): \`type\`, \`title\`, \`status\`, \`detail\`, and \`field\`
naming the request field at fault. Token problems also carry RFC 6750's \`error\` and a \`WWW-Authenticate\` header.

**Conventions.** Plural lower-case nouns, hyphenated words, no format suffixes: the representation is chosen
with \`Accept\` and \`Content-Type\`. Unknown fields are refused. Lists take \`limit\` and \`offset\`.`;

/** @fastify/swagger options: the OpenAPI 3.1 document is generated from the /v1 route schemas. */
export function openApiOptions(options: {
  issuer: string;
  basePath: string;
  productName: string;
}): FastifyDynamicSwaggerOptions {
  const { issuer, basePath } = options;
  // Route URLs already carry the base path; the server URL is the issuer without it.
  const server = basePath !== '' && issuer.endsWith(basePath) ? issuer.slice(0, -basePath.length) : issuer;
  const scopes = {
    admin: 'Manage Gatehouse: clients, users, grants, scopes, resources, keys and identity providers',
    profile: 'Read the signed-in user’s own record',
  };
  return {
    openapi: {
      openapi: '3.1.0',
      info: { title: `${options.productName} REST API`, version: '1', description: apiDescription(issuer) },
      servers: [{ url: server }],
      tags: [
        { name: 'users', description: 'Resource owners; `/v1/users/me` is the token’s own user' },
        { name: 'clients', description: 'Registered OAuth clients' },
        {
          name: 'identity-providers',
          description:
            'Upstream identity providers people may sign in through (“Continue with NAME”); users’ links to them are under /v1/users/{id}/identity-links',
        },
        {
          name: 'initial-access-tokens',
          description:
            'RFC 7591 §3 initial access tokens: what lets clients register themselves at /register when GATEHOUSE_DYNAMIC_REGISTRATION is token',
        },
        { name: 'scopes', description: 'The scope registry and the descriptions the consent page shows' },
        {
          name: 'resources',
          description:
            'Resource servers a `resource` parameter may name (RFC 8707); the `aud` of their tokens',
        },
        {
          name: 'signing-keys',
          description: 'Keys that sign access tokens and ID tokens, published at /jwks',
        },
        {
          name: 'audit-events',
          description: 'Who changed what, when and from where, and every sign-in (decision 41)',
        },
        {
          name: 'statistics',
          description:
            'The last hour’s figures of every process and the state of the deployment (decision 43)',
        },
      ],
      components: {
        securitySchemes: {
          oauth2: {
            type: 'oauth2',
            description:
              'Access tokens from this server, presented as Bearer tokens (RFC 6750), or DPoP-bound tokens with the DPoP scheme and a proof (RFC 9449 §7).',
            flows: {
              clientCredentials: { tokenUrl: endpointUrl(issuer, ENDPOINTS.token), scopes },
              authorizationCode: {
                authorizationUrl: endpointUrl(issuer, ENDPOINTS.authorization),
                tokenUrl: endpointUrl(issuer, ENDPOINTS.token),
                scopes,
              },
            },
          },
        },
      },
    },
    // Each operation states the scopes its preValidation hook demands.
    transform: ({ schema, url, route }) => {
      const auth = authRequirementOf(route.preValidation);
      const withSecurity = auth === undefined ? schema : { ...schema, security: [{ oauth2: auth.scopes }] };
      return { schema: withSecurity, url };
    },
  };
}

const RESPONSE_DESCRIPTIONS: Record<string, string> = {
  '200': 'OK',
  '201': 'Created or changed; the resource as it now is',
  '204': 'Done; no body',
  '4xx': 'Problem details (RFC 9457); the status code says which problem',
};

type Json = Record<string, unknown>;

/**
 * Touches up what @fastify/swagger generates: real response descriptions, no body on 204, and
 * errors as application/problem+json, which is what /v1 sends.
 */
export function finishDocument(document: Json): Json {
  const copy = structuredClone(document);
  for (const item of Object.values((copy.paths ?? {}) as Record<string, Json>)) {
    for (const operation of Object.values(item) as Json[]) {
      const responses = (operation.responses ?? {}) as Record<string, Json>;
      for (const [status, response] of Object.entries(responses)) {
        if (response.description === 'Default Response' && RESPONSE_DESCRIPTIONS[status] !== undefined) {
          response.description = RESPONSE_DESCRIPTIONS[status];
        }
        if (status === '204') delete response.content;
        const content = response.content as Record<string, unknown> | undefined;
        if (status.startsWith('4') && content?.['application/json'] !== undefined) {
          response.content = { 'application/problem+json': content['application/json'] };
        }
      }
    }
  }
  return copy;
}
