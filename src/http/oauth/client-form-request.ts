import type { FastifyRequest } from 'fastify';
import type { Engine } from '../../core/engine.js';
import { formClientCredentials, type AuthenticatedClient } from '../../core/clients/client-auth.js';
import { requireFormBody, singleValuedParams } from '../form-params.js';

/**
 * The start of every client-authenticated form endpoint (/introspect, /revoke): a form body, each
 * parameter once, and the client authenticated by Basic, client_secret_post, a private_key_jwt
 * assertion (RFC 7523 §2.2) or client_id alone. `endpointUrl` is the endpoint's URL under the issuer,
 * which an assertion may name as its audience.
 */
export async function readClientFormRequest(
  request: FastifyRequest,
  engine: Pick<Engine, 'authenticateClient'>,
  endpointUrl: string,
): Promise<AuthenticatedClient & { params: Record<string, string | undefined> }> {
  requireFormBody(request.headers['content-type']);
  const params = singleValuedParams(request.body);
  const authenticated = await engine.authenticateClient(
    formClientCredentials((name) => params[name], request.headers.authorization, endpointUrl),
  );
  return { ...authenticated, params };
}
