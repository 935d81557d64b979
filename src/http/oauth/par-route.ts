import type { FastifyInstance } from 'fastify';
import { formClientCredentials } from '../../core/clients/client-auth.js';
import type { Engine } from '../../core/engine.js';
import { invalidRequest, OAuthError } from '../../core/errors.js';
import { dpopHeaderValues } from '../dpop-request.js';
import { ENDPOINTS, endpointUrl } from '../../config/endpoints.js';
import { formAsSearchParams, requireFormBody } from '../form-params.js';
import { noStoreJson } from '../no-store.js';

/** The client authentication parameters (RFC 6749 §2.3.1): each at most once. */
function credential(params: URLSearchParams, name: string): string | undefined {
  const values = params.getAll(name).filter((value) => value !== '');
  if (values.length > 1) throw invalidRequest(`parameter repeated: ${name}`);
  return values[0];
}

/**
 * POST /par, the pushed authorization request endpoint (RFC 9126 §2): the client authenticates as at
 * the token endpoint and sends the parameters of an authorization request, which are checked exactly
 * as /authorize checks them and stored; the answer is the `request_uri` to send the browser with.
 */
export function registerPushedAuthorizationRequestRoute(
  app: FastifyInstance,
  engine: Pick<Engine, 'authenticateClient' | 'authorization' | 'dpop'>,
  /** The issuer URL, under which this endpoint's own address is (a client assertion's audience). */
  issuer: string,
): void {
  const { path } = ENDPOINTS.pushedAuthorizationRequest;
  const ownUrl = endpointUrl(issuer, ENDPOINTS.pushedAuthorizationRequest);
  app.post(path, async function pushAuthorizationRequest(request, reply) {
    requireFormBody(request.headers['content-type']);
    // Repeated parameters kept: the authorization request's own checks refuse them (RFC 6749 §3.1).
    const params = formAsSearchParams(request.body);
    // Every method the token endpoint takes (RFC 9126 §2): the assertion's too, where client
    // authentication reads one, whose audience may be this endpoint (built from the issuer, never
    // from the request's Host).
    const { client } = await engine.authenticateClient(
      formClientCredentials((name) => credential(params, name), request.headers.authorization, ownUrl),
    );
    // RFC 9449 §10.1: a DPoP proof binds the code to its key, as dpop_jkt does.
    const pushed = await engine.authorization.push(client, params.toString(), dpopHeaderValues(request));
    const nonce = engine.dpop.nonce();
    if (nonce !== undefined) reply.header('dpop-nonce', nonce);
    reply.code(201);
    noStoreJson(reply);
    return JSON.stringify(pushed);
  });

  // RFC 9126 §2.3: any other method is answered 405.
  app.route({
    method: ['GET', 'PUT', 'PATCH', 'DELETE'],
    url: path,
    handler: async function parMethodNotAllowed(_request, reply) {
      reply.header('allow', 'POST');
      throw new OAuthError('invalid_request', 'the pushed authorization request endpoint takes POST', 405);
    },
  });
}
