import type { FastifyInstance } from 'fastify';
import { ENDPOINTS } from '../../../config/endpoints.js';
import { BrowserSessions } from '../../../core/sign-in/browser-sessions.js';
import { sendSignInPage } from '../sign-in-form.js';
import { completeReauthentication, completeSignIn } from '../sign-in-completion.js';
import { deviceClientOfNext } from './device-routes.js';
import { setPendingSignIn } from '../second-factor/pending-sign-in.js';
import {
  accountDisabled,
  field,
  forbiddenForm,
  pendingAuthorization,
  safeNext,
  type UiContext,
  tooManySignIns,
} from '../ui-context.js';

const AUTHORIZE = '/authorize?';

/** GET/POST /sign-in, POST /sign-in/continue and POST /sign-out. */
export function registerSessionRoutes(app: FastifyInstance, ui: UiContext): void {
  const base = ui.config.basePath;

  app.get(ENDPOINTS.signIn.path, async function signInForm(request, reply) {
    const query = request.query as Record<string, unknown>;
    const next = safeNext(typeof query.next === 'string' ? query.next : undefined);
    const browser = await ui.browsers.load(request, reply);
    if (browser.user !== undefined) {
      // Decision 37: a signed-in person asked to confirm who they are (askToSignInAgain) sees the form
      // again, their own user name fixed; anyone else signed in goes on.
      if (query.reauth !== '1') return reply.redirect(base + next, 303);
      // Decision 37: a passkey of theirs confirms it too (POST /sign-in/passkey/reauthentication), and
      // decision 40: so does an upstream account linked to them.
      return sendSignInPage(ui, request, reply, 200, browser, {
        csrfToken: browser.csrfToken,
        next,
        reauth: true,
        reauthOf: browser.user,
        username: browser.user.username,
      });
    }
    return sendSignInPage(ui, request, reply, 200, browser, { csrfToken: browser.csrfToken, next });
  });

  app.post(ENDPOINTS.signIn.path, async function signInSubmit(request, reply) {
    if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token'))) return forbiddenForm(ui, reply);
    const next = safeNext(field(request.body, 'next'));
    // A re-authentication (decision 37) is the signed-in user's own: the name comes from the session,
    // never from the form, so it cannot be turned into signing in as someone else.
    const reauthOf =
      field(request.body, 'reauth') === '1' ? (await ui.browsers.load(request, reply)).user : undefined;
    const username = reauthOf?.username ?? (field(request.body, 'username') ?? '').trim();
    const result = await ui.engine.signIn({
      username,
      password: field(request.body, 'password') ?? '',
      address: request.ip,
    });
    if (result.outcome === 'throttled') return tooManySignIns(ui, reply, result.retryAfter);
    if (result.outcome === 'disabled') return accountDisabled(ui, reply);
    if (result.outcome === 'wrong-credentials') {
      const browser = await ui.browsers.load(request, reply);
      // Seed §5.10: a wrong user name or password is a 401.
      return sendSignInPage(ui, request, reply, 401, browser, {
        csrfToken: browser.csrfToken,
        next,
        username,
        invalidField: 'password',
        ...(reauthOf !== undefined
          ? { reauth: true, reauthOf, error: 'Wrong password.' }
          : { error: 'Wrong user name or password.' }),
      });
    }
    const completed = { userId: result.user.id, authentication: result.authentication, next };
    // Decision 34: a user with a second factor, or who must have one (the policy, or the client the
    // sign-in is for), is not signed in yet: the password is remembered in a signed cookie and the
    // code step (or the authenticator app's set-up) follows. Proving it again for a change to the
    // account (decision 37) asks for the second factor too, when the user has one: a password alone
    // never re-authenticates more than it signs in.
    const client =
      (await pendingAuthorization(ui, next))?.client ??
      (await deviceClientOfNext(ui, ui.browsers.browserId(request), next));
    const step = await ui.engine.secondFactors.afterPassword(result.user, client);
    // The session keeps the methods it recorded, and this one is added with its time.
    if (reauthOf !== undefined && step !== 'verify') {
      return completeReauthentication(ui, request, reply, completed);
    }
    if (step !== 'complete') {
      // The CSRF check above found the browser id; never signed in without the code when it is not.
      const browserId = ui.browsers.browserId(request);
      if (browserId === undefined) return forbiddenForm(ui, reply);
      setPendingSignIn(ui, reply, browserId, {
        userId: result.user.id,
        first: result.authentication,
        next,
        setUp: step === 'set-up',
        ...(reauthOf !== undefined ? { reauth: true } : {}),
      });
      const path =
        step === 'set-up' ? ENDPOINTS.signInSecondFactorSetUp.path : ENDPOINTS.signInSecondFactor.path;
      return reply.redirect(base + path, 303);
    }
    return completeSignIn(ui, request, reply, completed);
  });

  // prompt=select_account (OpenID Connect Core §3.1.2.1): the user chose to continue as the account
  // signed in. Only for an authorization request, which is validated again where this continues.
  app.post(ENDPOINTS.signInContinuation.path, async function continueAs(request, reply) {
    if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token'))) return forbiddenForm(ui, reply);
    const next = safeNext(field(request.body, 'next'));
    const browser = await ui.browsers.load(request, reply);
    if (browser.user !== undefined && next.startsWith(AUTHORIZE)) {
      ui.browsers.markInteraction(reply, browser.browserId, next.slice(AUTHORIZE.length));
    }
    // Signed out meanwhile: /authorize shows the sign-in page.
    return reply.redirect(base + next, 303);
  });

  app.post(ENDPOINTS.signOut.path, async function signOut(request, reply) {
    if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token'))) return forbiddenForm(ui, reply);
    await ui.engine.browserSessions.end(ui.browsers.browserId(request));
    ui.browsers.setCookie(reply, BrowserSessions.newBrowserId());
    return reply.redirect(`${base}/sign-in`, 303);
  });
}
