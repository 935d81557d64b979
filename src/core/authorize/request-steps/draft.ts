import type { OAuthErrorCode } from '../../errors.js';
import { OAuthError } from '../../errors.js';
import type { Client } from '../../model.js';
import { clientHostField } from '../../clients/metadata-documents.js';
import type { AuthenticationRequirement } from '../../sign-in/assurance.js';
import type { ClientStore } from '../../ports.js';
import type { AuthorizationPolicy, AuthorizationRequest, AuthorizationValidation } from '../request.js';
import {
  authorizationErrorResponse,
  defaultResponseMode,
  modeAllowed,
  parseResponseType,
  RESPONSE_MODES,
  type ResponseMode,
  type ResponseType,
} from '../response.js';

/**
 * A parameter's single value. RFC 6749 §3.1: parameters without a value count as omitted, and no
 * parameter may appear more than once.
 */
export function single(
  params: URLSearchParams,
  name: string,
): { value: string | undefined; repeated: boolean } {
  const values = params.getAll(name).filter((value) => value !== '');
  return { value: values[0], repeated: values.length > 1 };
}

/**
 * A field an earlier step fills. Its absence is a step list out of order (a bug of ours, never a bad
 * request), so it throws rather than answers.
 */
export function filled<T>(value: T | undefined, field: string, step: string): T {
  if (value === undefined) throw new Error(`authorization step ${step} has not run: ${field} is not set`);
  return value;
}

/**
 * An error shown on the server's own page: the redirect URI is not yet trusted, so nothing is
 * redirected (RFC 6749 §4.1.2.1).
 */
export interface PageError {
  page: string;
}

/**
 * An error of a request whose redirect URI is trusted: sent there (RFC 6749 §4.1.2.1, §4.2.2.1), or
 * shown on a page for a self-registered client (see refuse).
 */
export interface StepError {
  error: OAuthErrorCode;
  description: string;
}

/** The request as the trust steps read it, each filling what the next ones need. */
export interface TrustDraft {
  readonly clients: ClientStore;
  readonly policy: AuthorizationPolicy;
  /** The request came to POST /par (RFC 9126 §2.1), not to /authorize. */
  readonly pushing: boolean;
  /** The request's parameters: the URL's, or a pushed request's once it is opened. */
  params: URLSearchParams;
  /** Set by the `client` step. */
  client?: Client;
  /** Set by the `pushed-request` step: the pushed request's stored hash (RFC 9126 §4). */
  pushedRequest: string | null;
  /** Set by the `pushed-request` step: the query carried through sign-in and consent instead. */
  carriedQuery?: string;
  /** Set by the `redirect-uri` step: an OpenID Connect request (Core §3.1.2.1). */
  openid?: boolean;
  /** Set by the `redirect-uri` step: the verified redirect URI errors may now be sent to. */
  redirectUri?: string;
}

/** A step run before the redirect URI is trusted: any error it finds is shown on a page. */
export interface TrustStep {
  readonly name: string;
  run(draft: TrustDraft): Promise<PageError | undefined> | PageError | undefined;
}

export function trustDraft(query: string, clients: ClientStore, policy: AuthorizationPolicy): TrustDraft {
  return {
    clients,
    policy,
    pushing: policy.endpoint === 'push',
    params: new URLSearchParams(query),
    pushedRequest: null,
  };
}

/** What the trust steps established: whose request it is, and where its errors may go. */
export interface TrustedRequest {
  params: URLSearchParams;
  client: Client;
  openid: boolean;
  redirectUri: string;
  pushedRequest: string | null;
  carriedQuery: string | undefined;
}

export function trusted(draft: TrustDraft): TrustedRequest {
  return {
    params: draft.params,
    client: filled(draft.client, 'client', 'client'),
    openid: filled(draft.openid, 'openid', 'redirect-uri'),
    redirectUri: filled(draft.redirectUri, 'redirectUri', 'redirect-uri'),
    pushedRequest: draft.pushedRequest,
    carriedQuery: draft.carriedQuery,
  };
}

/** The OpenID Connect parameters of a request (Core §3.1.2.1), as AuthorizationRequest keeps them. */
export type OpenIdParams = Pick<
  AuthorizationRequest,
  'nonce' | 'prompt' | 'maxAge' | 'loginHint' | 'idTokenHint'
>;

/**
 * The request once its redirect URI is trusted: where its errors go, read once, and what the
 * request steps fill, each in its turn.
 */
export interface RequestDraft extends Readonly<TrustedRequest> {
  readonly policy: AuthorizationPolicy;
  readonly pushing: boolean;
  /**
   * `response_type`, read for where errors go: undefined when absent, repeated or not one this
   * request may use (the `response-type` step refuses it; later steps read it with responseTypeOf).
   */
  readonly responseType: ResponseType | undefined;
  /** The `response_mode` named (OpenID Connect requests only), once and known; else undefined. */
  readonly askedMode: ResponseMode | undefined;
  /** Where the answer and the errors travel: the mode asked for when it may carry the type, else its default. */
  readonly responseMode: ResponseMode;
  /** `state`, echoed in every response; undefined when absent or repeated. */
  readonly state: string | undefined;
  /** Whether errors are redirected; a self-registered client's are shown on a page (see refuse). */
  readonly redirectsErrors: boolean;
  /** Set by the `scope-and-resources` step. */
  scope?: Pick<AuthorizationRequest, 'scope' | 'resources' | 'resourceNames'>;
  /** Set by the `pkce` step when a challenge was sent. */
  pkce: Pick<AuthorizationRequest, 'codeChallenge' | 'codeChallengeMethod'>;
  /** Set by the `dpop` step. */
  dpopJkt: string | null;
  /** Set by the `openid-parameters` step. */
  openIdParams?: OpenIdParams;
  /** Set by the `authentication-requirements` step (acr_values, claims, max_age; decision 36). */
  authenticationRequirement?: AuthenticationRequirement;
}

/** A step run once the redirect URI is trusted: any error it finds goes back to the client (refuse). */
export interface RequestStep {
  readonly name: string;
  run(draft: RequestDraft): Promise<StepError | undefined> | StepError | undefined;
}

/**
 * Opens the request steps' draft. The response type and mode decide where errors go: the fragment for
 * the implicit grant (RFC 6749 §4.2.2.1) and every type returning a token or an ID token, the query
 * otherwise (§4.1.2.1), or the response_mode asked for when it may carry this type (OAuth 2.0 Form
 * Post Response Mode §2). RFC 9700 §4.11.2: a client that registered itself chose its redirect URIs
 * unchecked, so an error redirect would make this server an open redirector for whoever registers
 * one; its errors are shown on a page (docs/decisions.md, decision 20). The pushed authorization
 * request endpoint answers the client directly, never by redirect.
 */
export function requestDraft(request: TrustedRequest, policy: AuthorizationPolicy): RequestDraft {
  const { params, openid } = request;
  const pushing = policy.endpoint === 'push';
  const responseTypeParam = single(params, 'response_type');
  const responseType = responseTypeParam.repeated
    ? undefined
    : parseResponseType(responseTypeParam.value, openid);
  const modeParam = openid ? single(params, 'response_mode') : { value: undefined, repeated: false };
  const askedMode = RESPONSE_MODES.find((mode) => mode === modeParam.value && !modeParam.repeated);
  let responseMode: ResponseMode = responseType === undefined ? 'query' : defaultResponseMode(responseType);
  if (askedMode !== undefined && responseType !== undefined && modeAllowed(askedMode, responseType)) {
    responseMode = askedMode;
  }
  const state = single(params, 'state');
  return {
    ...request,
    policy,
    pushing,
    responseType,
    askedMode,
    responseMode,
    state: state.repeated ? undefined : state.value,
    redirectsErrors: request.client.registration === 'operator' || pushing,
    pkce: { codeChallenge: null, codeChallengeMethod: null },
    dpopJkt: null,
  };
}

/** The response type, once the `response-type` step has accepted it. */
export function responseTypeOf(draft: RequestDraft): ResponseType {
  return filled(draft.responseType, 'responseType', 'response-type');
}

/**
 * The `prompt` values of an OpenID Connect request (Core §3.1.2.1), as sent; none for an OAuth 2.0
 * one. Read by the scope step too: Core §11 keeps offline_access only where consent is asked.
 */
export function promptValues(draft: Pick<RequestDraft, 'params' | 'openid'>): string[] {
  return draft.openid
    ? (single(draft.params, 'prompt').value ?? '').split(' ').filter((value) => value !== '')
    : [];
}

/**
 * A request step's error: redirected to the verified redirect URI in the request's response mode,
 * with its state and the issuer (RFC 6749 §4.1.2.1, RFC 9207 §2); for a self-registered client, an
 * error page instead (requestDraft). Only answers to the user (a denial, prompt=none's
 * login_required and the like, elsewhere) still go back to such a client.
 */
export function refuse(draft: RequestDraft, { error, description }: StepError): AuthorizationValidation {
  if (!draft.redirectsErrors) {
    return {
      outcome: 'error-page',
      description: `The application sent a request that cannot be answered: ${description} (${error}).`,
    };
  }
  return {
    outcome: 'error-redirect',
    error,
    clientName: draft.client.name,
    ...clientHostField(draft.client),
    response: authorizationErrorResponse(
      draft.redirectUri,
      draft.responseMode,
      new OAuthError(error, description),
      draft.state,
      draft.policy.issuer,
    ),
    pushedRequest: draft.pushedRequest,
  };
}

/** The request every step accepted, as the rest of the authorization endpoint reads it. */
export function authorizationRequest(draft: RequestDraft): AuthorizationRequest {
  const scope = filled(draft.scope, 'scope', 'scope-and-resources');
  const oidc = filled(draft.openIdParams, 'openIdParams', 'openid-parameters');
  const requirement = filled(
    draft.authenticationRequirement,
    'authenticationRequirement',
    'authentication-requirements',
  );
  return {
    client: draft.client,
    responseType: responseTypeOf(draft),
    responseMode: draft.responseMode,
    redirectUri: draft.redirectUri,
    ...scope,
    state: draft.state,
    ...draft.pkce,
    forceConsent: oidc.prompt.consent,
    openid: draft.openid,
    ...oidc,
    authenticationRequirement: requirement,
    query: draft.carriedQuery ?? draft.params.toString(),
    pushedRequest: draft.pushedRequest,
    dpopJkt: draft.dpopJkt,
    ...idpHintOf(draft.params, oidc.loginHint),
  };
}

/** A provider id is a slug (model.ts IdentityProvider.id); anything else names none. */
const PROVIDER_ID = /^[a-z0-9][a-z0-9-]{0,62}$/;

/**
 * Decision 40: `idp_hint=<id>` (the name Keycloak's and others' brokers give it) picks the upstream
 * provider to sign in through; so does a `login_hint` of the form `idp:<id>`, for clients that can
 * send only the standard hint. Either is only a hint: the sign-in page is shown when it names none.
 */
function idpHintOf(
  params: URLSearchParams,
  loginHint: string | undefined,
): Pick<AuthorizationRequest, 'idpHint'> {
  const hint =
    single(params, 'idp_hint').value ?? (loginHint?.startsWith('idp:') ? loginHint.slice(4) : undefined);
  return hint !== undefined && PROVIDER_ID.test(hint) ? { idpHint: hint } : {};
}
