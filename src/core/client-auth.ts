import { safeEqual, sha256 } from '../shared/crypto.js';
import { invalidClient, invalidRequest } from './errors.js';
import type { Client } from './model.js';
import type { ClientStore } from './ports.js';

export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none';

export interface ClientCredentialsInput {
  /** The raw Authorization header, if any. */
  authorization: string | undefined;
  /** client_id and client_secret from the form body, if any. */
  clientId: string | undefined;
  clientSecret: string | undefined;
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
    const formDecode = (part: string) => decodeURIComponent(part.replace(/\+/g, ' '));
    return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
  } catch {
    throw invalidClient('malformed Basic credentials');
  }
}

/**
 * Authenticates the client of a token, revocation or introspection request.
 * Exactly one method may be used (RFC 6749 §2.3); a public client identifies itself by client_id alone.
 */
export async function authenticateClient(
  input: ClientCredentialsInput,
  clients: ClientStore,
): Promise<AuthenticatedClient> {
  let id: string;
  let secret: string | undefined;
  let method: ClientAuthMethod;
  if (input.authorization !== undefined && /^basic /i.test(input.authorization)) {
    if (input.clientSecret !== undefined) {
      throw invalidRequest('use one client authentication method, not both Basic and client_secret');
    }
    ({ id, secret } = parseBasic(input.authorization));
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

  const client = id === '' ? undefined : await clients.get(id);
  if (client === undefined) throw invalidClient('unknown client or wrong credentials');
  if (client.isPublic) {
    if (method !== 'none') throw invalidClient('public clients have no secret');
    return { client, method };
  }
  if (secret === undefined || client.secretHash === null || !safeEqual(sha256(secret), client.secretHash)) {
    throw invalidClient('unknown client or wrong credentials');
  }
  return { client, method };
}
