import type { IdTokenHint } from '../tokens/id-token-hint.js';
import type { Client } from '../model.js';
import type { ClientStore } from '../ports.js';
import { isRegisteredRedirectUri } from '../clients/redirect-uri.js';

/** An RP-initiated logout request (RP-Initiated Logout 1.0 §2) that passed every check. */
export interface LogoutRequest {
  /** The client that sent the user: named by client_id or by the id_token_hint's audience. */
  client: Client | undefined;
  /** Where to send the browser after signing out: one of the client's registered URIs, exactly. */
  postLogoutRedirectUri: string | undefined;
  state: string | undefined;
  /** The ID token the client holds for the user, verified as ours. */
  idTokenHint: IdTokenHint | undefined;
  /** The query as received (normalised), carried through the confirmation page and checked again. */
  query: string;
}

export type LogoutValidation =
  | { outcome: 'valid'; request: LogoutRequest }
  /** Nothing is redirected (RP-Initiated Logout 1.0 §3): the page says what is wrong. */
  | { outcome: 'error-page'; description: string };

export interface LogoutDependencies {
  clients: Pick<ClientStore, 'get'>;
  verifyIdTokenHint: (token: string) => Promise<IdTokenHint | undefined>;
}

const MAX_STATE_LENGTH = 2048;

/**
 * The end-session endpoint's checks (RP-Initiated Logout 1.0 §2, §3): an `id_token_hint` must be an
 * ID token of this server (expired or not); `client_id`, when sent with it, must be one of its
 * audience; a `post_logout_redirect_uri` needs a known client, and must be exactly one the client
 * registered, else there is no redirect at all but an error page; for a self-registered client it also
 * needs an `id_token_hint` issued to that client (docs/decisions.md, decision 20). `ui_locales` and every unknown
 * parameter are ignored.
 */
export async function validateLogoutRequest(
  query: string,
  deps: LogoutDependencies,
): Promise<LogoutValidation> {
  const params = new URLSearchParams(query);
  const fail = (description: string): LogoutValidation => ({ outcome: 'error-page', description });
  for (const name of new Set(params.keys())) {
    if (params.getAll(name).filter((value) => value !== '').length > 1) {
      return fail(`${name.slice(0, 64)} was sent more than once.`);
    }
  }
  const value = (name: string) => params.getAll(name).find((item) => item !== '');

  const hintParam = value('id_token_hint');
  let idTokenHint: IdTokenHint | undefined;
  if (hintParam !== undefined) {
    idTokenHint = await deps.verifyIdTokenHint(hintParam);
    if (idTokenHint === undefined) {
      return fail('The application sent a sign-in token (id_token_hint) that was not issued here.');
    }
  }

  const clientId = value('client_id');
  if (clientId !== undefined && idTokenHint !== undefined && !idTokenHint.audience.includes(clientId)) {
    return fail('The application (client_id) is not the one the sign-in token was issued to.');
  }
  // An ID token of Gatehouse has one audience, its client (Core §2).
  const named = clientId ?? (idTokenHint?.audience.length === 1 ? idTokenHint.audience[0] : undefined);
  const client = named === undefined ? undefined : await deps.clients.get(named);
  if (clientId !== undefined && client === undefined) {
    return fail('The application is not registered here.');
  }

  const redirect = value('post_logout_redirect_uri');
  if (redirect !== undefined) {
    if (client === undefined) {
      return fail(
        'The request does not say which application it is from (id_token_hint or client_id), so it cannot be sent back.',
      );
    }
    if (!isRegisteredRedirectUri(client.postLogoutRedirectUris, redirect)) {
      return fail('The return address (post_logout_redirect_uri) is not one the application registered.');
    }
    // A client that registered itself chose its URIs unchecked: without an ID token proving that a
    // user signed in to it here, anyone could register one and use /logout as an open redirector
    // (RFC 9700 §4.11; docs/decisions.md, decision 20).
    if (client.registration !== 'operator' && !idTokenHint?.audience.includes(client.id)) {
      return fail(
        'This application registered itself, so it can be sent back to only with a sign-in token (id_token_hint) it was issued.',
      );
    }
  }

  const state = value('state');
  if (state !== undefined && state.length > MAX_STATE_LENGTH) {
    return fail(`The state is longer than ${MAX_STATE_LENGTH} characters.`);
  }
  return {
    outcome: 'valid',
    request: { client, postLogoutRedirectUri: redirect, state, idTokenHint, query: params.toString() },
  };
}

/**
 * Where the browser goes after signing out (RP-Initiated Logout 1.0 §3): the registered URI with
 * `state` added to its query, or nowhere when the request named none.
 */
export function postLogoutLocation(request: LogoutRequest): string | undefined {
  if (request.postLogoutRedirectUri === undefined) return undefined;
  const url = new URL(request.postLogoutRedirectUri);
  if (request.state !== undefined) url.searchParams.append('state', request.state);
  return url.toString();
}

/** The end-session endpoint's rules, under this server's clients and keys. */
export class RpInitiatedLogout {
  constructor(private readonly deps: LogoutDependencies) {}

  validate(query: string): Promise<LogoutValidation> {
    return validateLogoutRequest(query, this.deps);
  }

  location(request: LogoutRequest): string | undefined {
    return postLogoutLocation(request);
  }
}
