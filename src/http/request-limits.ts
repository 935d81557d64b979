import type { Server } from 'node:http';
import type { FastifyError, FastifyInstance } from 'fastify';
import { FORM_CONTENT_TYPE, mediaType } from './form-params.js';

export interface RequestLimits {
  /** Query or form parameters per request (a repeated parameter counts once per value). */
  maxParameters: number;
  /** UTF-8 bytes per parameter value. */
  maxParameterBytes: number;
}

function refused(message: string): FastifyError {
  // A 400 in the shape every plugin's error handler already knows (OAuth JSON, problem+json, a page).
  return Object.assign(new Error(message), { statusCode: 400, code: 'GH_PARAMETER_LIMIT', name: 'Error' });
}

/**
 * UTF-8 bytes of `value` beyond `max`. A UTF-16 code unit is at most 3 UTF-8 bytes, so a string of at
 * most max/3 units is within bounds without counting (every request's short parameters).
 */
function tooLong(value: string, max: number): boolean {
  return value.length * 3 > max && Buffer.byteLength(value) > max;
}

function check(source: unknown, limits: RequestLimits): void {
  if (typeof source !== 'object' || source === null || Buffer.isBuffer(source)) return;
  let count = 0;
  const parameters = source as Record<string, unknown>;
  // Own enumerable keys, as Object.entries gives, without an array of pairs per request.
  for (const name of Object.keys(parameters)) {
    const value = parameters[name];
    const values: unknown[] | undefined = Array.isArray(value) ? value : undefined;
    count += values === undefined ? 1 : values.length;
    if (count > limits.maxParameters) throw refused('too many parameters');
    if (tooLong(name, limits.maxParameterBytes)) throw refused('parameter name too long');
    if (values === undefined) {
      if (typeof value === 'string' && tooLong(value, limits.maxParameterBytes)) {
        throw refused('parameter value too long');
      }
      continue;
    }
    for (const item of values) {
      if (typeof item === 'string' && tooLong(item, limits.maxParameterBytes)) {
        throw refused('parameter value too long');
      }
    }
  }
}

/**
 * NUL is never part of an honest parameter, and PostgreSQL cannot store it in text: refused here, at
 * the edge, it is a 400 instead of a store error (a 500) deep inside whichever route received it.
 */
function containsNul(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (typeof value !== 'object' || value === null || depth > 32 || Buffer.isBuffer(value)) return false;
  const entries = value as Record<string, unknown>;
  for (const key of Object.keys(entries)) {
    if (key.includes('\u0000') || containsNul(entries[key], depth + 1)) return true;
  }
  return false;
}

/**
 * Bounds on parameters, beside the body limit (Fastify's bodyLimit, 413) and the header limit
 * (node's maxHeaderSize, 431): a query string or form may carry at most `maxParameters` values of at
 * most `maxParameterBytes` each. JSON bodies (/v1) are bounded by the body limit and their schemas.
 * No parameter, path segment or JSON string may contain NUL.
 */
export function installParameterLimits(app: FastifyInstance, limits: RequestLimits): void {
  app.addHook('preValidation', function parameterLimits(request, _reply, done) {
    try {
      check(request.query, limits);
      if (mediaType(request.headers['content-type']) === FORM_CONTENT_TYPE) check(request.body, limits);
      if (containsNul(request.query) || containsNul(request.params) || containsNul(request.body)) {
        throw refused('parameters must not contain NUL characters');
      }
      done();
    } catch (error) {
      done(error as FastifyError);
    }
  });
}

/**
 * Slow-client bounds on the listening server: the headers must arrive within 10 seconds (or the
 * request timeout, if shorter) and the whole request within `requestTimeoutSeconds` (Fastify sets the
 * latter from its requestTimeout option). Node checks both on a timer (the server option
 * connectionsCheckingInterval, CONNECTION_CHECK_MS here), so a connection is closed within a second
 * of its bound. Connections beyond `maxConnections` are closed as they arrive.
 */
export function applyServerTimeouts(
  server: Server,
  requestTimeoutSeconds: number,
  maxConnections: number,
): void {
  server.headersTimeout = Math.min(10, requestTimeoutSeconds) * 1000;
  server.maxConnections = maxConnections;
}

/**
 * How often Node checks the header and request timeouts. Its default, 30 s, let a slow client hold a
 * connection for up to 30 s past either bound (headers 19 s and a request 49 s were seen against
 * 10 s and 30 s); checking each second costs one pass over the open connections.
 */
export const CONNECTION_CHECK_MS = 1000;
