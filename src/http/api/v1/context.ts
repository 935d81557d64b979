import type { FastifyRequest, preValidationAsyncHookHandler } from 'fastify';
import type { AuditContext } from '../../../core/audit/audit-log.js';
import type { Engine } from '../../../core/engine.js';
import { callerOf, type RouteAuth } from './authentication.js';

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

/**
 * Who made a /v1 change and from where, for its audit event (docs/decisions.md, decision 41): the
 * user a token was issued for, or the client acting for itself (client_credentials); the address
 * Fastify derives (behind a trusted proxy, its X-Forwarded-For).
 */
export function auditContextOf(request: FastifyRequest): AuditContext {
  const { claims } = callerOf(request);
  const forUser = claims.gid !== undefined || claims.sub !== claims.client_id;
  return {
    actor: forUser ? { type: 'user', id: claims.sub } : { type: 'client', id: claims.client_id },
    address: request.ip,
  };
}
