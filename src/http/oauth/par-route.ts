import type { FastifyInstance } from 'fastify';
import type { Engine } from '../../core/engine.js';
import { invalidRequest, OAuthError } from '../../core/errors.js';
import { formAsSearchParams, requireFormBody } from '../form-params.js';

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
  engine: Pick<Engine, 'authenticateClient' | 'authorization'>,
  /** The issuer URL: this endpoint's own address is `${issuer}/par`. */
  issuer: string,
): void {
  app.post('/par', async function pushAuthorizationRequest(request, reply) {
    requireFormBody(request.headers['content-type']);
    // Repeated parameters kept: the authorization request's own checks refuse them (RFC 6749 §3.1).
    const params = formAsSearchParams(request.body);
    // Every method the token endpoint takes (RFC 9126 §2): the assertion's too, where client
    // authentication reads one, whose audience may be this endpoint (built from the issuer, never
    // from the request's Host).
    const credentials = {
      authorization: request.headers.authorization,
      clientId: credential(params, 'client_id'),
      clientSecret: credential(params, 'client_secret'),
      clientAssertionType: credential(params, 'client_assertion_type'),
      clientAssertion: credential(params, 'client_assertion'),
      endpointUrl: `${issuer}/par`,
    };
    const { client } = await engine.authenticateClient(credentials);
    const pushed = await engine.authorization.push(client, params.toString());
    reply.code(201);
    reply.header('content-type', 'application/json;charset=UTF-8');
    reply.header('cache-control', 'no-store');
    reply.header('pragma', 'no-cache');
    return JSON.stringify(pushed);
  });

  // RFC 9126 §2.3: any other method is answered 405.
  app.route({
    method: ['GET', 'PUT', 'PATCH', 'DELETE'],
    url: '/par',
    handler: async function parMethodNotAllowed(_request, reply) {
      reply.header('allow', 'POST');
      throw new OAuthError('invalid_request', 'the pushed authorization request endpoint takes POST', 405);
    },
  });
}
