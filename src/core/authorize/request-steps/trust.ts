import { ClientMetadataDocumentError } from '../../clients/metadata-documents.js';
import { canonicalRedirectUri, isRegisteredRedirectUri } from '../../clients/redirect-uri.js';
import { isPushedRequestUri } from '../pushed-requests.js';
import { filled, single, type PageError, type TrustDraft } from './draft.js';

// The steps that decide whether the redirect URI can be trusted (RFC 6749 §4.1.2.1): until they
// pass, no error is redirected, whatever else is wrong with the request.

const NO_REDIRECT_URI = 'The request must say where to return to (redirect_uri), and it did not.';

/** RFC 6749 §4.1.2.1: the client, named once by `client_id` (§3.1), and registered here. */
export async function checkClient(draft: TrustDraft): Promise<PageError | undefined> {
  const clientId = single(draft.params, 'client_id');
  if (clientId.repeated) return { page: 'client_id was sent more than once.' };
  if (clientId.value === undefined) return { page: 'The request does not say which application it is for.' };
  let client;
  try {
    client = await draft.clients.get(clientId.value);
  } catch (error) {
    // Decision 46: a Client ID Metadata Document that cannot be used is said on the page, never
    // redirected: nothing about the redirect URI can be trusted without the document.
    if (!(error instanceof ClientMetadataDocumentError)) throw error;
    return { page: `The application's metadata document cannot be used: ${error.message}.` };
  }
  if (client === undefined) return { page: 'The application is not registered here.' };
  draft.client = client;
  return undefined;
}

/**
 * RFC 9126 §4: a pushed request's parameters are the request's, and every other one of the URL is
 * ignored but client_id, which must name the client that pushed it (it is looked up by both). One
 * that cannot be found has no redirect URI to trust: an error page. Only at /authorize: a pushed
 * request never holds a request_uri (§2.1; the `request-uri` step).
 */
export async function openPushedRequest(draft: TrustDraft): Promise<PageError | undefined> {
  const client = filled(draft.client, 'client', 'client');
  const requestUri = single(draft.params, 'request_uri');
  if (draft.pushing || requestUri.value === undefined || !isPushedRequestUri(requestUri.value)) {
    return undefined;
  }
  if (requestUri.repeated) return { page: 'request_uri was sent more than once.' };
  const opened = await draft.policy.openPushedRequest?.(client, requestUri.value);
  if (opened === undefined) {
    return {
      page: 'This request has expired or was already used. Return to the application and start again.',
    };
  }
  draft.params = new URLSearchParams(opened.params);
  draft.pushedRequest = opened.hash;
  draft.carriedQuery = new URLSearchParams({
    client_id: client.id,
    request_uri: requestUri.value,
  }).toString();
  return undefined;
}

/**
 * The redirect URI: an exact string match against a registered one (RFC 6749 §3.1.2.3, RFC 9700
 * §4.1.3), omitted only when exactly one is registered (§3.1.2.3), and never in an OpenID Connect
 * request (Core §3.1.2.1). Also decides whether the request is an OpenID Connect one: its scope holds
 * openid (Core §3.1.2.1; an omitted scope stands for the client's registered ones, RFC 6749 §3.3).
 */
export function checkRedirectUri(draft: TrustDraft): PageError | undefined {
  const client = filled(draft.client, 'client', 'client');
  const redirect = single(draft.params, 'redirect_uri');
  if (redirect.repeated) return { page: 'redirect_uri was sent more than once.' };
  const requestedScope = (single(draft.params, 'scope').value ?? '').split(' ').filter((name) => name !== '');
  const openid =
    requestedScope.length > 0 ? requestedScope.includes('openid') : client.scopes.includes('openid');
  draft.openid = openid;
  if (redirect.value === undefined && openid) {
    // Core §3.1.2.1: redirect_uri is REQUIRED in an OpenID Connect request, one registered or not.
    return { page: NO_REDIRECT_URI };
  } else if (redirect.value === undefined) {
    // §3.1.2.3: it may be omitted only when exactly one is registered.
    const [first, ...others] = client.redirectUris;
    // Its canonical form: where a browser would go (see canonicalRedirectUri).
    const only = first === undefined ? undefined : canonicalRedirectUri(first).uri;
    if (only === undefined || others.length > 0) return { page: NO_REDIRECT_URI };
    draft.redirectUri = only;
  } else if (
    isRegisteredRedirectUri(client.redirectUris, redirect.value, {
      // Decision 46: a document describes a native client once for every port it may listen on.
      anyLoopbackPort: client.registration === 'document',
    })
  ) {
    draft.redirectUri = redirect.value;
  } else {
    return { page: 'The return address (redirect_uri) is not one the application registered.' };
  }
  return undefined;
}
