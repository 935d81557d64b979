import { isJwkThumbprint } from '../../tokens/dpop.js';
import { responseParts } from '../response.js';
import { responseTypeOf, single, type RequestDraft, type StepError } from './draft.js';

/**
 * RFC 9449 §10: dpop_jkt binds the code to a DPoP key: a SHA-256 JWK thumbprint (RFC 7638),
 * base64url. Only a code has a token request to bind; a dpop_bound_access_tokens client (§5.2) gets
 * no token from this endpoint, where no proof can be sent.
 */
export function checkDpop(draft: RequestDraft): StepError | undefined {
  const parts = responseParts(responseTypeOf(draft));
  const dpopJkt = single(draft.params, 'dpop_jkt').value;
  if (dpopJkt !== undefined) {
    if (!isJwkThumbprint(dpopJkt)) {
      return {
        error: 'invalid_request',
        description: 'dpop_jkt must be a base64url SHA-256 JWK thumbprint (RFC 7638)',
      };
    }
    if (parts.code) draft.dpopJkt = dpopJkt;
  }
  if (parts.token && draft.client.dpopBoundAccessTokens) {
    return {
      error: 'invalid_request',
      description:
        'this client takes only DPoP-bound access tokens, which the authorization endpoint cannot issue: use response_type code',
    };
  }
  return undefined;
}
