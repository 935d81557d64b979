import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { OAuthError } from '../../core/errors.js';
import { isStoreUnavailable, STORE_RETRY_AFTER_SECONDS } from '../store-unavailable.js';
import { noStoreJson } from '../no-store.js';

/** A framework error (body too large, bad media type, bad JSON) as the OAuth error it amounts to. */
export function toOAuthError(error: FastifyError | Error): OAuthError | undefined {
  if (error instanceof OAuthError) return error;
  const { code, statusCode } = error as FastifyError;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return new OAuthError('invalid_request', 'request body too large', 413);
  }
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return new OAuthError('invalid_request', 'unsupported content type', 415);
  }
  if (statusCode !== undefined && statusCode >= 400 && statusCode < 500) {
    return new OAuthError('invalid_request', 'malformed request', statusCode);
  }
  return undefined;
}

/** RFC 6749 §5.2 error responses for every OAuth endpoint; 5xx detail stays in the log. */
export function oauthErrorHandler(
  this: unknown,
  error: FastifyError | Error,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  // The store is down or restarting: retry later (RFC 9110 §15.6.4), not a server fault.
  const unavailable = isStoreUnavailable(error);
  if (unavailable) request.log.warn({ err: { message: error.message } }, 'store unavailable');
  const oauthError = unavailable
    ? new OAuthError(
        'temporarily_unavailable',
        'the store is unavailable; retry shortly',
        503,
        STORE_RETRY_AFTER_SECONDS,
      )
    : (toOAuthError(error) ?? new OAuthError('server_error', 'internal error', 500));
  if (!unavailable && oauthError.status >= 500) request.log.error({ err: error }, 'request failed');
  reply.code(oauthError.status);
  noStoreJson(reply);
  if (oauthError.status === 401) reply.header('www-authenticate', 'Basic realm="gatehouse"');
  if (oauthError.retryAfter !== undefined) reply.header('retry-after', String(oauthError.retryAfter));
  for (const [name, value] of Object.entries(oauthError.headers)) reply.header(name, value);
  return reply.send(JSON.stringify(oauthError.toJSON()));
}
