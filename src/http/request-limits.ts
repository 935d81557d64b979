import type { Server } from 'node:http';
import type { FastifyError, FastifyInstance } from 'fastify';
import { FORM_CONTENT_TYPE, mediaType } from './oauth/form-params.js';

export interface RequestLimits {
  /** Query or form parameters per request (a repeated parameter counts once per value). */
  maxParameters: number;
  /** UTF-8 bytes per parameter value. */
  maxParameterBytes: number;
}

function tooLarge(message: string): FastifyError {
  // A 400 in the shape every plugin's error handler already knows (OAuth JSON, problem+json, a page).
  return Object.assign(new Error(message), { statusCode: 400, code: 'GH_PARAMETER_LIMIT', name: 'Error' });
}

function check(source: unknown, limits: RequestLimits): void {
  if (typeof source !== 'object' || source === null || Buffer.isBuffer(source)) return;
  let count = 0;
  for (const [name, value] of Object.entries(source as Record<string, unknown>)) {
    const values = Array.isArray(value) ? value : [value];
    count += values.length;
    if (count > limits.maxParameters) throw tooLarge('too many parameters');
    if (Buffer.byteLength(name) > limits.maxParameterBytes) throw tooLarge('parameter name too long');
    for (const item of values) {
      if (typeof item === 'string' && Buffer.byteLength(item) > limits.maxParameterBytes) {
        throw tooLarge('parameter value too long');
      }
    }
  }
}

/**
 * Bounds on parameters, beside the body limit (Fastify's bodyLimit, 413) and the header limit
 * (node's maxHeaderSize, 431): a query string or form may carry at most `maxParameters` values of at
 * most `maxParameterBytes` each. JSON bodies (/v1) are bounded by the body limit and their schemas.
 */
export function installParameterLimits(app: FastifyInstance, limits: RequestLimits): void {
  app.addHook('preValidation', function parameterLimits(request, _reply, done) {
    try {
      check(request.query, limits);
      if (mediaType(request.headers['content-type']) === FORM_CONTENT_TYPE) check(request.body, limits);
      done();
    } catch (error) {
      done(error as FastifyError);
    }
  });
}

/**
 * Slow-client bounds on the listening server: the headers must arrive within 10 seconds and the whole
 * request within `requestTimeoutSeconds` (Fastify sets the latter from its requestTimeout option).
 */
export function applyServerTimeouts(server: Server, requestTimeoutSeconds: number): void {
  server.headersTimeout = Math.min(10, requestTimeoutSeconds) * 1000;
}
