import type { OAuthErrorCode } from '../errors.js';
import { OAuthError } from '../errors.js';
import type { Client, GrantType } from '../model.js';
import { isValidCodeChallenge } from '../pkce.js';
import { canonicalRedirectUri, isRegisteredRedirectUri } from '../redirect-uri.js';
import type { ClientStore } from '../ports.js';
import { parseScope, resolveScope } from '../scopes.js';
import { authorizationErrorUrl, type ResponseMode } from './response.js';

export type ResponseType = 'code' | 'token';

/** Which grant type a client needs for each response type (RFC 6749 §4.1.1, §4.2.1). */
const GRANT_FOR_RESPONSE_TYPE: Record<ResponseType, GrantType> = {
  code: 'authorization_code',
  token: 'implicit',
};

/** A request to GET /authorize that passed every check: safe to show to the user and to answer. */
export interface AuthorizationRequest {
  client: Client;
  responseType: ResponseType;
  redirectUri: string;
  /** The scope asked for, resolved against the client's registered scopes. */
  scope: string[];
  state: string | undefined;
  codeChallenge: string | null;
  codeChallengeMethod: 'S256' | 'plain' | null;
  /** `prompt=consent` asks for the consent page even when a grant already covers the request. */
  forceConsent: boolean;
  /** The query string as received, so the request can be carried through sign-in and consent. */
  query: string;
}

export type AuthorizationValidation =
  | { outcome: 'valid'; request: AuthorizationRequest }
  /** The client or its redirect URI cannot be trusted: show an error page, never redirect (§4.1.2.1). */
  | { outcome: 'error-page'; description: string }
  /** Every other error goes back to the client at its verified redirect URI. */
  | { outcome: 'error-redirect'; location: string; error: OAuthErrorCode };

export interface AuthorizationPolicy {
  allowPlainPkce: boolean;
}

const MAX_STATE_LENGTH = 2048;

/**
 * A parameter's single value. RFC 6749 §3.1: parameters without a value count as omitted, and no
 * parameter may appear more than once.
 */
function single(params: URLSearchParams, name: string): { value: string | undefined; repeated: boolean } {
  const values = params.getAll(name).filter((value) => value !== '');
  return { value: values[0], repeated: values.length > 1 };
}

/**
 * Validates an authorization request in the order RFC 6749 §4.1.2.1 requires: first what decides
 * whether the redirect URI can be trusted (client, redirect URI), and only then everything else,
 * whose errors are sent to that URI.
 */
export async function validateAuthorizationRequest(
  query: string,
  clients: ClientStore,
  policy: AuthorizationPolicy,
): Promise<AuthorizationValidation> {
  const params = new URLSearchParams(query);

  // 1. The client.
  const clientId = single(params, 'client_id');
  if (clientId.repeated) return { outcome: 'error-page', description: 'client_id was sent more than once.' };
  if (clientId.value === undefined) {
    return { outcome: 'error-page', description: 'The request does not say which application it is for.' };
  }
  const client = await clients.get(clientId.value);
  if (client === undefined) {
    return { outcome: 'error-page', description: 'The application is not registered here.' };
  }

  // 2. The redirect URI: exact string match against a registered one (RFC 6749 §3.1.2.3, RFC 9700 §4.1.3).
  const redirect = single(params, 'redirect_uri');
  if (redirect.repeated) {
    return { outcome: 'error-page', description: 'redirect_uri was sent more than once.' };
  }
  let redirectUri: string;
  if (redirect.value === undefined) {
    // §3.1.2.3: it may be omitted only when exactly one is registered.
    const [first, ...others] = client.redirectUris;
    // Its canonical form: where a browser would go (see canonicalRedirectUri).
    const only = first === undefined ? undefined : canonicalRedirectUri(first).uri;
    if (only === undefined || others.length > 0) {
      return {
        outcome: 'error-page',
        description: 'The request must say where to return to (redirect_uri), and it did not.',
      };
    }
    redirectUri = only;
  } else if (isRegisteredRedirectUri(client.redirectUris, redirect.value)) {
    redirectUri = redirect.value;
  } else {
    return {
      outcome: 'error-page',
      description: 'The return address (redirect_uri) is not one the application registered.',
    };
  }

  // From here on errors are redirected. The response type decides where they go: the fragment for
  // the implicit grant (§4.2.2.1), the query otherwise (§4.1.2.1).
  const responseTypeParam = single(params, 'response_type');
  const mode: ResponseMode =
    responseTypeParam.value === 'token' && !responseTypeParam.repeated ? 'fragment' : 'query';
  const state = single(params, 'state');
  const stateValue = state.repeated ? undefined : state.value;
  const fail = (error: OAuthErrorCode, description: string): AuthorizationValidation => ({
    outcome: 'error-redirect',
    error,
    location: authorizationErrorUrl(redirectUri, mode, new OAuthError(error, description), stateValue),
  });

  // 3. No parameter more than once (§3.1).
  for (const name of new Set(params.keys())) {
    if (single(params, name).repeated)
      return fail('invalid_request', `parameter repeated: ${name.slice(0, 64)}`);
  }
  if (stateValue !== undefined && stateValue.length > MAX_STATE_LENGTH) {
    return fail('invalid_request', `state is longer than ${MAX_STATE_LENGTH} characters`);
  }

  // 4. The response type, and whether this client may use it.
  const responseType = responseTypeParam.value;
  if (responseType === undefined) return fail('invalid_request', 'response_type is required');
  if (responseType !== 'code' && responseType !== 'token') {
    return fail('unsupported_response_type', 'response_type must be code or token');
  }
  if (!client.grantTypes.includes(GRANT_FOR_RESPONSE_TYPE[responseType])) {
    return fail(
      'unauthorized_client',
      `this client is not registered for the ${GRANT_FOR_RESPONSE_TYPE[responseType]} grant`,
    );
  }

  // 5. The scope: only scopes the client was registered with (§3.3).
  let scope: string[];
  try {
    scope = resolveScope(parseScope(single(params, 'scope').value), client.scopes);
  } catch (error) {
    if (error instanceof OAuthError) return fail(error.code, error.description);
    throw error;
  }

  // 6. PKCE (RFC 7636 §4.3, §4.4.1), for the code flow; public clients must use S256 (RFC 9700 §2.1.1).
  let codeChallenge: string | null = null;
  let codeChallengeMethod: 'S256' | 'plain' | null = null;
  if (responseType === 'code') {
    const challenge = single(params, 'code_challenge').value;
    const method = single(params, 'code_challenge_method').value;
    if (challenge === undefined) {
      if (method !== undefined)
        return fail('invalid_request', 'code_challenge_method without code_challenge');
      if (client.isPublic) return fail('invalid_request', 'public clients must send a code_challenge (S256)');
    } else {
      // §4.3: the method defaults to plain when absent.
      const chosen = method ?? 'plain';
      if (chosen !== 'S256' && chosen !== 'plain') {
        return fail('invalid_request', 'code_challenge_method must be S256');
      }
      if (chosen === 'plain' && !policy.allowPlainPkce) {
        return fail('invalid_request', 'code_challenge_method must be S256');
      }
      if (!isValidCodeChallenge(challenge, chosen))
        return fail('invalid_request', 'malformed code_challenge');
      codeChallenge = challenge;
      codeChallengeMethod = chosen;
    }
  }

  const prompt = (single(params, 'prompt').value ?? '').split(' ');
  return {
    outcome: 'valid',
    request: {
      client,
      responseType,
      redirectUri,
      scope,
      state: stateValue,
      codeChallenge,
      codeChallengeMethod,
      forceConsent: prompt.includes('consent'),
      query: params.toString(),
    },
  };
}
