import type { OAuthErrorCode } from '../errors.js';
import { OAuthError } from '../errors.js';
import type { IdTokenHint } from '../id-token-hint.js';
import type { Client, GrantType, ResourceServer } from '../model.js';
import { isJwkThumbprint } from '../dpop.js';
import { isValidCodeChallenge } from '../pkce.js';
import { canonicalRedirectUri, isRegisteredRedirectUri } from '../redirect-uri.js';
import type { ClientStore } from '../ports.js';
import { OFFLINE_ACCESS_SCOPE, UNSERVED_STANDARD_SCOPES } from '../oidc/claims.js';
import { resolveScopeForResources, urisOf, type ResourceTargets } from '../resources.js';
import { parseScope } from '../scopes.js';
import { isPushedRequestUri } from './pushed-requests.js';
import {
  authorizationErrorResponse,
  RESPONSE_MODES,
  type AuthorizationResponse,
  type ResponseMode,
} from './response.js';

/**
 * The response types (RFC 6749 §3.1.1; OAuth 2.0 Multiple Response Type Encoding Practices §3, §5), in
 * the canonical order of their parts. Those with `id_token` exist only in OpenID Connect requests.
 */
export const RESPONSE_TYPES = [
  'code',
  'token',
  'id_token',
  'code id_token',
  'code token',
  'id_token token',
  'code id_token token',
] as const;
export type ResponseType = (typeof RESPONSE_TYPES)[number];

/** What a response type returns from the authorization endpoint. */
export interface ResponseParts {
  code: boolean;
  idToken: boolean;
  token: boolean;
}

export function responseParts(type: ResponseType): ResponseParts {
  const parts = type.split(' ');
  return {
    code: parts.includes('code'),
    idToken: parts.includes('id_token'),
    token: parts.includes('token'),
  };
}

/** The `prompt` values (Core §3.1.2.1). */
export interface Prompt {
  /** No page at all: answer at once or with an error (Core §3.1.2.6). */
  none: boolean;
  /** Ask for the password again, even when signed in. */
  login: boolean;
  /** Show the consent page, even when a grant already covers the request. */
  consent: boolean;
  /** Let the user choose the account: continue as the one signed in, or sign in as another. */
  selectAccount: boolean;
}

const PROMPT_VALUES = new Map<string, keyof Prompt>([
  ['none', 'none'],
  ['login', 'login'],
  ['consent', 'consent'],
  ['select_account', 'selectAccount'],
]);

/** A request to GET /authorize that passed every check: safe to show to the user and to answer. */
export interface AuthorizationRequest {
  client: Client;
  responseType: ResponseType;
  /** How the answer travels (the request's `response_mode`, or the response type's default). */
  responseMode: ResponseMode;
  redirectUri: string;
  /** The scope asked for, resolved against the client's registered scopes and the resources. */
  scope: string[];
  /**
   * The resources the tokens are for (RFC 8707 §2), registered, canonical, in the order asked; empty
   * when the request named none (tokens for the issuer's own API).
   */
  resources: string[];
  /**
   * The same resources as registered: their URIs and the names operators gave them (null when none),
   * for the consent page to say which server the access is for.
   */
  resourceNames: Pick<ResourceServer, 'uri' | 'name'>[];
  state: string | undefined;
  codeChallenge: string | null;
  codeChallengeMethod: 'S256' | 'plain' | null;
  /** `prompt=consent` asks for the consent page even when a grant already covers the request. */
  forceConsent: boolean;
  /**
   * An OpenID Connect authentication request (Core §3.1.2.1: its scope holds `openid`). Only these
   * take the OpenID parameters below; any other request is answered as an OAuth 2.0 one.
   */
  openid: boolean;
  /** Core §3.1.2.1 `nonce`, for the ID token; null when none was sent. */
  nonce: string | null;
  /** Core §3.1.2.1 `prompt`; an OAuth 2.0 request keeps only `consent`. */
  prompt: Prompt;
  /** Core §3.1.2.1 `max_age`: the oldest sign-in, in seconds, that may answer without a new one. */
  maxAge: number | null;
  /** Core §3.1.2.1 `login_hint`: fills in the user name on the sign-in page. */
  loginHint: string | undefined;
  /** Core §3.1.2.1 `id_token_hint`, verified as an ID token of this server. */
  idTokenHint: IdTokenHint | undefined;
  /**
   * The query string as received, so the request can be carried through sign-in and consent; for a
   * pushed request only its client_id and request_uri (RFC 9126 §4), and at the pushed authorization
   * request endpoint the parameters to store.
   */
  query: string;
  /** The stored hash of the pushed request (RFC 9126) it was read from; null for one sent in the URL. */
  pushedRequest: string | null;
  /**
   * RFC 9449 §10 `dpop_jkt`: the thumbprint of the DPoP key the code is bound to (its token request
   * must carry a proof made with it); null when none was sent.
   */
  dpopJkt: string | null;
}

export type AuthorizationValidation =
  | { outcome: 'valid'; request: AuthorizationRequest }
  /** The client or its redirect URI cannot be trusted: show an error page, never redirect (§4.1.2.1). */
  | { outcome: 'error-page'; description: string }
  /** Every other error goes back to the client at its verified redirect URI. */
  | {
      outcome: 'error-redirect';
      response: AuthorizationResponse;
      error: OAuthErrorCode;
      /** The client's name, for a form_post page. */
      clientName: string;
      /** The pushed request (RFC 9126) this answers, by its stored hash; null for one sent in the URL. */
      pushedRequest: string | null;
    };

/** A pushed request's parameters (RFC 9126 §4), found for its client and `request_uri`. */
export interface OpenedPushedRequest {
  params: string;
  /** Its stored hash: the request is consumed by it when answered. */
  hash: string;
}

export interface AuthorizationPolicy {
  /** The issuer identifier every response carries as `iss` (RFC 9207 §2). */
  issuer: string;
  allowPlainPkce: boolean;
  /** Checks an `id_token_hint` (verifyIdTokenHint); without it every hint is refused. */
  verifyIdTokenHint?: (token: string) => Promise<IdTokenHint | undefined>;
  /** The registered resources `resource` may name (RFC 8707); without it every one is refused. */
  resources?: ResourceTargets;
  /**
   * Which endpoint received the request: /authorize (the default), or POST /par (RFC 9126 §2.1: the
   * same checks, and never a request_uri).
   */
  endpoint?: 'authorize' | 'push';
  /** RFC 9126 §5 `require_pushed_authorization_requests`: every client's /authorize must be pushed. */
  requirePushedRequests?: boolean;
  /**
   * Reads a pushed request of `client` by its `request_uri` (RFC 9126 §4); undefined when there is
   * none: unknown, expired, already answered, or another client's. Without it none is found.
   */
  openPushedRequest?: (client: Client, requestUri: string) => Promise<OpenedPushedRequest | undefined>;
}

/** RFC 8707 §2: the one authorization request parameter that may be sent more than once. */
const REPEATABLE = new Set(['resource']);

const MAX_STATE_LENGTH = 2048;
/** The nonce travels into every ID token of the request: bounded like state. */
const MAX_NONCE_LENGTH = 2048;
/** A hint longer than any user name helps no one; it is cut, not refused (Core §3.1.2.1: a hint). */
const MAX_LOGIN_HINT_LENGTH = 256;

/**
 * A parameter's single value. RFC 6749 §3.1: parameters without a value count as omitted, and no
 * parameter may appear more than once.
 */
function single(params: URLSearchParams, name: string): { value: string | undefined; repeated: boolean } {
  const values = params.getAll(name).filter((value) => value !== '');
  return { value: values[0], repeated: values.length > 1 };
}

/**
 * The response type a `response_type` value names (its parts space-separated, in any order), or
 * undefined when it names none this request may use: an OAuth 2.0 request has `code` and `token`
 * (RFC 6749 §3.1.1), an OpenID Connect one also every combination with `id_token` (Core §3; OAuth 2.0
 * Multiple Response Type Encoding Practices §3, §5).
 */
function parseResponseType(value: string | undefined, openid: boolean): ResponseType | undefined {
  if (value === undefined) return undefined;
  if (!openid) return value === 'code' || value === 'token' ? value : undefined;
  const parts = value.split(' ').filter((part) => part !== '');
  if (new Set(parts).size !== parts.length) return undefined;
  const canonical = ['code', 'id_token', 'token'].filter((part) => parts.includes(part)).join(' ');
  if (canonical.split(' ').length !== parts.length) return undefined;
  return (RESPONSE_TYPES as readonly string[]).includes(canonical) ? (canonical as ResponseType) : undefined;
}

/** The default response mode (Multiple Response Types §5): the query for `code` alone, else the fragment. */
function defaultResponseMode(type: ResponseType): ResponseMode {
  return type === 'code' ? 'query' : 'fragment';
}

/** Multiple Response Types §5: a token or an ID token never travels in the query. */
function modeAllowed(mode: ResponseMode, type: ResponseType): boolean {
  const parts = responseParts(type);
  return mode !== 'query' || (!parts.token && !parts.idToken);
}

/**
 * Validates an authorization request in the order RFC 6749 §4.1.2.1 requires: first what decides
 * whether the redirect URI can be trusted (client, redirect URI), and only then everything else,
 * whose errors are sent to that URI, in the response mode the request asked for (or its response
 * type's default).
 */
export async function validateAuthorizationRequest(
  query: string,
  clients: ClientStore,
  policy: AuthorizationPolicy,
): Promise<AuthorizationValidation> {
  let params = new URLSearchParams(query);
  const pushing = policy.endpoint === 'push';

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

  // 1a. A pushed request (RFC 9126 §4): its parameters are the request's, and every other one of the
  // URL is ignored but client_id, which must name the client that pushed it (it is looked up by
  // both). One that cannot be found has no redirect URI to trust: an error page.
  let pushedRequest: string | null = null;
  let carried: string | undefined;
  const requestUri = single(params, 'request_uri');
  if (!pushing && requestUri.value !== undefined && isPushedRequestUri(requestUri.value)) {
    if (requestUri.repeated) {
      return { outcome: 'error-page', description: 'request_uri was sent more than once.' };
    }
    const opened = await policy.openPushedRequest?.(client, requestUri.value);
    if (opened === undefined) {
      return {
        outcome: 'error-page',
        description:
          'This request has expired or was already used. Return to the application and start again.',
      };
    }
    params = new URLSearchParams(opened.params);
    pushedRequest = opened.hash;
    carried = new URLSearchParams({ client_id: client.id, request_uri: requestUri.value }).toString();
  }

  // 2. The redirect URI: exact string match against a registered one (RFC 6749 §3.1.2.3, RFC 9700 §4.1.3).
  const redirect = single(params, 'redirect_uri');
  if (redirect.repeated) {
    return { outcome: 'error-page', description: 'redirect_uri was sent more than once.' };
  }
  // Core §3.1.2.1: a request whose scope holds openid is an OpenID Connect request (an omitted scope
  // stands for the client's registered ones, §3.3).
  const scopeParam = single(params, 'scope');
  const requestedScope = (scopeParam.value ?? '').split(' ').filter((name) => name !== '');
  const openid =
    requestedScope.length > 0 ? requestedScope.includes('openid') : client.scopes.includes('openid');
  let redirectUri: string;
  if (redirect.value === undefined && openid) {
    // Core §3.1.2.1: redirect_uri is REQUIRED in an OpenID Connect request, one registered or not.
    return {
      outcome: 'error-page',
      description: 'The request must say where to return to (redirect_uri), and it did not.',
    };
  } else if (redirect.value === undefined) {
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

  // From here on errors are redirected (but a self-registered client's: see `fail`).
  // The response type and mode decide where errors go: the fragment for the implicit grant
  // (§4.2.2.1) and every type returning a token or an ID token, the query otherwise (§4.1.2.1), or
  // the response_mode asked for when it may carry this type (OAuth 2.0 Form Post Response Mode §2).
  const responseTypeParam = single(params, 'response_type');
  const responseType = responseTypeParam.repeated
    ? undefined
    : parseResponseType(responseTypeParam.value, openid);
  const modeParam = openid ? single(params, 'response_mode') : { value: undefined, repeated: false };
  const askedMode = RESPONSE_MODES.find((mode) => mode === modeParam.value && !modeParam.repeated);
  let mode: ResponseMode = responseType === undefined ? 'query' : defaultResponseMode(responseType);
  if (askedMode !== undefined && responseType !== undefined && modeAllowed(askedMode, responseType)) {
    mode = askedMode;
  }
  const state = single(params, 'state');
  const stateValue = state.repeated ? undefined : state.value;
  const redirectedError = (error: OAuthErrorCode, description: string): AuthorizationValidation => ({
    outcome: 'error-redirect',
    error,
    clientName: client.name,
    response: authorizationErrorResponse(
      redirectUri,
      mode,
      new OAuthError(error, description),
      stateValue,
      policy.issuer,
    ),
    pushedRequest,
  });
  // RFC 9700 §4.11.2: a client that registered itself chose its redirect URIs unchecked, so an error
  // redirect would make this server an open redirector for whoever registers one. Its malformed
  // requests are shown on an error page instead; only answers to the user (a denial, prompt=none's
  // login_required and the like, elsewhere) still go back to it (docs/decisions.md, decision 20). The
  // pushed authorization request endpoint answers the client directly, never by redirect.
  const redirectsErrors = client.registration === 'operator' || pushing;
  const fail = (error: OAuthErrorCode, description: string): AuthorizationValidation =>
    redirectsErrors
      ? redirectedError(error, description)
      : {
          outcome: 'error-page',
          description: `The application sent a request that cannot be answered: ${description} (${error}).`,
        };

  // 2a. RFC 9126 §5, §6: a client, or a server, that requires pushed requests takes no other.
  const mustPush = client.requirePushedAuthorizationRequests || policy.requirePushedRequests === true;
  if (!pushing && pushedRequest === null && mustPush) {
    return fail(
      'invalid_request',
      'authorization requests must be pushed to the pushed authorization request endpoint first (RFC 9126)',
    );
  }

  // 3. No parameter more than once (§3.1), but `resource` (RFC 8707 §2).
  for (const name of new Set(params.keys())) {
    if (!REPEATABLE.has(name) && single(params, name).repeated)
      return fail('invalid_request', `parameter repeated: ${name.slice(0, 64)}`);
  }
  if (stateValue !== undefined && stateValue.length > MAX_STATE_LENGTH) {
    return fail('invalid_request', `state is longer than ${MAX_STATE_LENGTH} characters`);
  }

  // 4. The response type, and whether this client may use it: `code` needs the authorization_code
  // grant, a token or an ID token from this endpoint the implicit grant (Core §3.2, §3.3).
  if (responseTypeParam.value === undefined) return fail('invalid_request', 'response_type is required');
  if (responseType === undefined) {
    return fail(
      'unsupported_response_type',
      openid
        ? 'response_type must be code, token, id_token or a combination of them'
        : 'response_type must be code or token',
    );
  }
  const parts = responseParts(responseType);
  const grants: GrantType[] = [];
  if (parts.code) grants.push('authorization_code');
  if (parts.token || parts.idToken) grants.push('implicit');
  const missing = grants.find((grant) => !client.grantTypes.includes(grant));
  if (missing !== undefined) {
    return fail('unauthorized_client', `this client is not registered for the ${missing} grant`);
  }

  // 4a. The response mode (OAuth 2.0 Multiple Response Type Encoding Practices §2.1, §5; Form Post §2).
  if (modeParam.value !== undefined) {
    if (askedMode === undefined) {
      return fail('invalid_request', 'response_mode must be query, fragment or form_post');
    }
    if (!modeAllowed(askedMode, responseType)) {
      return fail('invalid_request', 'a token or an ID token is never sent in the query (response_mode)');
    }
  }

  // 4b. Request objects (Core §6): not supported, and said so, so no client believes its signed
  // request was obeyed.
  if (openid && params.has('request')) {
    return fail('request_not_supported', 'request objects are not supported; send the parameters themselves');
  }
  // RFC 9126 §2.1: a pushed request never holds a request_uri. At /authorize, only the pushed
  // authorization request endpoint's are read (step 1a); any other, OAuth 2.0 or OpenID Connect, is
  // refused rather than ignored, so no client believes the parameters it points to were obeyed.
  if (single(params, 'request_uri').value !== undefined) {
    if (pushing) return fail('invalid_request', 'request_uri must not be sent in a pushed request');
    return fail(
      'request_uri_not_supported',
      'request_uri is supported only as returned by the pushed authorization request endpoint',
    );
  }

  // The prompt, read before the scope: Core §11 keeps offline_access only where consent is asked.
  const promptValues = openid
    ? (single(params, 'prompt').value ?? '').split(' ').filter((value) => value !== '')
    : [];

  // 5. The scope: only scopes the client was registered with (§3.3). Core §11: offline_access is
  // ignored unless the response type returns a code and consent is asked: by prompt=consent, or by
  // the consent page itself, which lists it for the user to allow or untick (docs/decisions.md,
  // decision 17). Without prompt=consent it is kept only where it can be honoured (the client may
  // have the scope and the refresh_token grant) and a page can be shown (not prompt=none); elsewhere
  // it is ignored, as before, rather than refused. Core §3.1.2.1: the standard scope values for
  // claims Gatehouse does not keep are ignored, not refused.
  const offlineAllowed =
    client.scopes.includes(OFFLINE_ACCESS_SCOPE) && client.grantTypes.includes('refresh_token');
  const keepOffline =
    !openid ||
    (parts.code && (promptValues.includes('consent') || (offlineAllowed && !promptValues.includes('none'))));
  const ignored = (name: string) =>
    (name === OFFLINE_ACCESS_SCOPE && !keepOffline) ||
    (openid && UNSERVED_STANDARD_SCOPES.includes(name) && !client.scopes.includes(name));
  const withoutIgnored = (names: string[]) => names.filter((name) => !ignored(name));
  // 5a. The resources (RFC 8707 §2): each registered, each requested scope offered by one of them,
  // and the default scope what they offer; invalid_target otherwise.
  let scope: string[];
  let resources: string[];
  let resourceNames: Pick<ResourceServer, 'uri' | 'name'>[];
  try {
    const requested = parseScope(scopeParam.value);
    const values = params.getAll('resource');
    if (policy.resources === undefined && values.some((value) => value !== '')) {
      return fail('invalid_target', 'no resource server is registered here');
    }
    const targets = policy.resources === undefined ? [] : await policy.resources.resolve(values);
    scope = withoutIgnored(
      resolveScopeForResources(
        requested === undefined ? undefined : withoutIgnored(requested),
        client.scopes,
        targets,
      ),
    );
    resources = urisOf(targets);
    resourceNames = targets.map(({ uri, name }) => ({ uri, name }));
  } catch (error) {
    if (error instanceof OAuthError) return fail(error.code, error.description);
    throw error;
  }

  // 6. PKCE (RFC 7636 §4.3, §4.4.1), for every response type with a code; public clients must use
  // S256 (RFC 9700 §2.1.1).
  let codeChallenge: string | null = null;
  let codeChallengeMethod: 'S256' | 'plain' | null = null;
  if (parts.code) {
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

  // 6a. RFC 9449 §10: dpop_jkt binds the code to a DPoP key: a SHA-256 JWK thumbprint (RFC 7638),
  // base64url. Only a code has a token request to bind; a dpop_bound_access_tokens client (§5.2)
  // gets no token from this endpoint, where no proof can be sent.
  const dpopJktParam = single(params, 'dpop_jkt').value;
  let dpopJkt: string | null = null;
  if (dpopJktParam !== undefined) {
    if (!isJwkThumbprint(dpopJktParam)) {
      return fail('invalid_request', 'dpop_jkt must be a base64url SHA-256 JWK thumbprint (RFC 7638)');
    }
    if (parts.code) dpopJkt = dpopJktParam;
  }
  if (parts.token && client.dpopBoundAccessTokens) {
    return fail(
      'invalid_request',
      'this client takes only DPoP-bound access tokens, which the authorization endpoint cannot issue: use response_type code',
    );
  }

  // 7. The prompt and, for an OpenID Connect request, its other parameters.
  let oidc: OpenIdParams;
  if (openid) {
    const read = await readOpenIdParams(params, promptValues, parts, policy);
    if ('error' in read) return fail(read.error, read.description);
    oidc = read;
  } else {
    // An OAuth 2.0 request: only prompt=consent, as Gatehouse always read it.
    const consent = (single(params, 'prompt').value ?? '').split(' ').includes('consent');
    oidc = {
      nonce: null,
      prompt: { none: false, login: false, consent, selectAccount: false },
      maxAge: null,
      loginHint: undefined,
      idTokenHint: undefined,
    };
  }

  return {
    outcome: 'valid',
    request: {
      client,
      responseType,
      responseMode: mode,
      redirectUri,
      scope,
      resources,
      resourceNames,
      state: stateValue,
      codeChallenge,
      codeChallengeMethod,
      forceConsent: oidc.prompt.consent,
      openid,
      ...oidc,
      query: carried ?? params.toString(),
      pushedRequest,
      dpopJkt,
    },
  };
}

/** The OpenID Connect parameters of a request (Core §3.1.2.1), as AuthorizationRequest keeps them. */
type OpenIdParams = Pick<AuthorizationRequest, 'nonce' | 'prompt' | 'maxAge' | 'loginHint' | 'idTokenHint'>;

/**
 * Core §3.1.2.1: display, ui_locales, claims_locales and acr_values are optional to honour and are not
 * read; unknown parameters are ignored. An error is invalid_request, redirected to the client.
 */
async function readOpenIdParams(
  params: URLSearchParams,
  promptValues: readonly string[],
  parts: ResponseParts,
  policy: Pick<AuthorizationPolicy, 'verifyIdTokenHint'>,
): Promise<OpenIdParams | { error: 'invalid_request'; description: string }> {
  const invalid = (description: string) => ({ error: 'invalid_request' as const, description });
  // 7a. nonce: required whenever an ID token comes from this endpoint (Core §3.2.2.1, §3.3.2.11).
  const nonce = single(params, 'nonce').value ?? null;
  if (nonce === null && parts.idToken) {
    return invalid('nonce is required when the response includes an ID token');
  }
  if (nonce !== null && nonce.length > MAX_NONCE_LENGTH) {
    return invalid(`nonce is longer than ${MAX_NONCE_LENGTH} characters`);
  }
  // 7b. prompt: known values only, and none alone.
  const prompt: Prompt = { none: false, login: false, consent: false, selectAccount: false };
  for (const value of promptValues) {
    const key = PROMPT_VALUES.get(value);
    if (key === undefined) return invalid(`unknown prompt value: ${value.slice(0, 64)}`);
    prompt[key] = true;
  }
  if (prompt.none && promptValues.length > 1) {
    return invalid('prompt=none cannot be combined with other prompt values');
  }
  // 7c. max_age: a non-negative number of seconds.
  const maxAgeParam = single(params, 'max_age').value;
  let maxAge: number | null = null;
  if (maxAgeParam !== undefined) {
    if (!/^\d{1,10}$/.test(maxAgeParam)) return invalid('max_age must be a whole number of seconds');
    maxAge = Number(maxAgeParam);
  }
  // 7d. id_token_hint: an ID token this server issued (an expired one still hints).
  const hintParam = single(params, 'id_token_hint').value;
  let idTokenHint: IdTokenHint | undefined;
  if (hintParam !== undefined) {
    idTokenHint = await policy.verifyIdTokenHint?.(hintParam);
    if (idTokenHint === undefined) {
      return invalid('id_token_hint is not an ID token issued by this server');
    }
  }
  const loginHint = single(params, 'login_hint').value?.slice(0, MAX_LOGIN_HINT_LENGTH);
  return { nonce, prompt, maxAge, loginHint, idTokenHint };
}
