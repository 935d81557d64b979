import type { FastifyReply } from 'fastify';

/**
 * An answer no cache on the way may keep (RFC 9111 §5.2.2.5), with the HTTP/1.0 `Pragma` beside it: what
 * RFC 6749 §5.1 asks of every answer that carries a token or credentials, and what the OAuth endpoints
 * send with every other answer too (their errors, RFC 6749 §5.2; introspection; registration, RFC 7591
 * §3.2.1; UserInfo's personal data).
 */
export function noStore(reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
}

/** noStore, for a body the route serialises itself as JSON (RFC 6749 §5.1's media type). */
export function noStoreJson(reply: FastifyReply): FastifyReply {
  return noStore(reply.header('content-type', 'application/json;charset=UTF-8'));
}
