import { TokenError } from './rfc6750.js';
import { NonceStoreFullError } from './mac.js';
import { IntrospectionUnavailableError } from './resource-server.js';

/** An HTTP answer an adapter sends for a refused request. */
export interface Refusal {
  status: number;
  headers: Record<string, string>;
  body: { error?: string; error_description: string };
}

/**
 * The RFC 6750 answer to a TokenError (status, WWW-Authenticate, JSON body; `resourceMetadata` is the
 * RFC 9728 §5.1 parameter of Bearer challenges), or 503 when introspection could not run or the memory
 * nonce store is full: unverifiable means refused. Other errors are the framework's to handle.
 */
export function refusalFor(error: unknown, realm: string, resourceMetadata?: string): Refusal | undefined {
  if (error instanceof TokenError) {
    return {
      status: error.status,
      headers: { 'www-authenticate': error.challenge(realm, resourceMetadata), 'cache-control': 'no-store' },
      body: {
        ...(error.code === undefined ? {} : { error: error.code }),
        error_description: error.description,
      },
    };
  }
  if (error instanceof IntrospectionUnavailableError) {
    return {
      status: 503,
      headers: { 'retry-after': '5', 'cache-control': 'no-store' },
      body: { error: 'temporarily_unavailable', error_description: 'the token cannot be verified right now' },
    };
  }
  if (error instanceof NonceStoreFullError) {
    // Not the client's fault, and it may pass as nonces expire: 503 (RFC 9110 §15.6.4), like an
    // unreachable introspection endpoint.
    return {
      status: 503,
      headers: { 'retry-after': '5', 'cache-control': 'no-store' },
      body: {
        error: 'temporarily_unavailable',
        error_description: 'the MAC request cannot be checked for replay right now',
      },
    };
  }
  return undefined;
}

const FORM = 'application/x-www-form-urlencoded';

export function isForm(contentType: string | undefined): boolean {
  return contentType?.split(';', 1)[0]?.trim().toLowerCase() === FORM;
}

/** The RFC 9728 §3.2 answer: the metadata as JSON, public, and readable from any origin. */
export function metadataResponse(document: unknown): { headers: Record<string, string>; body: string } {
  return {
    headers: {
      'content-type': 'application/json',
      // Public by nature; browser-based clients (an MCP inspector) read it across origins.
      'access-control-allow-origin': '*',
      'cache-control': 'public, max-age=300',
    },
    body: JSON.stringify(document),
  };
}
