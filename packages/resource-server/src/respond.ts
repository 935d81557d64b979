import { TokenError } from './rfc6750.js';
import { DpopReplayStoreFullError } from './dpop.js';
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
 * RFC 9728 §5.1 parameter of the challenges), or 503 when introspection could not run or a memory
 * nonce or replay store is full: unverifiable means refused. Other errors are the framework's to
 * handle. `dpopAlgorithms`: DPoP is accepted, and offered in the challenges (RFC 9449 §7.1).
 */
export function refusalFor(
  error: unknown,
  realm: string,
  resourceMetadata?: string,
  dpopAlgorithms?: readonly string[],
): Refusal | undefined {
  if (error instanceof TokenError) {
    return {
      status: error.status,
      headers: {
        ...error.options.headers,
        'www-authenticate': error.challenge(realm, resourceMetadata, dpopAlgorithms),
        'cache-control': 'no-store',
      },
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
  if (error instanceof DpopReplayStoreFullError) {
    return {
      status: 503,
      headers: { 'retry-after': '5', 'cache-control': 'no-store' },
      body: {
        error: 'temporarily_unavailable',
        error_description: 'the DPoP proof cannot be checked for replay right now',
      },
    };
  }
  return undefined;
}

/** Every `DPoP` header field of a Node request, as sent: Node would join repeated ones into one value. */
export function dpopHeaderValues(rawHeaders: readonly string[]): string[] {
  const values: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]?.toLowerCase() === 'dpop') values.push(rawHeaders[i + 1] ?? '');
  }
  return values;
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
