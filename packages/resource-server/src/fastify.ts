import type {
  FastifyInstance,
  FastifyPluginAsync,
  FastifyRequest,
  preHandlerAsyncHookHandler,
} from 'fastify';
import { requestHasBody } from './mac.js';
import { dpopHeaderValues, isForm, metadataResponse, refusalFor } from './respond.js';
import type { AuthenticationRequirements } from './rfc6750.js';
import {
  ResourceServer,
  type RequestInfo,
  type ResourceServerOptions,
  type VerifiedToken,
} from './resource-server.js';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * A preHandler that admits a request only with a valid token holding every scope given and, with
     * `requirements`, a sign-in that meets them (RFC 9470: `acr` one of a list, `maxAge` in seconds).
     */
    requireToken(
      scopes?: readonly string[],
      requirements?: AuthenticationRequirements,
    ): preHandlerAsyncHookHandler;
  }
  interface FastifyRequest {
    /** The verified token, set by requireToken. */
    accessToken: VerifiedToken | null;
  }
}

export type FastifyResourceServerOptions = ResourceServerOptions | { resourceServer: ResourceServer };

function requestInfo(request: FastifyRequest): RequestInfo {
  const raw = (request as FastifyRequest & { rawBody?: unknown }).rawBody;
  return {
    method: request.method,
    url: request.url,
    host: request.headers.host ?? request.hostname,
    protocol: request.protocol,
    authorization: request.headers.authorization,
    formBody: isForm(request.headers['content-type'])
      ? (request.body as Record<string, unknown> | undefined)
      : undefined,
    query: request.query as Record<string, unknown> | undefined,
    // Set by a raw-body plugin, if the application uses one; needed only for MAC bodyhash.
    rawBody: Buffer.isBuffer(raw) ? raw : typeof raw === 'string' ? Buffer.from(raw) : undefined,
    hasBody: requestHasBody(request.headers),
    dpop: dpopHeaderValues(request.raw.rawHeaders),
  };
}

async function plugin(app: FastifyInstance, options: FastifyResourceServerOptions): Promise<void> {
  const owned = !('resourceServer' in options);
  const server = 'resourceServer' in options ? options.resourceServer : new ResourceServer(options);
  app.decorateRequest('accessToken', null);
  app.decorate(
    'requireToken',
    function requireToken(scopes: readonly string[] = [], requirements: AuthenticationRequirements = {}) {
      return async function checkToken(request, reply) {
        try {
          request.accessToken = await server.authorize(requestInfo(request), scopes, requirements);
          // RFC 9449 §9: the nonce to use next, when the service asks for nonces.
          const nonce = request.accessToken.dpopNonce;
          if (nonce !== undefined) reply.header('dpop-nonce', nonce);
        } catch (error) {
          const refusal = refusalFor(
            error,
            server.realm,
            server.protectedResource?.metadataUrl,
            server.dpopAlgorithms,
          );
          if (refusal === undefined) throw error;
          return reply.code(refusal.status).headers(refusal.headers).send(refusal.body);
        }
      } satisfies preHandlerAsyncHookHandler;
    },
  );
  const resource = server.protectedResource;
  if (resource !== undefined) {
    for (const path of resource.metadataPaths) {
      app.get(path, async function protectedResourceMetadata(_request, reply) {
        const { headers, body } = metadataResponse(resource.metadata());
        return reply.headers(headers).send(body);
      });
    }
  }
  if (owned) app.addHook('onClose', async () => server.close());
}

// Not encapsulated (what fastify-plugin would mark): the decorators serve the registering app.
(plugin as unknown as Record<symbol, boolean>)[Symbol.for('skip-override')] = true;

/**
 * Fastify plugin: `app.register(gatehouseResourceServer, { issuer })`, then per route
 * `{ preHandler: app.requireToken(['read']) }`; the handler finds `request.accessToken`. With the
 * `resource` option it also serves the RFC 9728 metadata at its well-known paths.
 */
export const gatehouseResourceServer: FastifyPluginAsync<FastifyResourceServerOptions> = plugin;
