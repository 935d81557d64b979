/**
 * RFC 6750 on the resource-server side, framework-free: where a request carries its access token,
 * and how refusals are announced. Shared by Gatehouse's own /v1 API and the resource-server library.
 */

export type TokenErrorCode = 'invalid_request' | 'invalid_token' | 'insufficient_scope';

/** The scheme a credential came with: Bearer (header, form body or query) or MAC (header only). */
export type CredentialScheme = 'bearer' | 'mac';

export interface PresentedCredential {
  scheme: CredentialScheme;
  /** For bearer tokens, the token; for MAC, the `id` is parsed later from `macHeader`. */
  token: string;
  source: 'header' | 'body' | 'query';
  /** The raw MAC Authorization header, when scheme is mac. */
  macHeader?: string;
}

/** A refusal: its HTTP status follows RFC 6750 §3.1 from the error code (none: 401). */
export class TokenError extends Error {
  readonly status: 400 | 401 | 403;

  constructor(
    readonly code: TokenErrorCode | undefined,
    readonly description: string,
    readonly options: { scheme?: CredentialScheme; scope?: string } = {},
  ) {
    super(description);
    this.name = 'TokenError';
    this.status = code === 'invalid_request' ? 400 : code === 'insufficient_scope' ? 403 : 401;
  }

  /**
   * The WWW-Authenticate challenge (RFC 6750 §3; for MAC, docs/decisions.md, decision 3), naming the
   * resource's RFC 9728 metadata when given.
   */
  challenge(realm: string, resourceMetadata?: string): string {
    return formatChallenge(this.options.scheme ?? 'bearer', realm, this, resourceMetadata);
  }
}

// RFC 6750 §3: error_description and scope are quoted-strings limited to %x20-21 / %x23-5B / %x5D-7E.
function quotedValue(value: string): string {
  return value.replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, '?');
}

/**
 * A challenge for `scheme`. `resourceMetadata`, the URL of the resource's protected resource metadata,
 * goes into Bearer challenges (RFC 9728 §5.1), with or without an error, so that a client refused for
 * any reason can find the authorization server.
 */
export function formatChallenge(
  scheme: CredentialScheme,
  realm: string,
  error?: TokenError,
  resourceMetadata?: string,
): string {
  const params: string[] = [];
  // The MAC drafts define no realm parameter; Gatehouse answers `MAC error="invalid_token"` (decision 3).
  if (scheme === 'bearer') params.push(`realm="${quotedValue(realm)}"`);
  if (scheme === 'bearer' && resourceMetadata !== undefined) {
    params.push(`resource_metadata="${quotedValue(resourceMetadata)}"`);
  }
  // RFC 6750 §3.1: a request without any authentication gets no error code.
  if (error?.code !== undefined) {
    params.push(`error="${error.code}"`);
    params.push(`error_description="${quotedValue(error.description)}"`);
    if (error.options.scope !== undefined) params.push(`scope="${quotedValue(error.options.scope)}"`);
  }
  return `${scheme === 'mac' ? 'MAC' : 'Bearer'} ${params.join(', ')}`;
}

// RFC 6750 §2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
const BEARER_HEADER = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

export interface CredentialSources {
  authorization: string | undefined;
  /** The parsed body, when the request carried application/x-www-form-urlencoded (RFC 6750 §2.2). */
  formBody: Record<string, unknown> | undefined;
  method: string;
  query: Record<string, unknown> | undefined;
  /** RFC 6750 §2.3 is a MAY with security drawbacks (§5.3): accepted only when enabled. */
  allowQuery: boolean;
}

/**
 * Finds the one credential a request presents. A scheme other than Bearer or MAC counts as none;
 * more than one method is invalid_request (RFC 6750 §2: "MUST NOT use more than one method").
 */
export function extractCredential(sources: CredentialSources): PresentedCredential | undefined {
  const found: PresentedCredential[] = [];
  const header = sources.authorization?.trim();
  if (header !== undefined && header !== '') {
    const scheme = header.split(' ', 1)[0]?.toLowerCase();
    if (scheme === 'bearer') {
      const match = BEARER_HEADER.exec(header);
      if (!match?.[1]) throw new TokenError('invalid_request', 'malformed Bearer authorization header');
      found.push({ scheme: 'bearer', token: match[1], source: 'header' });
    } else if (scheme === 'mac') {
      found.push({ scheme: 'mac', token: '', source: 'header', macHeader: header });
    }
  }
  const fromBody = sources.formBody?.access_token;
  if (fromBody !== undefined) {
    // §2.2: only with a method whose body has defined semantics, and a single value.
    if (sources.method === 'GET' || sources.method === 'HEAD') {
      throw new TokenError('invalid_request', 'access_token in the body is not allowed with GET');
    }
    if (typeof fromBody !== 'string' || fromBody === '') {
      throw new TokenError('invalid_request', 'access_token must be given once');
    }
    found.push({ scheme: 'bearer', token: fromBody, source: 'body' });
  }
  const fromQuery = sources.query?.access_token;
  if (fromQuery !== undefined) {
    if (!sources.allowQuery) {
      throw new TokenError(
        'invalid_request',
        'access_token is not accepted in the query; use the Authorization header',
      );
    }
    if (typeof fromQuery !== 'string' || fromQuery === '') {
      throw new TokenError('invalid_request', 'access_token must be given once');
    }
    found.push({ scheme: 'bearer', token: fromQuery, source: 'query' });
  }
  if (found.length > 1) {
    throw new TokenError('invalid_request', 'use exactly one method to present the access token');
  }
  return found[0];
}

/** The scopes of `required` missing from a space-delimited granted scope. */
export function missingScopes(granted: string, required: readonly string[]): string[] {
  const have = new Set(granted.split(' ').filter((s) => s !== ''));
  return required.filter((scope) => !have.has(scope));
}
