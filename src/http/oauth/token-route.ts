import type { FastifyInstance } from 'fastify';
import type { TokenEndpoint } from '../../core/token-endpoint/token-endpoint.js';
import type { TokenResponse } from '../../core/tokens/token-issuer.js';
import { dpopHeaderValues } from '../dpop-request.js';
import { ENDPOINTS } from '../../config/endpoints.js';
import { repeatedParam, requireFormBody, singleValuedParams } from '../form-params.js';
import { noStoreJson } from '../no-store.js';

/**
 * RFC 8707 §2 and RFC 8693 §2.1: `resource` and `audience` may be sent more than once; every other
 * parameter once (RFC 6749 §3.2).
 */
const REPEATABLE = ['resource', 'audience'];

/** What the token route reports to observers (metrics) after each success. */
export interface TokenRouteObserver {
  issued(grantType: string, response: TokenResponse): void;
}

/** POST /token (RFC 6749 §3.2). */
export function registerTokenRoute(
  app: FastifyInstance,
  tokenEndpoint: TokenEndpoint,
  observer?: TokenRouteObserver,
): void {
  app.post(ENDPOINTS.token.path, async function token(request, reply) {
    requireFormBody(request.headers['content-type']);
    const params = singleValuedParams(request.body, REPEATABLE);
    const response = await tokenEndpoint.handle({
      authorization: request.headers.authorization,
      params,
      resources: repeatedParam(request.body, 'resource'),
      audiences: repeatedParam(request.body, 'audience'),
      address: request.ip,
      dpopProofs: dpopHeaderValues(request),
    });
    observer?.issued(params.grant_type ?? '', response);
    // RFC 9449 §8: with nonces required, every answer hands out the one to use next.
    const nonce = tokenEndpoint.dpopNonce();
    if (nonce !== undefined) reply.header('dpop-nonce', nonce);
    noStoreJson(reply);
    return JSON.stringify(response);
  });
}
