import type { preValidationAsyncHookHandler } from 'fastify';
import type { Engine } from '../../../core/engine.js';
import type { RouteAuth } from './authentication.js';

/** What /v1 route modules are given. */
export interface ApiContext {
  /** Every operation the routes perform. */
  engine: Engine;
  /** The public base URL (issuer); Location headers are built on it. */
  issuer: string;
  requireToken(auth: RouteAuth): preValidationAsyncHookHandler;
}

/** An absolute URL under /v1 for a Location header (RFC 9110 §10.2.2). */
export function locationOf(context: ApiContext, ...segments: string[]): string {
  return `${context.issuer}/v1/${segments.map(encodeURIComponent).join('/')}`;
}

export { isoTime } from '../../../shared/clock.js';
