import { TokenError } from 'gatehouse-oauth-resource-server/rfc6750';
import { RegistrationAuthError } from '../core/clients/dynamic-registration.js';
import { OAuthError } from '../core/errors.js';
import { Problem } from './api/v1/problem.js';

/** What a 4xx without an error code of its own is (the /v1 API's problems, framework refusals). */
const BY_STATUS: Readonly<Record<number, string>> = {
  401: 'invalid_token',
  404: 'not_found',
  405: 'method_not_allowed',
  406: 'not_acceptable',
  409: 'conflict',
};

/**
 * The `error` label of gatehouse_oauth_errors_total for an error answered with `status`.
 * `server_error` is what operators alert on (docs/deployment.md), so it counts the 5xx answers only,
 * never a refusal: a refusal counts by what it is, its RFC 6749 §5.2 / RFC 7591 §3.2.2 code, its
 * RFC 6750 §3.1 code (`invalid_token` for a request without any token, which §3.1 leaves without a
 * code), or for a /v1 problem (RFC 9457) its token error or else what its status says. A small, fixed
 * set of values: codes of the RFCs and the few names above.
 */
export function errorLabel(error: Error, status: number): string {
  if (status >= 500) return error instanceof OAuthError && error.status >= 500 ? error.code : 'server_error';
  if (error instanceof OAuthError) return error.code;
  if (error instanceof TokenError || error instanceof RegistrationAuthError)
    return error.code ?? 'invalid_token';
  if (error instanceof Problem && error.extras.error !== undefined) return error.extras.error;
  return BY_STATUS[status] ?? 'invalid_request';
}
