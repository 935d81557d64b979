import type { FastifyRequest } from 'fastify';
import { TokenError } from 'gatehouse-oauth-resource-server/rfc6750';
import { DPOP_SIGNING_ALGORITHMS, DpopProofError, type DpopVerifier } from '../core/tokens/dpop.js';
import type { TokenPresentation } from '../core/tokens/token-presentation.js';

/** The proof algorithms a DPoP challenge offers (RFC 9449 §7.1 `algs`). */
export const DPOP_CHALLENGE_ALGORITHMS: readonly string[] = DPOP_SIGNING_ALGORITHMS;

/**
 * Every `DPoP` header field of the request, as sent. Node joins repeated unknown headers into one
 * value; read from the raw headers instead, so that a second field is seen and refused (RFC 9449
 * §4.3 item 1).
 */
export function dpopHeaderValues(request: FastifyRequest): string[] {
  const raw = request.raw.rawHeaders;
  const values: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]?.toLowerCase() === 'dpop') values.push(raw[i + 1] ?? '');
  }
  return values;
}

/**
 * The absolute URL the request was sent to, as clients address this server: the issuer (which holds
 * any base path) and the path under the base path, without the query. Never built from the Host
 * header, which the sender chooses: a proof made for another server names that server (RFC 9449
 * §4.3 item 9, §11.1).
 */
export function publicUrlOf(request: FastifyRequest, issuer: string, basePath: string): string {
  const path = (request.url.split('?', 1)[0] ?? '/').replace(/#.*$/, '');
  const underBase = basePath !== '' && path.startsWith(basePath) ? path.slice(basePath.length) : path;
  return `${issuer}${underBase.startsWith('/') ? underBase : `/${underBase}`}`;
}

/** How the request presented its token, for checkTokenPresentation (core/tokens/token-presentation.ts). */
export function presentationOf(
  request: FastifyRequest,
  scheme: 'bearer' | 'dpop',
  issuer: string,
  basePath: string,
): TokenPresentation {
  if (scheme === 'bearer') return { scheme };
  return {
    scheme,
    proofs: dpopHeaderValues(request),
    method: request.method,
    url: publicUrlOf(request, issuer, basePath),
  };
}

/**
 * A refused proof at a protected resource: 401 under the DPoP scheme (RFC 9449 §7.1), and for
 * use_dpop_nonce the nonce to use in `DPoP-Nonce` (§9). Undefined for any other error.
 */
export function dpopTokenError(error: unknown, dpop: DpopVerifier): TokenError | undefined {
  if (!(error instanceof DpopProofError)) return undefined;
  const nonce = error.code === 'use_dpop_nonce' ? dpop.nonce() : undefined;
  return new TokenError(error.code, error.description, {
    scheme: 'dpop',
    ...(nonce === undefined ? {} : { headers: { 'dpop-nonce': nonce } }),
  });
}
