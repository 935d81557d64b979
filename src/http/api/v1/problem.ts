import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ConflictError, NotFoundError, ValidationError } from '../../../core/validation.js';
import { TokenError } from 'gatehouse-oauth-resource-server/rfc6750';
import { DPOP_CHALLENGE_ALGORITHMS } from '../../dpop-request.js';
import { isStoreUnavailable, STORE_RETRY_AFTER_SECONDS } from '../../store-unavailable.js';

const PROBLEM_CONTENT_TYPE = 'application/problem+json';
const REALM = 'gatehouse';

/** RFC 9457 problem details body, with Gatehouse's extension members. */
export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  /** The request field at fault (400, 409), as a dotted path such as `redirect_uris.0`. */
  field?: string;
  /** The RFC 6750 error code of a 400/401/403 caused by the access token. */
  error?: string;
}

/** An error the /v1 API answers as application/problem+json. */
export class Problem extends Error {
  /** Read by Fastify, which keeps the status of errors thrown in hooks. */
  readonly statusCode: number;

  constructor(
    readonly status: number,
    readonly detail: string,
    readonly extras: { field?: string; error?: string; headers?: Record<string, string> } = {},
  ) {
    super(detail);
    this.name = 'Problem';
    this.statusCode = status;
  }

  body(): ProblemBody {
    // RFC 9457 §4.2.1: "about:blank" says the problem is exactly what the status code says; the
    // detail and the field name the specifics.
    const body: ProblemBody = {
      type: 'about:blank',
      title: STATUS_CODES[this.status] ?? 'Error',
      status: this.status,
      detail: this.detail,
    };
    if (this.extras.field !== undefined) body.field = this.extras.field;
    if (this.extras.error !== undefined) body.error = this.extras.error;
    return body;
  }
}

export const notFound = (what: string, field = 'id'): Problem =>
  new Problem(404, `no ${what} with this ${field}`, { field });

/**
 * The problem an error amounts to; undefined for a server fault. `resourceMetadata` is the URL of /v1's
 * protected resource metadata, which every Bearer and DPoP challenge names (RFC 9728 §5.1).
 */
function toProblem(error: unknown, resourceMetadata: string | undefined): Problem | undefined {
  if (error instanceof Problem) return error;
  if (error instanceof TokenError) {
    return new Problem(error.status, error.description, {
      ...(error.code === undefined ? {} : { error: error.code }),
      // RFC 9449 §7.1: DPoP is offered beside Bearer; §9: use_dpop_nonce carries DPoP-Nonce.
      headers: {
        ...error.options.headers,
        'www-authenticate': error.challenge(REALM, resourceMetadata, DPOP_CHALLENGE_ALGORITHMS),
      },
    });
  }
  if (error instanceof ValidationError) return new Problem(400, error.message, { field: error.field });
  if (error instanceof ConflictError) return new Problem(409, error.message, { field: error.field });
  if (error instanceof NotFoundError) return new Problem(404, error.message, { field: error.field });
  const { code, statusCode } = error as Partial<FastifyError>;
  switch (code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new Problem(413, 'the request body is larger than the server accepts', { field: 'body' });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new Problem(415, 'send the body as application/json', { field: 'content-type' });
    default:
      if (statusCode !== undefined && statusCode >= 400 && statusCode < 500) {
        return new Problem(statusCode, 'the request is malformed', { field: 'body' });
      }
      return undefined;
  }
}

export function sendProblem(reply: FastifyReply, problem: Problem): FastifyReply {
  for (const [name, value] of Object.entries(problem.extras.headers ?? {})) reply.header(name, value);
  reply.code(problem.status);
  reply.header('content-type', PROBLEM_CONTENT_TYPE);
  reply.header('cache-control', 'no-store');
  return reply.send(JSON.stringify(problem.body()));
}

/**
 * The /v1 error handler: every error as problem+json; a 500 says nothing and is logged. Token refusals
 * name `resourceMetadata`, /v1's RFC 9728 metadata URL (decision 47).
 */
export function problemErrorHandler(resourceMetadata?: string) {
  return function problemErrors(
    this: unknown,
    error: FastifyError | Error,
    request: FastifyRequest,
    reply: FastifyReply,
  ): FastifyReply {
    return answerProblem(error, request, reply, resourceMetadata);
  };
}

function answerProblem(
  error: FastifyError | Error,
  request: FastifyRequest,
  reply: FastifyReply,
  resourceMetadata: string | undefined,
): FastifyReply {
  const problem = toProblem(error, resourceMetadata);
  if (problem !== undefined) return sendProblem(reply, problem);
  if (isStoreUnavailable(error)) {
    // Down or restarting: nothing was committed, and the client may retry (RFC 9110 §15.6.4).
    request.log.warn({ err: { message: error.message } }, 'store unavailable');
    return sendProblem(
      reply,
      new Problem(503, 'the store is unavailable; retry shortly', {
        headers: { 'retry-after': String(STORE_RETRY_AFTER_SECONDS) },
      }),
    );
  }
  request.log.error({ err: error }, 'request failed');
  return sendProblem(reply, new Problem(500, 'internal error; the request may or may not have taken effect'));
}

/**
 * Fastify's `frameworkErrors`: errors its router meets before any route or plugin runs (a path that
 * is not valid percent-encoding, a parameter too long). Under /v1 they are problem+json like every
 * other /v1 error (RFC 9457); elsewhere the body Fastify would send.
 */
export function frameworkErrorHandler(v1Prefix: string) {
  return function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
    const status = error.statusCode !== undefined && error.statusCode >= 400 ? error.statusCode : 400;
    const path = request.raw.url ?? '';
    if (path === v1Prefix || path.startsWith(`${v1Prefix}/`) || path.startsWith(`${v1Prefix}?`)) {
      void sendProblem(reply, new Problem(status, 'the request path is not valid', { field: 'path' }));
      return;
    }
    void reply.code(status).send({
      error: STATUS_CODES[status] ?? 'Error',
      code: error.code,
      message: error.message,
      statusCode: status,
    });
  };
}
