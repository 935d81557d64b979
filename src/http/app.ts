import formBody from '@fastify/formbody';
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { GatehouseConfig } from '../config.js';
import { DPOP_SIGNING_ALGORITHMS } from '../core/tokens/dpop.js';
import type { Engine } from '../core/engine.js';
import type { Statistics } from '../core/ops/statistics.js';
import type { RateLimitStore } from '../core/ports.js';
import { registerHealthRoutes, type StoreHealth } from './health-routes.js';
import { createMetrics, type GatehouseMetrics } from './metrics.js';
import { installObservability, requestId, type MetricsCollector } from './observability.js';
import { installDrain } from './drain.js';
import { ENDPOINTS, isOn, type EndpointSettings } from '../config/endpoints.js';
import { installRateLimits } from './rate-limit.js';
import { applyServerTimeouts, CONNECTION_CHECK_MS, installParameterLimits } from './request-limits.js';
import { refuseUndeclaredRoutes } from './undeclared-routes.js';
import { registerDeviceAuthorizationRoute } from './oauth/device-authorization-route.js';
import { registerJwksRoute } from './oauth/jwks-route.js';
import { registerMetadataRoute } from './oauth/metadata-route.js';
import { oauthErrorHandler } from './oauth/oauth-errors.js';
import { registerPushedAuthorizationRequestRoute } from './oauth/par-route.js';
import { registerTokenRoute } from './oauth/token-route.js';
import { registerUserInfoRoute } from './oauth/userinfo-route.js';
import { registrationRoutes } from './oauth/registration-routes.js';
import { browserUi } from './ui/plugin.js';
import {
  registerTokenManagementRoutes,
  tokenManagementAuthMetadata,
} from './oauth/token-management-routes.js';
import { apiV1 } from './api/v1/plugin.js';
import { registerManagementApiMetadataRoute } from './api/v1/resource-metadata.js';
import { frameworkErrorHandler } from './api/v1/problem.js';

/** Everything the HTTP application is built from (compose/gatehouse.ts assembles it). */
export interface AppDependencies {
  /** Every operation the routes perform. */
  engine: Engine;
  config: GatehouseConfig;
  /** What /readyz asks of the store. */
  health: StoreHealth;
  /** The shared counters the rate limits merge into (docs/decisions.md, decision 14). */
  rateLimitCounters: RateLimitStore;
  /** Purpose-bound key for the pages' cookies and CSRF tokens (compose/gatehouse.ts derives it). */
  cookieSecret: Buffer;
  /** TLS key and certificate; absent only behind a trusted TLS-terminating proxy. */
  tls?: { key: string; cert: string };
  logger?: FastifyServerOptions['logger'];
  /** Prometheus metrics; a private registry when absent. */
  metrics?: GatehouseMetrics;
  /** The dashboard's figures and the state of things, for GET /v1/statistics (decision 43). */
  statistics: Statistics;
  /** What GET /metrics serves (cluster-wide under --workers); this process's registry when absent. */
  collectMetrics?: MetricsCollector;
}

// Every request and response header that can carry a credential is kept out of the logs.
const REDACTED_PATHS = [
  'req.headers.authorization',
  // A DPoP proof is single use, but it is still a signed credential for one request (RFC 9449 §11.1).
  'req.headers.dpop',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'res.headers.location',
];

/** Sent on every response, whatever answers it. */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  // HTTPS always (docs/decisions.md, decision 6), also behind a proxy.
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

export function loggerOptions(level: string): FastifyServerOptions['logger'] {
  return { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } };
}

/** Builds the Fastify application; the caller listens. */
export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const { config, engine } = deps;
  // Which endpoints are on is the engine's rule (registration's policy), asked of it (decision 32).
  const endpointSettings: EndpointSettings = { dynamicRegistration: engine.registration.policy };
  const app = Fastify({
    // Request line plus headers beyond maxHeaderBytes get 431 from node itself (docs/limits.md).
    ...(deps.tls
      ? {
          https: {
            key: deps.tls.key,
            cert: deps.tls.cert,
            maxHeaderSize: config.maxHeaderBytes,
            connectionsCheckingInterval: CONNECTION_CHECK_MS,
          },
        }
      : {
          http: { maxHeaderSize: config.maxHeaderBytes, connectionsCheckingInterval: CONNECTION_CHECK_MS },
        }),
    requestTimeout: config.requestTimeoutSeconds * 1000,
    logger: deps.logger ?? loggerOptions(config.logLevel),
    bodyLimit: config.bodyLimitBytes,
    trustProxy: config.trustProxy,
    // One structured line per request is written by the onResponse hook below instead.
    logController: new LogController({ disableRequestLogging: true }),
    // Every log line carries the request id: the caller's X-Request-Id when well-formed, else a UUID.
    requestIdHeader: false,
    genReqId: requestId,
    return503OnClosing: true,
    // A path segment may be a whole resource URI (/v1/resources/{uri}, up to 2000 characters decoded);
    // longer ones fall through to 404. Other segments are bounded by their route's schema.
    routerOptions: { maxParamLength: 2048 },
    frameworkErrors: frameworkErrorHandler(`${config.basePath}${ENDPOINTS.managementApi.path}`),
  }) as unknown as FastifyInstance;
  // First, so that it sees every route: one the endpoint table does not decide a limit for stops the
  // start (docs/decisions.md, decision 31).
  refuseUndeclaredRoutes(app, { basePath: config.basePath, settings: endpointSettings });
  applyServerTimeouts(app.server, config.requestTimeoutSeconds, config.maxConnections);
  installDrain(app);

  const metrics = deps.metrics ?? createMetrics();
  installObservability(app, {
    metrics,
    collect:
      deps.collectMetrics ??
      (async () => ({ contentType: metrics.registry.contentType, body: await metrics.registry.metrics() })),
    metricsToken: config.metricsToken,
    trustProxy: config.trustProxy,
    basePath: config.basePath,
    responseHeaders: SECURITY_HEADERS,
  });
  installParameterLimits(app, {
    maxParameters: config.maxParameters,
    maxParameterBytes: config.maxParameterBytes,
  });
  installRateLimits(app, {
    store: deps.rateLimitCounters,
    clock: engine.clock,
    limits: config.rateLimits,
    windowSeconds: config.rateLimitWindowSeconds,
    basePath: config.basePath,
    metrics,
  });

  await app.register(
    async function oauthEndpoints(oauth) {
      await oauth.register(formBody);
      // RFC 6749 §3.2 / RFC 7009 / RFC 7662: these endpoints take forms only. Without Fastify's JSON
      // parser a JSON body is refused as a media type (415) instead of parsed and failing as 400.
      oauth.removeContentTypeParser(['application/json', 'text/plain']);
      oauth.setErrorHandler(oauthErrorHandler);
      registerTokenRoute(oauth, engine.tokenEndpoint, {
        issued(grantType, response) {
          metrics.tokenIssued(grantType, response.token_type.toLowerCase());
          if (response.refresh_token !== undefined) metrics.tokenIssued(grantType, 'refresh');
        },
      });
      registerJwksRoute(oauth, engine.keyRing);
      registerTokenManagementRoutes(oauth, engine, config.issuer);
      registerPushedAuthorizationRequestRoute(oauth, engine, config.issuer);
      registerDeviceAuthorizationRoute(oauth, engine, config.issuer);
      registerMetadataRoute(oauth, engine.scopes, {
        issuer: config.issuer,
        endpointSettings,
        // The implicit grant has no token request; /authorize serves it (response_type=token).
        grantTypes: [...engine.tokenEndpoint.grantTypes, 'implicit'],
        allowPlainPkce: engine.authorization.allowsPlainPkce,
        extraMembers: {
          ...tokenManagementAuthMetadata(),
          // RFC 9449 §5.1: the algorithms the token endpoint (and every resource here) takes proofs in.
          dpop_signing_alg_values_supported: DPOP_SIGNING_ALGORITHMS,
          // draft-ietf-oauth-client-id-metadata-document §5 (decision 46): said only when on.
          ...(engine.clientDocuments.enabled ? { client_id_metadata_document_supported: true } : {}),
        },
        requirePushedAuthorizationRequests: engine.authorization.requiresPushedRequests,
      });
      registerUserInfoRoute(oauth, engine, {
        allowQuery: config.allowAccessTokenInQuery,
        issuer: config.issuer,
        basePath: config.basePath,
      });
    },
    { prefix: config.basePath },
  );
  if (isOn(ENDPOINTS.registration, endpointSettings)) {
    // Its own context: RFC 7591 takes JSON, which the form-only endpoints above refuse.
    await app.register(
      registrationRoutes({
        registration: engine.registration,
        config,
        clock: engine.clock,
        rateLimitCounters: deps.rateLimitCounters,
        metrics,
      }),
      { prefix: config.basePath },
    );
  }
  await app.register(apiV1({ config, engine, statistics: deps.statistics }), {
    prefix: `${config.basePath}${ENDPOINTS.managementApi.path}`,
  });
  // RFC 9728 §3.1: /v1's metadata is a well-known URI at the origin's root, outside the base path
  // (decision 47), so it is registered on the root instance.
  registerManagementApiMetadataRoute(app, config);
  await app.register(
    async function operations(ops) {
      registerHealthRoutes(ops, deps.health);
    },
    { prefix: config.basePath },
  );
  await app.register(
    browserUi({
      config,
      engine,
      cookieSecret: deps.cookieSecret,
      // Decision 42: the admin console calls /token and /v1 as requests through this very application.
      callApi: async (request) => {
        const response = await app.inject(request);
        return { statusCode: response.statusCode, body: response.body };
      },
    }),
    {
      prefix: config.basePath,
    },
  );

  app.setNotFoundHandler(function notFound(_request, reply) {
    reply.code(404).send({ error: 'not_found', error_description: 'no such endpoint' });
  });
  return app;
}
