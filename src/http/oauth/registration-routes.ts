import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { extractCredential, TokenError } from 'gatehouse-oauth-resource-server/rfc6750';
import type { GatehouseConfig } from '../../config.js';
import { RegistrationAuthError, type DynamicRegistration } from '../../core/clients/dynamic-registration.js';
import { OAuthError } from '../../core/errors.js';
import type { RateLimitStore } from '../../core/ports.js';
import type { Clock } from '../../shared/clock.js';
import type { GatehouseMetrics } from '../metrics.js';
import { ENDPOINTS } from '../../config/endpoints.js';
import { addressRateLimit } from '../rate-limit.js';
import { oauthErrorHandler } from './oauth-errors.js';
import { noStore } from '../no-store.js';

/** The realm of the Bearer challenges (RFC 6750 §3), as at /userinfo and /v1. */
const REALM = 'gatehouse';

/** The window of the registration rate limit: registrations are counted per address per hour. */
export const REGISTRATION_RATE_WINDOW_SECONDS = 3600;

export interface RegistrationRoutesOptions {
  registration: DynamicRegistration;
  config: Pick<GatehouseConfig, 'dynamicRegistrationRateLimit'>;
  clock: Clock;
  rateLimitCounters: RateLimitStore;
  metrics: GatehouseMetrics;
}

/**
 * The bearer token of a registration request (RFC 6750 §2.1, header only): RFC 7591 §3's initial
 * access token, or RFC 7592 §2's registration access token. Undefined when none came.
 */
function bearerToken(request: FastifyRequest): string | undefined {
  const credential = extractCredential({
    authorization: request.headers.authorization,
    formBody: undefined,
    method: request.method,
    query: undefined,
    allowQuery: false,
  });
  if (credential === undefined) return undefined;
  if (credential.scheme !== 'bearer') throw new TokenError('invalid_token', 'use a Bearer token');
  return credential.token;
}

/**
 * A refusal as RFC 7591 §3.2.2 says (JSON `error`, `error_description`), a token refusal as RFC 6750 §3
 * says (401 with a Bearer challenge; no error code when no token came), the rest as every OAuth
 * endpoint answers it.
 */
function registrationErrorHandler(
  this: unknown,
  error: FastifyError | Error,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  const refusal =
    error instanceof RegistrationAuthError ? new TokenError(error.code, error.description) : error;
  if (refusal instanceof TokenError) {
    noStore(reply).code(refusal.status).header('www-authenticate', refusal.challenge(REALM));
    reply.type('application/json');
    return reply.send(
      refusal.code === undefined
        ? { error_description: refusal.description }
        : { error: refusal.code, error_description: refusal.description },
    );
  }
  const { code } = error as FastifyError;
  const metadataError =
    code === 'FST_ERR_CTP_INVALID_JSON_BODY' || code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
      ? new OAuthError('invalid_client_metadata', 'the body must be a JSON object of client metadata')
      : error;
  return oauthErrorHandler.call(this, metadataError, request, reply);
}

/**
 * POST /register (RFC 7591 §3) and the client configuration endpoint /register/:id (RFC 7592 §2),
 * served while GATEHOUSE_DYNAMIC_REGISTRATION is not `off` (docs/decisions.md, decision 20). JSON in
 * and out; registrations are limited per address per hour.
 */
export function registrationRoutes(options: RegistrationRoutesOptions) {
  return async function registrationEndpoint(app: FastifyInstance): Promise<void> {
    // RFC 7591 §3.1: the metadata comes as application/json, nothing else.
    app.removeContentTypeParser(['text/plain']);
    app.setErrorHandler(registrationErrorHandler);
    const { registration } = options;
    const limit = addressRateLimit(app, {
      store: options.rateLimitCounters,
      clock: options.clock,
      perAddress: options.config.dynamicRegistrationRateLimit,
      windowSeconds: REGISTRATION_RATE_WINDOW_SECONDS,
      name: 'register',
      metrics: options.metrics,
    });

    // onRequest, before the body is parsed: every attempt counts, those the JSON parser refuses (a
    // malformed body, a __proto__ key) included (docs/decisions.md, decision 20).
    app.post(ENDPOINTS.registration.path, { onRequest: limit }, async function register(request, reply) {
      const information = await registration.register(request.body, bearerToken(request));
      noStore(reply).code(201);
      return information;
    });

    app.get<{ Params: { id: string } }>(
      ENDPOINTS.registrationConfiguration.path,
      async function readRegistration(request, reply) {
        const information = await registration.read(request.params.id, bearerToken(request));
        noStore(reply);
        return information;
      },
    );

    // RFC 7592 §2.2 answers an update with 200 and the client as it now stands.
    app.put<{ Params: { id: string } }>(
      ENDPOINTS.registrationConfiguration.path,
      async function updateRegistration(request, reply) {
        const information = await registration.update(request.params.id, bearerToken(request), request.body);
        noStore(reply);
        return information;
      },
    );

    app.delete<{ Params: { id: string } }>(
      ENDPOINTS.registrationConfiguration.path,
      async function deleteRegistration(request, reply) {
        await registration.delete(request.params.id, bearerToken(request));
        return noStore(reply).code(204).send();
      },
    );
  };
}
