import type { OAuthErrorCode } from '../errors.js';
import type { IdTokenHint } from '../tokens/id-token-hint.js';
import type { Client, ResourceServer } from '../model.js';
import type { ClientStore } from '../ports.js';
import type { AuthenticationRequirement } from '../sign-in/assurance.js';
import type { ResourceTargets } from '../scopes/resources.js';
import { authorizationRequest, refuse, requestDraft, trustDraft, trusted } from './request-steps/draft.js';
import { REQUEST_STEPS, TRUST_STEPS } from './request-steps/index.js';
import type { AuthorizationResponse, ResponseMode, ResponseType } from './response.js';

// The response types live with the response modes (response.ts); exported here as they always were.
export { RESPONSE_TYPES, responseParts, type ResponseParts, type ResponseType } from './response.js';

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
  /**
   * Core §3.1.2.1 `max_age` (RFC 9470 §4 for an OAuth 2.0 request too): the oldest sign-in, in seconds,
   * that may answer without a new one.
   */
  maxAge: number | null;
  /**
   * What the request asks of the sign-in that answers it: `acr_values`, the `claims` parameter's `acr`
   * and `max_age` (docs/decisions.md, decision 36); checked with sign-in/assurance.ts `unsatisfied`.
   */
  authenticationRequirement: AuthenticationRequirement;
  /** Core §3.1.2.1 `login_hint`: fills in the user name on the sign-in page. */
  loginHint: string | undefined;
  /**
   * The upstream identity provider to sign in through at once, skipping the sign-in page (decision
   * 40): `idp_hint=<id>`, or a `login_hint` of the form `idp:<id>`. A hint: one that names no provider
   * offered is ignored.
   */
  idpHint?: string;
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
      /** Its Client ID Metadata Document's host, shown beside the name (decision 46); absent for others. */
      clientHost?: string;
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

/**
 * Validates an authorization request in the order RFC 6749 §4.1.2.1 requires: first what decides
 * whether the redirect URI can be trusted (TRUST_STEPS: client, redirect URI), and only then
 * everything else (REQUEST_STEPS), whose errors are sent to that URI, in the response mode the request
 * asked for (or its response type's default). The steps are listed, in order, in request-steps/.
 */
export async function validateAuthorizationRequest(
  query: string,
  clients: ClientStore,
  policy: AuthorizationPolicy,
): Promise<AuthorizationValidation> {
  const trust = trustDraft(query, clients, policy);
  for (const step of TRUST_STEPS) {
    const failure = await step.run(trust);
    if (failure !== undefined) return { outcome: 'error-page', description: failure.page };
  }
  const draft = requestDraft(trusted(trust), policy);
  for (const step of REQUEST_STEPS) {
    const failure = await step.run(draft);
    if (failure !== undefined) return refuse(draft, failure);
  }
  return { outcome: 'valid', request: authorizationRequest(draft) };
}
