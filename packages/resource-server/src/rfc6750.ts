/**
 * RFC 6750 on the resource-server side, framework-free: where a request carries its access token,
 * and how refusals are announced; with RFC 9449 §7's DPoP scheme beside Bearer. Shared by
 * Gatehouse's own /v1 API and the resource-server library.
 */

/**
 * RFC 6750 §3.1's codes, RFC 9449 §7.1's and §9's for the DPoP scheme, and RFC 9470 §3's
 * `insufficient_user_authentication` (the token's sign-in is too weak or too old for the resource).
 */
export type TokenErrorCode =
  | 'invalid_request'
  | 'invalid_token'
  | 'insufficient_scope'
  | 'invalid_dpop_proof'
  | 'use_dpop_nonce'
  | 'insufficient_user_authentication';

/**
 * The scheme a credential came with: Bearer (header, form body or query), MAC (header only), or DPoP
 * (RFC 9449 §7.1: `Authorization: DPoP`, with the proof in the `DPoP` header).
 */
export type CredentialScheme = 'bearer' | 'mac' | 'dpop';

export interface PresentedCredential {
  scheme: CredentialScheme;
  /** For bearer and DPoP tokens, the token; for MAC, the `id` is parsed later from `macHeader`. */
  token: string;
  source: 'header' | 'body' | 'query';
  /** The raw MAC Authorization header, when scheme is mac. */
  macHeader?: string;
  /**
   * False when the token68 syntax of a header token was left to the caller (`deferTokenSyntax`):
   * before refusing the token for any reason, it must call `checkTokenSyntax`.
   */
  syntaxChecked?: false;
}

/**
 * A refusal: its HTTP status follows RFC 6750 §3.1 from the error code (none: 401; RFC 9449 §7.1 and
 * §9: invalid_dpop_proof and use_dpop_nonce are 401 too; RFC 9470 §3: insufficient_user_authentication
 * is 401).
 */
export class TokenError extends Error {
  readonly status: 400 | 401 | 403;

  constructor(
    readonly code: TokenErrorCode | undefined,
    readonly description: string,
    readonly options: {
      scheme?: CredentialScheme;
      scope?: string;
      /** RFC 9470 §3: the `acr_values` of an insufficient_user_authentication challenge, space-separated. */
      acrValues?: string;
      /** RFC 9470 §3: the `max_age` of an insufficient_user_authentication challenge, in seconds. */
      maxAge?: number;
      /** Headers the refusal travels with: RFC 9449 §9's `DPoP-Nonce` for use_dpop_nonce. */
      headers?: Readonly<Record<string, string>>;
    } = {},
  ) {
    super(description);
    this.name = 'TokenError';
    this.status = code === 'invalid_request' ? 400 : code === 'insufficient_scope' ? 403 : 401;
  }

  /**
   * The WWW-Authenticate value (RFC 6750 §3; for MAC, docs/decisions.md, decision 3; RFC 9449 §7.1),
   * naming the resource's RFC 9728 metadata when given. With `dpopAlgorithms` (DPoP is accepted, with
   * these proof algorithms) a refusal under Bearer, or of a request without a token, also offers the
   * DPoP scheme; one under DPoP carries `algs`.
   */
  challenge(realm: string, resourceMetadata?: string, dpopAlgorithms?: readonly string[]): string {
    const scheme = this.options.scheme ?? 'bearer';
    const own = formatChallenge(scheme, realm, this, resourceMetadata, dpopAlgorithms);
    if (dpopAlgorithms === undefined || scheme !== 'bearer') return own;
    // RFC 9110 §11.6.1: several challenges in one field, comma-separated.
    const noError = this.code === undefined ? this : undefined;
    return `${own}, ${formatChallenge('dpop', realm, noError, resourceMetadata, dpopAlgorithms)}`;
  }
}

// RFC 6750 §3: error_description and scope are quoted-strings limited to %x20-21 / %x23-5B / %x5D-7E.
function quotedValue(value: string): string {
  return value.replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, '?');
}

const SCHEME_NAMES: Record<CredentialScheme, string> = { bearer: 'Bearer', mac: 'MAC', dpop: 'DPoP' };

/**
 * A challenge for `scheme`. `resourceMetadata`, the URL of the resource's protected resource metadata,
 * goes into Bearer and DPoP challenges (RFC 9728 §5.1), with or without an error, so that a client
 * refused for any reason can find the authorization server. `dpopAlgorithms` is the DPoP challenge's
 * `algs` (RFC 9449 §7.1: the proof algorithms accepted, space-separated).
 */
export function formatChallenge(
  scheme: CredentialScheme,
  realm: string,
  error?: TokenError,
  resourceMetadata?: string,
  dpopAlgorithms?: readonly string[],
): string {
  const params: string[] = [];
  // The MAC drafts define no realm parameter; Gatehouse answers `MAC error="invalid_token"` (decision 3).
  if (scheme !== 'mac') params.push(`realm="${quotedValue(realm)}"`);
  if (scheme !== 'mac' && resourceMetadata !== undefined) {
    params.push(`resource_metadata="${quotedValue(resourceMetadata)}"`);
  }
  // RFC 6750 §3.1: a request without any authentication gets no error code.
  if (error?.code !== undefined) {
    params.push(`error="${error.code}"`);
    params.push(`error_description="${quotedValue(error.description)}"`);
    if (error.options.scope !== undefined) params.push(`scope="${quotedValue(error.options.scope)}"`);
    // RFC 9470 §3: what a new authorization request should ask for (its acr_values and max_age).
    if (error.options.acrValues !== undefined) {
      params.push(`acr_values="${quotedValue(error.options.acrValues)}"`);
    }
    if (error.options.maxAge !== undefined) params.push(`max_age=${error.options.maxAge}`);
  }
  if (scheme === 'dpop' && dpopAlgorithms !== undefined && dpopAlgorithms.length > 0) {
    params.push(`algs="${quotedValue(dpopAlgorithms.join(' '))}"`);
  }
  return `${SCHEME_NAMES[scheme]} ${params.join(', ')}`;
}

// RFC 6750 §2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="; RFC 9449 §7.1:
// the DPoP scheme takes the token as Bearer does (token68). The scheme name was matched before.
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;

/** The token after a header's scheme name and the spaces that follow it (none: ''). */
function afterScheme(header: string, schemeLength: number): string {
  let start = schemeLength;
  while (header.charCodeAt(start) === 0x20) start++;
  return start === schemeLength ? '' : header.slice(start);
}

const malformedHeader = (scheme: 'bearer' | 'dpop') =>
  scheme === 'bearer'
    ? new TokenError('invalid_request', 'malformed Bearer authorization header')
    : new TokenError('invalid_request', 'malformed DPoP authorization header', { scheme: 'dpop' });

/**
 * For a credential extracted with `deferTokenSyntax`: throws the invalid_request a malformed header
 * token gets (RFC 6750 §3.1), which takes precedence over any other refusal of it. A token that
 * verified as a JWT has the syntax already (every part canonical base64url), so callers check only
 * before refusing.
 */
export function checkTokenSyntax(credential: PresentedCredential): void {
  if (credential.syntaxChecked !== false || credential.scheme === 'mac') return;
  if (!isToken68(credential.token)) throw malformedHeader(credential.scheme);
}

/** Whether `token` has the b64token syntax of RFC 6750 §2.1. */
export function isToken68(token: string): boolean {
  return TOKEN68.test(token);
}

export interface CredentialSources {
  authorization: string | undefined;
  /** The parsed body, when the request carried application/x-www-form-urlencoded (RFC 6750 §2.2). */
  formBody: Record<string, unknown> | undefined;
  method: string;
  query: Record<string, unknown> | undefined;
  /** RFC 6750 §2.3 is a MAY with security drawbacks (§5.3): accepted only when enabled. */
  allowQuery: boolean;
  /**
   * Leave a header token's token68 check (a scan of the whole token) to the caller, who verifies the
   * token anyway and calls `checkTokenSyntax` before refusing it; only when the header is the request's
   * one credential, so that the refusals and their order are unchanged.
   */
  deferTokenSyntax?: boolean;
}

/**
 * Finds the one credential a request presents. A scheme other than Bearer, DPoP or MAC counts as
 * none; more than one method is invalid_request (RFC 6750 §2: "MUST NOT use more than one method").
 * A DPoP token is taken from the header only (RFC 9449 §7.1); its proof is the caller's to check.
 */
export function extractCredential(sources: CredentialSources): PresentedCredential | undefined {
  const found: PresentedCredential[] = [];
  const header = sources.authorization?.trim();
  if (header !== undefined && header !== '') {
    const scheme = header.split(' ', 1)[0]?.toLowerCase();
    if (scheme === 'bearer' || scheme === 'dpop') {
      const token = afterScheme(header, scheme.length);
      const credential: PresentedCredential = { scheme, token, source: 'header' };
      const alone = sources.formBody?.access_token === undefined && sources.query?.access_token === undefined;
      if (sources.deferTokenSyntax === true && alone && token !== '') credential.syntaxChecked = false;
      else if (!TOKEN68.test(token)) throw malformedHeader(scheme);
      found.push(credential);
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

/**
 * What a route asks of the sign-in behind a token (RFC 9470 §3): `acr`, one of a list (the token's
 * `acr` claim must be one of them, as written; with Gatehouse, list the stronger values too, e.g.
 * multi-factor and `phr`), and `maxAge`, the oldest sign-in (its `auth_time`) accepted, in seconds.
 */
export interface AuthenticationRequirements {
  acr?: readonly string[];
  maxAge?: number;
}

/**
 * RFC 9470 §3: the insufficient_user_authentication refusal of a token whose `acr` is not one of
 * those the route asks for, or whose `auth_time` is older than its `maxAge` (a token without the
 * claim asked about falls short too); undefined when it meets them. The challenge repeats both
 * requirements, so that the client asks for them in its next authorization request.
 */
export function userAuthenticationProblem(
  claims: Readonly<Record<string, unknown>>,
  requirements: AuthenticationRequirements,
  now: number,
  scheme?: CredentialScheme,
): TokenError | undefined {
  const { acr, maxAge } = requirements;
  let description: string | undefined;
  if (acr !== undefined && acr.length > 0 && !(typeof claims.acr === 'string' && acr.includes(claims.acr))) {
    description =
      typeof claims.acr === 'string'
        ? 'the sign-in behind the access token is not strong enough (acr)'
        : 'the access token does not say how the user signed in (acr)';
  } else if (maxAge !== undefined) {
    if (typeof claims.auth_time !== 'number') {
      description = 'the access token does not say when the user signed in (auth_time)';
    } else if (now - claims.auth_time > maxAge) {
      description = 'the sign-in behind the access token is too old (auth_time)';
    }
  }
  if (description === undefined) return undefined;
  return new TokenError('insufficient_user_authentication', description, {
    ...(scheme === undefined ? {} : { scheme }),
    ...(acr !== undefined && acr.length > 0 ? { acrValues: acr.join(' ') } : {}),
    ...(maxAge !== undefined ? { maxAge } : {}),
  });
}
