import type { FastifyInstance } from 'fastify';
import type { Engine } from '../../core/engine.js';
import { invalidClient, invalidRequest } from '../../core/errors.js';
import { introspectionJson } from '../../core/tokens/token-introspection.js';
import { TurnBatch } from '../../core/keys/turn-batch.js';
import { readClientFormRequest } from './client-form-request.js';
import { ENDPOINTS } from '../../config/endpoints.js';
import { noStoreJson } from '../no-store.js';

/** POST /introspect (RFC 7662). */
export function registerIntrospectRoute(
  app: FastifyInstance,
  engine: Pick<Engine, 'authenticateClient' | 'tokens'>,
  /** This endpoint's URL under the issuer (a client assertion's possible audience). */
  endpointUrl: string,
): void {
  // Decision 28: the answers of one turn are made and written together, once every request read in
  // that turn is checked, not each between the reading of the next ones.
  const answers = new TurnBatch();
  app.post(ENDPOINTS.introspection.path, async function introspect(request, reply) {
    const { client, params } = await readClientFormRequest(request, engine, endpointUrl);
    // RFC 7662 §2.1 requires the caller to be authorized; a public client proves nothing about itself,
    // and answering it would let anyone probe tokens (§4).
    if (client.isPublic) throw invalidClient('public clients may not use introspection');
    const token = params.token;
    if (token === undefined) throw invalidRequest('token is required');
    const response = await engine.tokens.introspector.introspect(token, params.token_type_hint, client);
    const body = await answers.run(() => introspectionJson(response));
    noStoreJson(reply);
    return body;
  });
}
