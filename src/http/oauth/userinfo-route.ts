import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { UserInfoError, type UserInfoService } from '../../core/oidc/userinfo.js';
import { extractCredential, TokenError } from 'gatehouse-oauth-resource-server/rfc6750';
import { FORM_CONTENT_TYPE, mediaType } from '../form-params.js';

/** The realm of the Bearer challenges (RFC 6750 §3), the same as /v1's. */
const REALM = 'gatehouse';

export interface UserInfoRouteOptions {
  /** RFC 6750 §2.3: the query parameter, only when the operator allows it (as on /v1). */
  allowQuery: boolean;
}

/**
 * GET and POST /userinfo (OpenID Connect Core §5.3): the bearer token in the Authorization header, or
 * for POST in a form body `access_token` (RFC 6750 §2.2). Refusals follow RFC 6750 §3 (Core §5.3.3):
 * 401 with `WWW-Authenticate: Bearer error="invalid_token"`, 403 `insufficient_scope` without openid.
 */
export function registerUserInfoRoute(
  app: FastifyInstance,
  userInfo: UserInfoService,
  options: UserInfoRouteOptions,
): void {
  async function answer(request: FastifyRequest, reply: FastifyReply) {
    // Personal data: never stored by a cache on the way (RFC 9111 §5.2.2.5).
    reply.header('cache-control', 'no-store');
    reply.header('pragma', 'no-cache');
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
      if (credential.scheme !== 'bearer') {
        throw new TokenError('invalid_token', 'UserInfo takes bearer tokens (RFC 6750)');
      }
      const claims = await userInfo.claims(credential.token);
      reply.type('application/json');
      return claims;
    } catch (error) {
      const refusal =
        error instanceof UserInfoError
          ? new TokenError(error.code, error.description, {
              ...(error.requiredScope === undefined ? {} : { scope: error.requiredScope }),
            })
          : error;
      if (!(refusal instanceof TokenError)) throw refusal;
      reply.code(refusal.status).header('www-authenticate', refusal.challenge(REALM));
      reply.type('application/json');
      // RFC 6750 §3.1: a request without credentials gets no error code, in the header or here.
      return refusal.code === undefined
        ? { error_description: refusal.description }
        : { error: refusal.code, error_description: refusal.description };
    }
  }
  app.get('/userinfo', answer);
  app.post('/userinfo', answer);
}
