import type { preValidationAsyncHookHandler } from 'fastify';
import type { KeyRing } from '../../../core/key-ring.js';
import type { Storage } from '../../../core/ports.js';
import type { Clock } from '../../../shared/clock.js';
import type { RouteAuth } from './authentication.js';

/** What /v1 route modules are given. */
export interface ApiContext {
  storage: Storage;
  clock: Clock;
  keyRing: KeyRing;
  /** The public base URL (issuer); Location headers are built on it. */
  issuer: string;
  requireToken(auth: RouteAuth): preValidationAsyncHookHandler;
}

/** An absolute URL under /v1 for a Location header (RFC 9110 §10.2.2). */
export function locationOf(context: ApiContext, ...segments: string[]): string {
  return `${context.issuer}/v1/${segments.map(encodeURIComponent).join('/')}`;
}

/** Epoch seconds as RFC 3339. */
export function isoTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}
