import type { FastifyInstance } from 'fastify';
import { invalidRequest } from '../../core/errors.js';
import type { Engine } from '../../core/engine.js';
import { readClientFormRequest } from './client-form-request.js';
import { ENDPOINTS } from '../../config/endpoints.js';
import { noStore } from '../no-store.js';

/** POST /revoke (RFC 7009). Public clients may revoke their own tokens, identified by client_id (§2.1). */
export function registerRevokeRoute(
  app: FastifyInstance,
  engine: Pick<Engine, 'authenticateClient' | 'tokens'>,
  /** This endpoint's URL under the issuer (a client assertion's possible audience). */
  endpointUrl: string,
): void {
  app.post(ENDPOINTS.revocation.path, async function revoke(request, reply) {
    const { client, params } = await readClientFormRequest(request, engine, endpointUrl);
    const token = params.token;
    if (token === undefined) throw invalidRequest('token is required');
    await engine.tokens.revoker.revoke(token, params.token_type_hint, client, request.ip);
    // RFC 7009 §2.2: 200 whether or not the token was known; the body is ignored by clients.
    noStore(reply);
    return reply.code(200).send();
  });
}
