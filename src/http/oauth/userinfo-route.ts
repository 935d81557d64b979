import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Engine } from '../../core/engine.js';
import { UserInfoError } from '../../core/oidc/userinfo.js';
import { extractCredential, TokenError } from 'gatehouse-oauth-resource-server/rfc6750';
import { DPOP_CHALLENGE_ALGORITHMS, dpopTokenError, presentationOf } from '../dpop-request.js';
import { ENDPOINTS } from '../../config/endpoints.js';
import { FORM_CONTENT_TYPE, mediaType } from '../form-params.js';
import { noStore } from '../no-store.js';

/** The realm of the Bearer challenges (RFC 6750 §3), the same as /v1's. */
const REALM = 'gatehouse';

export interface UserInfoRouteOptions {
  /** RFC 6750 §2.3: the query parameter, only when the operator allows it (as on /v1). */
  allowQuery: boolean;
  /** The issuer URL and base path: the URL a DPoP proof must name is built from them (RFC 9449 §4.3). */
  issuer: string;
  basePath: string;
}

/**
 * GET and POST /userinfo (OpenID Connect Core §5.3): the bearer token in the Authorization header, or
 * for POST in a form body `access_token` (RFC 6750 §2.2); a DPoP-bound token with the DPoP scheme and
 * its proof (RFC 9449 §7). Refusals follow RFC 6750 §3 (Core §5.3.3): 401 with
 * `WWW-Authenticate: Bearer error="invalid_token"` (beside a `DPoP algs=…` challenge, RFC 9449 §7.1),
 * 403 `insufficient_scope` without openid.
 */
export function registerUserInfoRoute(
  app: FastifyInstance,
  engine: Pick<Engine, 'userInfo' | 'dpop'>,
  options: UserInfoRouteOptions,
): void {
  async function answer(request: FastifyRequest, reply: FastifyReply) {
    // Personal data: never stored by a cache on the way (RFC 9111 §5.2.2.5).
    noStore(reply);
    let scheme: 'bearer' | 'dpop' = 'bearer';
    try {
      const isForm =
        request.method === 'POST' && mediaType(request.headers['content-type']) === FORM_CONTENT_TYPE;
      const credential = extractCredential({
        authorization: request.headers.authorization,
        formBody: isForm ? (request.body as Record<string, unknown> | undefined) : undefined,
        method: request.method,
        query: request.query as Record<string, unknown> | undefined,
        allowQuery: options.allowQuery,
      });
      if (credential === undefined) throw new TokenError(undefined, 'an access token is required');
      if (credential.scheme === 'mac') {
        throw new TokenError('invalid_token', 'UserInfo takes bearer or DPoP tokens (RFC 6750, RFC 9449)');
      }
      scheme = credential.scheme;
      const claims = await engine.userInfo.claims(
        credential.token,
        presentationOf(request, scheme, options.issuer, options.basePath),
      );
      // RFC 9449 §9: with nonces required, the one to use next.
      const nonce = scheme === 'dpop' ? engine.dpop.nonce() : undefined;
      if (nonce !== undefined) reply.header('dpop-nonce', nonce);
      reply.type('application/json');
      return claims;
    } catch (error) {
      const refusal =
        error instanceof UserInfoError
          ? new TokenError(error.code, error.description, {
              scheme,
              ...(error.requiredScope === undefined ? {} : { scope: error.requiredScope }),
            })
          : (dpopTokenError(error, engine.dpop) ?? error);
      if (!(refusal instanceof TokenError)) throw refusal;
      for (const [name, value] of Object.entries(refusal.options.headers ?? {})) reply.header(name, value);
      reply
        .code(refusal.status)
        .header('www-authenticate', refusal.challenge(REALM, undefined, DPOP_CHALLENGE_ALGORITHMS));
      reply.type('application/json');
      // RFC 6750 §3.1: a request without credentials gets no error code, in the header or here.
      return refusal.code === undefined
        ? { error_description: refusal.description }
        : { error: refusal.code, error_description: refusal.description };
    }
  }
  app.get(ENDPOINTS.userInfo.path, answer);
  app.post(ENDPOINTS.userInfo.path, answer);
}
