import type { FastifyInstance } from 'fastify';

/**
 * Graceful shutdown (operations floor): once the app starts closing, every response still being sent
 * says `Connection: close`, so a keep-alive client does not hold its idle connection open and the
 * server can finish draining instead of waiting out the keep-alive timeout. New connections are
 * already refused (the listening socket is closed) and new requests on open connections get 503.
 */
export function installDrain(app: FastifyInstance): void {
  let draining = false;
  app.addHook('preClose', async function startDraining() {
    draining = true;
  });
  // Callback style, not async: this runs on every response, and a promise per hook is measurable.
  app.addHook('onSend', function closeWhenDraining(_request, reply, payload, done) {
    if (draining) reply.header('connection', 'close');
    done(null, payload);
  });
}
