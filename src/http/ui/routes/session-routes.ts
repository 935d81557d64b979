import type { FastifyInstance } from 'fastify';
import { signIn } from '../../../core/authorize/sign-in.js';
import { BrowserSessions } from '../../../core/browser-sessions.js';
import { allowFormTarget } from '../content-security-policy.js';
import { formatWait } from '../pages/format.js';
import { signInPage } from '../pages/sign-in-page.js';
import {
  field,
  forbiddenForm,
  frameFor,
  pendingAuthorization,
  safeNext,
  sendMessage,
  sendPage,
  type UiContext,
} from '../ui-context.js';

/** GET/POST /sign-in and POST /sign-out. */
export function registerSessionRoutes(app: FastifyInstance, ui: UiContext): void {
  const base = ui.config.basePath;

  app.get('/sign-in', async function signInForm(request, reply) {
    const query = request.query as Record<string, unknown>;
    const next = safeNext(typeof query.next === 'string' ? query.next : undefined);
    const browser = await ui.browsers.load(request, reply);
    if (browser.user !== undefined) return reply.redirect(base + next, 303);
    const pending = await pendingAuthorization(ui, next);
    if (pending !== undefined) allowFormTarget(reply, pending.redirectUri);
    return sendPage(
      reply,
      200,
      signInPage(frameFor(ui), {
        csrfToken: browser.csrfToken,
        next,
        ...(pending ? { clientName: pending.client.name } : {}),
      }),
    );
  });

  app.post('/sign-in', async function signInSubmit(request, reply) {
    if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token'))) return forbiddenForm(ui, reply);
    const next = safeNext(field(request.body, 'next'));
    const username = (field(request.body, 'username') ?? '').trim();
    const result = await signIn(
      ui.storage,
      ui.clock,
      {
        failuresPerUsername: ui.config.passwordFailuresPerUsername,
        failuresPerAddress: ui.config.passwordFailuresPerSource,
        windowSeconds: ui.config.passwordFailureWindowSeconds,
      },
      { username, password: field(request.body, 'password') ?? '', address: request.ip },
    );
    if (result.outcome === 'throttled') {
      reply.header('retry-after', String(result.retryAfter));
      return sendMessage(
        ui,
        reply,
        429,
        'Too many attempts',
        `Too many failed sign-ins. Wait ${formatWait(result.retryAfter)} and try again.`,
      );
    }
    if (result.outcome === 'wrong-credentials') {
      const browser = await ui.browsers.load(request, reply);
      const pending = await pendingAuthorization(ui, next);
      if (pending !== undefined) allowFormTarget(reply, pending.redirectUri);
      // Seed §5.10: a wrong user name or password is a 401.
      return sendPage(
        reply,
        401,
        signInPage(frameFor(ui), {
          csrfToken: browser.csrfToken,
          next,
          username,
          error: 'Wrong user name or password.',
          invalidField: 'password',
          ...(pending ? { clientName: pending.client.name } : {}),
        }),
      );
    }
    // A new id on every sign-in: an id planted before sign-in never becomes a session (fixation).
    await ui.sessions.end(ui.browsers.browserId(request));
    ui.browsers.setCookie(reply, await ui.sessions.start(result.user.id));
    return reply.redirect(base + next, 303);
  });

  app.post('/sign-out', async function signOut(request, reply) {
    if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token'))) return forbiddenForm(ui, reply);
    await ui.sessions.end(ui.browsers.browserId(request));
    ui.browsers.setCookie(reply, BrowserSessions.newBrowserId());
    return reply.redirect(`${base}/sign-in`, 303);
  });
}
