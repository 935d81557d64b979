import swagger from '@fastify/swagger';
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest, HTTPMethods } from 'fastify';
import type { GatehouseConfig } from '../../../config.js';
import type { Engine } from '../../../core/engine.js';
import type { Statistics } from '../../../core/ops/statistics.js';
import { macOrigin, requestHasBody } from 'gatehouse-oauth-resource-server/mac';
import { MacRequestVerifier } from './mac-request-verifier.js';
import { authenticator, type ApiAuthOptions } from './authentication.js';
import { Problem, problemErrorHandler, sendProblem } from './problem.js';
import type { ApiContext } from './context.js';
import { typeboxValidatorCompiler } from './schema-validation.js';
import { registerAuditEventRoutes } from './routes/audit-events.js';
import { registerStatisticsRoutes } from './routes/statistics.js';
import { registerClientRoutes } from './routes/clients.js';
import { registerIdentityProviderRoutes } from './routes/identity-providers.js';
import { registerInitialAccessTokenRoutes } from './routes/initial-access-tokens.js';
import { registerMeRoutes } from './routes/me.js';
import { openApiOptions } from './openapi-document.js';
import { registerOpenApiRoute } from './routes/openapi.js';
import { managementApiMetadataUrl } from './resource-metadata.js';
import { registerResourceRoutes } from './routes/resources.js';
import { registerScopeRoutes } from './routes/scopes.js';
import { registerSigningKeyRoutes } from './routes/signing-keys.js';
import { registerUserRoutes } from './routes/users.js';

export interface ApiV1Dependencies {
  config: GatehouseConfig;
  engine: Engine;
  /** GET /v1/statistics (decision 43). */
  statistics: Statistics;
}

const rawBodies = new WeakMap<FastifyRequest, Buffer>();

/** The request body exactly as received (MAC `bodyhash`, draft-ietf-oauth-v2-http-mac-01 §3.2). */
export function rawBodyOf(request: FastifyRequest): Buffer | undefined {
  return rawBodies.get(request);
}

// Methods a /v1 path can be asked for; any it does not serve is answered 405 with Allow (RFC 9110 §15.5.6).
const KNOWN_METHODS: HTTPMethods[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

function parseForm(text: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null) as Record<string, string>;
  for (const [key, value] of new URLSearchParams(text)) {
    const existing = out[key];
    out[key] = existing === undefined ? value : ([] as string[]).concat(existing, value);
  }
  return out;
}

// Object keys that could reach a prototype if a body were ever merged into another object.
function refuseProtoKeys(key: string, value: unknown): unknown {
  if (key === '__proto__' || key === 'constructor') throw new SyntaxError('forbidden key');
  return value;
}

/**
 * The REST API, version 1 (docs/api.md): JSON in and out, problem+json errors, RFC 6750 token checks.
 * Registered with the prefix `<base path>/v1`; an encapsulated plugin, so its parsers, validator
 * and error handler apply to /v1 only.
 */
export function apiV1(deps: ApiV1Dependencies): FastifyPluginAsync {
  return async function apiV1Plugin(api: FastifyInstance) {
    const routes = new Map<string, Set<string>>();
    api.addHook('onRoute', (route) => {
      const path = route.routePath;
      const methods = routes.get(path) ?? new Set<string>();
      for (const method of [route.method].flat()) methods.add(method);
      routes.set(path, methods);
    });

    // JSON bodies only, plus forms solely to carry access_token (RFC 6750 §2.2); anything else is 415.
    api.removeAllContentTypeParsers();
    api.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
      const raw = body as Buffer;
      rawBodies.set(request, raw);
      if (raw.length === 0) return done(null, undefined);
      try {
        done(null, JSON.parse(raw.toString('utf8'), refuseProtoKeys));
      } catch {
        done(new Problem(400, 'the body is not valid JSON', { field: 'body' }), undefined);
      }
    });
    api.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'buffer' },
      (request, body, done) => {
        rawBodies.set(request, body as Buffer);
        done(null, parseForm((body as Buffer).toString('utf8')));
      },
    );
    api.setValidatorCompiler(typeboxValidatorCompiler);
    // RFC 9728 §5.1: every token refusal names /v1's metadata (decision 47).
    api.setErrorHandler(problemErrorHandler(managementApiMetadataUrl(deps.config)));
    api.setNotFoundHandler(function notFound(_request, reply) {
      return sendProblem(reply, new Problem(404, 'no such resource', { field: 'path' }));
    });
    api.addHook('onSend', async function noStore(_request, reply, payload) {
      if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
      return payload;
    });

    // Registered before the routes, whose schemas it collects into the OpenAPI document.
    await api.register(
      swagger,
      openApiOptions({
        issuer: deps.config.issuer,
        basePath: deps.config.basePath,
        productName: deps.config.productName,
      }),
    );

    const { engine } = deps;
    // The host and port a MAC signature must cover: the issuer's, as clients address this server.
    // Not the request's Host header, which the sender chooses, so that a request signed for another
    // server cannot be presented here under that server's name.
    const macTarget = macOrigin(deps.config.issuer);
    const macRequests = new MacRequestVerifier({
      validator: engine.tokens.validator,
      macTokens: engine.macTokens,
      clock: engine.clock,
    });
    const verifyMac: ApiAuthOptions['verifyMac'] = (request, header) =>
      macRequests.verify(
        header,
        { method: request.method, uri: request.url, ...macTarget },
        // No body at all is the empty body (a GET's bodyhash is the hash of zero bytes).
        rawBodyOf(request) ?? (requestHasBody(request.headers) ? undefined : Buffer.alloc(0)),
      );

    const context: ApiContext = {
      engine,
      issuer: deps.config.issuer,
      requireToken: authenticator({
        validator: engine.tokens.validator,
        allowQuery: deps.config.allowAccessTokenInQuery,
        verifyMac,
        dpop: engine.dpop,
        issuer: deps.config.issuer,
        basePath: deps.config.basePath,
        isAdministrator: async (userId) => (await engine.users.get(userId))?.admin === true,
      }),
    };
    registerMeRoutes(api, context);
    registerClientRoutes(api, context);
    registerUserRoutes(api, context);
    registerIdentityProviderRoutes(api, context);
    registerInitialAccessTokenRoutes(api, context);
    registerScopeRoutes(api, context);
    registerResourceRoutes(api, context);
    registerSigningKeyRoutes(api, context);
    registerAuditEventRoutes(api, context);
    registerStatisticsRoutes(api, context, deps.statistics);
    registerOpenApiRoute(api);

    for (const [path, served] of routes) {
      const allow = [...served].sort().join(', ');
      const others = KNOWN_METHODS.filter((method) => !served.has(method));
      if (others.length === 0) continue;
      api.route({
        method: others,
        url: path,
        schema: { hide: true },
        // onRequest: answered before any body is read, so the method is what the client learns about.
        onRequest: async function methodNotAllowed(request, reply) {
          reply.header('allow', allow);
          return sendProblem(reply, new Problem(405, `${request.method} is not allowed here; use ${allow}`));
        },
        handler: async function unreachable() {
          throw new Error('answered in onRequest');
        },
      });
    }
  };
}
