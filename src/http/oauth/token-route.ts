import type { FastifyInstance } from 'fastify';
import type { TokenEndpoint } from '../../core/token-endpoint.js';
import { requireFormBody, singleValuedParams } from './form-params.js';

/** POST /token (RFC 6749 §3.2). */
export function registerTokenRoute(app: FastifyInstance, tokenEndpoint: TokenEndpoint): void {
  app.post('/token', async function token(request, reply) {
    requireFormBody(request.headers['content-type']);
    const params = singleValuedParams(request.body);
    const response = await tokenEndpoint.handle({
      authorization: request.headers.authorization,
      params,
    });
    reply.header('content-type', 'application/json;charset=UTF-8');
    reply.header('cache-control', 'no-store');
    reply.header('pragma', 'no-cache');
    return JSON.stringify(response);
  });
}
