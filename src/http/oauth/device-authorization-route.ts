import type { FastifyInstance } from 'fastify';
import { formClientCredentials } from '../../core/clients/client-auth.js';
import type { Engine } from '../../core/engine.js';
import { OAuthError } from '../../core/errors.js';
import { ENDPOINTS, endpointUrl } from '../../config/endpoints.js';
import { repeatedParam, requireFormBody, singleValuedParams } from '../form-params.js';
import { noStoreJson } from '../no-store.js';

/** RFC 8707 §2: `resource` may be sent more than once; every other parameter once (RFC 6749 §3.2). */
const REPEATABLE = ['resource'];

/**
 * POST /device_authorization, the device authorization endpoint (RFC 8628 §3.1): the client
 * authenticates as at the token endpoint (a public client by its client_id) and asks for `scope` and
 * `resource`; the answer (§3.2) holds the device code to poll /token with and the user code to show.
 */
export function registerDeviceAuthorizationRoute(
  app: FastifyInstance,
  engine: Pick<Engine, 'authenticateClient' | 'deviceAuthorization'>,
  /** The issuer URL, under which this endpoint's own address is (a client assertion's audience). */
  issuer: string,
): void {
  const { path } = ENDPOINTS.deviceAuthorization;
  const ownUrl = endpointUrl(issuer, ENDPOINTS.deviceAuthorization);
  app.post(path, async function deviceAuthorization(request, reply) {
    requireFormBody(request.headers['content-type']);
    const params = singleValuedParams(request.body, REPEATABLE);
    // Every method the token endpoint takes: the assertion's too, where client authentication reads
    // one, whose audience may be this endpoint (built from the issuer, never from the request's Host).
    const { client } = await engine.authenticateClient(
      formClientCredentials((name) => params[name], request.headers.authorization, ownUrl),
    );
    const response = await engine.deviceAuthorization.start(client, {
      scope: params.scope,
      resources: repeatedParam(request.body, 'resource'),
    });
    noStoreJson(reply);
    return JSON.stringify(response);
  });

  // RFC 8628 §3.1: the endpoint takes POST; anything else is answered 405.
  app.route({
    method: ['GET', 'PUT', 'PATCH', 'DELETE'],
    url: path,
    handler: async function deviceAuthorizationMethodNotAllowed(_request, reply) {
      reply.header('allow', 'POST');
      throw new OAuthError('invalid_request', 'the device authorization endpoint takes POST', 405);
    },
  });
}
