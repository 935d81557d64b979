import type { FastifyInstance } from 'fastify';
import { ENDPOINTS } from '../config/endpoints.js';
export interface StoreHealth {
  ping(): Promise<void>;
  pendingMigrations(): Promise<string[]>;
}

/** /healthz: the process answers. /readyz: the store answers and its schema is current. */
export function registerHealthRoutes(app: FastifyInstance, store: StoreHealth): void {
  app.get(ENDPOINTS.liveness.path, async function healthz() {
    return { status: 'ok' };
  });
  app.get(ENDPOINTS.readiness.path, async function readyz(request, reply) {
    try {
      await store.ping();
      const pending = await store.pendingMigrations();
      if (pending.length > 0) {
        reply.code(503);
        return { status: 'unavailable', reason: 'migrations pending' };
      }
      return { status: 'ok' };
    } catch (err) {
      request.log.warn({ err }, 'store unreachable');
      reply.code(503);
      return { status: 'unavailable', reason: 'store unreachable' };
    }
  });
}
