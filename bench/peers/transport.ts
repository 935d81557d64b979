import type { Server } from 'node:https';

/**
 * The timing Fastify 5 gives a server by default (its `keepAliveTimeout`, `requestTimeout`,
 * `connectionTimeout` and `maxRequestsPerSocket` options), which bench/peer-server.ts and Gatehouse
 * run with. A peer on plain node:https gets the same, so no row differs by its keep-alive settings
 * (node's own default keep-alive is 5 s).
 */
export const FASTIFY_KEEP_ALIVE: Pick<
  Server,
  'keepAliveTimeout' | 'requestTimeout' | 'timeout' | 'maxRequestsPerSocket'
> = {
  keepAliveTimeout: 72_000,
  requestTimeout: 0,
  timeout: 0,
  maxRequestsPerSocket: 0,
};
