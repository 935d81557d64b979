import type { GrantType } from '../../model.js';
import { modeAllowed, responseParts } from '../response.js';
import { responseTypeOf, single, type RequestDraft, type StepError } from './draft.js';

/**
 * The response type (RFC 6749 §3.1.1, §4.1.1, §4.2.1; Core §3), and whether this client may use it:
 * `code` needs the authorization_code grant, a token or an ID token from this endpoint the implicit
 * grant (Core §3.2, §3.3).
 */
export function checkResponseType(draft: RequestDraft): StepError | undefined {
  if (single(draft.params, 'response_type').value === undefined) {
    return { error: 'invalid_request', description: 'response_type is required' };
  }
  if (draft.responseType === undefined) {
    return {
      error: 'unsupported_response_type',
      description: draft.openid
        ? 'response_type must be code, token, id_token or a combination of them'
        : 'response_type must be code or token',
    };
  }
  const parts = responseParts(draft.responseType);
  const grants: GrantType[] = [];
  if (parts.code) grants.push('authorization_code');
  if (parts.token || parts.idToken) grants.push('implicit');
  const missing = grants.find((grant) => !draft.client.grantTypes.includes(grant));
  if (missing !== undefined) {
    return {
      error: 'unauthorized_client',
      description: `this client is not registered for the ${missing} grant`,
    };
  }
  return undefined;
}

/**
 * The response mode an OpenID Connect request names (OAuth 2.0 Multiple Response Type Encoding
 * Practices §2.1, §5; Form Post Response Mode §2): a known one, and never the query for a token or an
 * ID token.
 */
export function checkResponseMode(draft: RequestDraft): StepError | undefined {
  if (!draft.openid || single(draft.params, 'response_mode').value === undefined) return undefined;
  if (draft.askedMode === undefined) {
    return { error: 'invalid_request', description: 'response_mode must be query, fragment or form_post' };
  }
  if (!modeAllowed(draft.askedMode, responseTypeOf(draft))) {
    return {
      error: 'invalid_request',
      description: 'a token or an ID token is never sent in the query (response_mode)',
    };
  }
  return undefined;
}
