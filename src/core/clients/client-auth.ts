import { safeEqual, sha256 } from '../../shared/crypto.js';
import {
  ASSERTION_REJECTED,
  CLIENT_ASSERTION_TYPE,
  claimedClientId,
  type ClientAssertionVerifier,
} from './client-assertion.js';
import { invalidClient, invalidRequest } from '../errors.js';
import { ClientMetadataDocumentError } from './metadata-documents.js';
import type { Client, ClientAuthMethod } from '../model.js';
import type { ClientStore } from '../ports.js';

export type { ClientAuthMethod } from '../model.js';

export interface ClientCredentialsInput {
  /** The raw Authorization header, if any. */
  authorization: string | undefined;
  /** client_id and client_secret from the form body, if any. */
  clientId: string | undefined;
  clientSecret: string | undefined;
  /** client_assertion_type and client_assertion from the form body (RFC 7521 §4.2), if any. */
  clientAssertionType?: string | undefined;
  clientAssertion?: string | undefined;
  /**
   * The absolute URL of the endpoint the request was sent to, built from the issuer (never from the
   * request's Host header): a client assertion may name it as its audience (RFC 9126 §2). The token
   * endpoint and the issuer are accepted everywhere.
   */
  endpointUrl?: string;
}

/**
 * The client credentials of a form request (RFC 6749 §2.3.1, RFC 7521 §4.2), read the one way every
 * client-authenticated endpoint reads them (/token, /introspect, /revoke, /par,
 * /device_authorization): `param` gives a form parameter's single value (each endpoint's own reading
 * of repetition), `authorization` is the raw header, and `endpointUrl` the endpoint's URL under the
 * issuer, which a client assertion may name as its audience (the token endpoint's is always accepted).
 */
export function formClientCredentials(
  param: (name: string) => string | undefined,
  authorization: string | undefined,
  endpointUrl?: string,
): ClientCredentialsInput {
  return {
    authorization,
    clientId: param('client_id'),
    clientSecret: param('client_secret'),
    clientAssertionType: param('client_assertion_type'),
    clientAssertion: param('client_assertion'),
    ...(endpointUrl === undefined ? {} : { endpointUrl }),
  };
}

export interface AuthenticatedClient {
  client: Client;
  method: ClientAuthMethod;
}

/** RFC 6749 §2.3.1: id and secret are form-url-encoded before they are joined and base64-encoded. */
function parseBasic(header: string): { id: string; secret: string } {
  const match = /^basic[ ]+([A-Za-z0-9+/]+=*)[ ]*$/i.exec(header);
  if (!match?.[1]) throw invalidClient('malformed Basic credentials');
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw invalidClient('malformed Basic credentials');
  try {
    // Most ids and secrets are plain (no '%' or '+'), and decode to themselves: no decoding per request.
    const formDecode = (part: string) =>
      part.includes('%') || part.includes('+') ? decodeURIComponent(part.replace(/\+/g, ' ')) : part;
    return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
  } catch {
    throw invalidClient('malformed Basic credentials');
  }
}

const ONE_METHOD = 'use one client authentication method, not several';

/**
 * Authenticates the client of a token, revocation, introspection (or any client-authenticated)
 * request: Basic or client_secret_post for a client with a secret, whichever it was registered with;
 * a JWT assertion for a private_key_jwt client (RFC 7523 §2.2), checked by `assertions`; client_id
 * alone for a public client. Exactly one method per request (RFC 6749 §2.3). The engine's
 * `authenticateClient` is the one entry point; this is its rule.
 */
export async function authenticateClient(
  input: ClientCredentialsInput,
  clients: ClientStore,
  assertions?: ClientAssertionVerifier,
): Promise<AuthenticatedClient> {
  const basic = input.authorization !== undefined && /^basic /i.test(input.authorization);
  if (input.clientAssertionType !== undefined || input.clientAssertion !== undefined) {
    if (basic || input.clientSecret !== undefined) throw invalidRequest(ONE_METHOD);
    return authenticateAssertion(input, clients, assertions);
  }
  let id: string;
  let secret: string | undefined;
  let method: ClientAuthMethod;
  if (basic) {
    if (input.clientSecret !== undefined) {
      throw invalidRequest('use one client authentication method, not both Basic and client_secret');
    }
    ({ id, secret } = parseBasic(input.authorization as string));
    // Seed §4.2 lets the code grant repeat client_id in the form; it must name the same client.
    if (input.clientId !== undefined && input.clientId !== id) {
      throw invalidClient('client_id does not match the authenticated client');
    }
    method = 'client_secret_basic';
  } else if (input.clientId !== undefined) {
    id = input.clientId;
    secret = input.clientSecret;
    method = secret === undefined ? 'none' : 'client_secret_post';
  } else {
    throw invalidClient('client authentication required');
  }

  const client = id === '' ? undefined : await lookUp(clients, id);
  if (client === undefined) throw invalidClient('unknown client or wrong credentials');
  if (client.isPublic) {
    if (method !== 'none') throw invalidClient('public clients have no secret');
    return { client, method };
  }
  // A private_key_jwt client has no secret (secretHash null): no secret it is sent matches.
  if (secret === undefined || client.secretHash === null || !safeEqual(sha256(secret), client.secretHash)) {
    throw invalidClient('unknown client or wrong credentials');
  }
  return { client, method };
}

/**
 * The client `id` names. A Client ID Metadata Document that cannot be used (decision 46) is
 * invalid_client, saying why: the client's own document is at fault, and its owner must see what.
 */
async function lookUp(clients: ClientStore, id: string): Promise<Client | undefined> {
  try {
    return await clients.get(id);
  } catch (error) {
    if (error instanceof ClientMetadataDocumentError) throw invalidClient(error.message);
    throw error;
  }
}

/** RFC 7521 §4.2 with RFC 7523 §2.2: client_assertion_type, client_assertion, and client_id optional. */
async function authenticateAssertion(
  input: ClientCredentialsInput,
  clients: ClientStore,
  assertions: ClientAssertionVerifier | undefined,
): Promise<AuthenticatedClient> {
  if (input.clientAssertionType !== CLIENT_ASSERTION_TYPE) {
    throw invalidClient(`client_assertion_type must be ${CLIENT_ASSERTION_TYPE}`);
  }
  const assertion = input.clientAssertion;
  if (assertion === undefined || assertion === '') {
    throw invalidClient('client_assertion is required with client_assertion_type');
  }
  const claimed = claimedClientId(assertion);
  // RFC 7521 §4.2: client_id may be left out; when present it names the client the assertion is for.
  if (input.clientId !== undefined && claimed !== undefined && input.clientId !== claimed) {
    throw invalidClient('client_id does not match the client assertion');
  }
  const id = input.clientId ?? claimed;
  const client = id === undefined || id === '' ? undefined : await lookUp(clients, id);
  if (client === undefined || assertions === undefined) throw invalidClient(ASSERTION_REJECTED);
  await assertions.verify(client, assertion, input.endpointUrl);
  return { client, method: 'private_key_jwt' };
}
