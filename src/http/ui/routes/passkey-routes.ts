import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ENDPOINTS } from '../../../config/endpoints.js';
import { byUser } from '../../../core/audit/audit-log.js';
import type { SessionAuthentication } from '../../../core/model.js';
import type { SignInResult } from '../../../core/sign-in/sign-in-service.js';
import type { SignedInContext } from '../browser-context.js';
import { sendSignInPage } from '../sign-in-form.js';
import { askToSignInAgain, signedInRecently } from '../security/recent-sign-in.js';
import { completeReauthentication, completeSignIn } from '../sign-in-completion.js';
import {
  accountDisabled,
  field,
  forbiddenForm,
  safeNext,
  type UiContext,
  tooManySignIns,
} from '../ui-context.js';
import { SECURITY_NOTICE_COOKIE, SECURITY_NOTICE_OPTIONS } from './security-routes.js';

/** The largest `credential` field read: a WebAuthn answer is a few kilobytes at most. */
const MAX_CREDENTIAL_LENGTH = 64 * 1024;

/**
 * A password sign-in waiting for its second factor: what the second-factor page (another part of
 * issue 28) knows and this needs. `pending` names the user whose password this browser just proved
 * and where the sign-in continues; `complete` ends the sign-in with the passkey, the session
 * recording the password and then the passkey (decision 30), through completeSignIn.
 */
export interface PendingPasswordSignIn {
  pending(
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<{ userId: string; next: string } | undefined>;
  complete(
    request: FastifyRequest,
    reply: FastifyReply,
    passkey: SessionAuthentication,
  ): Promise<FastifyReply>;
  /** A passkey refused as the second factor: the page the person came from, with the error. */
  refused?(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply>;
}

/** No second-factor step yet: a passkey second factor is never pending. */
export const NO_PENDING_SIGN_IN: PendingPasswordSignIn = {
  pending: async () => undefined,
  complete: () => Promise.reject(new Error('no password sign-in is pending')),
};

/** The browser's answer, parsed; undefined when the field is missing, too long, or not JSON. */
function credentialField(body: unknown): unknown {
  const text = field(body, 'credential');
  if (text === undefined || text === '' || text.length > MAX_CREDENTIAL_LENGTH) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** JSON answers of the options endpoints: never cached (each carries a fresh challenge). */
function sendJson(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'application/json; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(JSON.stringify(body));
}

function setNotice(reply: FastifyReply, notice: string): void {
  reply.setCookie(SECURITY_NOTICE_COOKIE, notice, { ...SECURITY_NOTICE_OPTIONS, maxAge: 60 });
}

/**
 * Passkeys' routes (docs/decisions.md, decision 33): the sign-in page's "Sign in with a passkey"
 * (options, then the answer posted as a form), the security page's "Add a passkey" and "Remove", and
 * the second factor after a password (options and answer, for the user `secondFactor` says is pending).
 */
export function registerPasskeyRoutes(
  app: FastifyInstance,
  ui: UiContext,
  secondFactor: PendingPasswordSignIn = NO_PENDING_SIGN_IN,
): void {
  const base = ui.config.basePath;

  /** The answer to a refused or throttled passkey sign-in: the sign-in page again, or 429. */
  async function refused(
    request: FastifyRequest,
    reply: FastifyReply,
    result: Exclude<SignInResult, { outcome: 'signed-in' }>,
    next: string,
  ): Promise<FastifyReply> {
    if (result.outcome === 'throttled') return tooManySignIns(ui, reply, result.retryAfter);
    if (result.outcome === 'disabled') return accountDisabled(ui, reply);
    const browser = await ui.browsers.load(request, reply);
    return sendSignInPage(ui, request, reply, 401, browser, {
      csrfToken: browser.csrfToken,
      next,
      error: 'That passkey could not sign you in. Try again, or use your password.',
    });
  }

  app.post(ENDPOINTS.passkeySignInOptions.path, async function passkeySignInOptions(request, reply) {
    if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token'))) {
      return sendJson(reply, 403, { message: 'This page has expired. Reload it and try again.' });
    }
    const browser = await ui.browsers.load(request, reply);
    return sendJson(reply, 200, await ui.engine.passkeys.signInOptions(browser.browserId));
  });

  app.post(ENDPOINTS.passkeySignIn.path, async function passkeySignIn(request, reply) {
    if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token'))) return forbiddenForm(ui, reply);
    const next = safeNext(field(request.body, 'next'));
    const browser = await ui.browsers.load(request, reply);
    const result = await ui.engine.passkeys.signIn({
      credential: credentialField(request.body),
      browserId: browser.browserId,
      address: request.ip,
    });
    if (result.outcome !== 'signed-in') return refused(request, reply, result, next);
    return completeSignIn(ui, request, reply, {
      userId: result.user.id,
      authentication: result.authentication,
      next,
    });
  });

  app.post(
    ENDPOINTS.passkeySecondFactorOptions.path,
    async function passkeySecondFactorOptions(request, reply) {
      if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token'))) {
        return sendJson(reply, 403, { message: 'This page has expired. Reload it and try again.' });
      }
      const browser = await ui.browsers.load(request, reply);
      const pending = await secondFactor.pending(request, reply);
      const options =
        pending && (await ui.engine.passkeys.secondFactorOptions(pending.userId, browser.browserId));
      if (options === undefined) {
        return sendJson(reply, 409, { message: 'Sign in with your password first.' });
      }
      return sendJson(reply, 200, options);
    },
  );

  app.post(ENDPOINTS.passkeySecondFactor.path, async function passkeySecondFactorAnswer(request, reply) {
    if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token'))) return forbiddenForm(ui, reply);
    const browser = await ui.browsers.load(request, reply);
    const pending = await secondFactor.pending(request, reply);
    if (pending === undefined) return reply.redirect(`${base}/sign-in`, 303);
    const result = await ui.engine.passkeys.secondFactor({
      userId: pending.userId,
      credential: credentialField(request.body),
      browserId: browser.browserId,
      address: request.ip,
    });
    if (result.outcome === 'wrong-credentials' && secondFactor.refused !== undefined) {
      return secondFactor.refused(request, reply);
    }
    if (result.outcome !== 'signed-in') return refused(request, reply, result, pending.next);
    return secondFactor.complete(request, reply, result.authentication);
  });

  // Re-authentication with a passkey (decision 37, `/sign-in?reauth=1`): the signed-in user's own
  // passkeys only. The ceremony is the second factor's (a challenge bound to this browser and this
  // user, an answer checked for this user under the one lockout): both prove that a named user holds
  // one of their passkeys. It ends through completeReauthentication: the session keeps its sid and
  // records the passkey with its time, under a renewed cookie.
  app.post(
    ENDPOINTS.passkeyReauthenticationOptions.path,
    async function passkeyReauthenticationOptions(request, reply) {
      if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token'))) {
        return sendJson(reply, 403, { message: 'This page has expired. Reload it and try again.' });
      }
      const browser = await ui.browsers.load(request, reply);
      if (browser.user === undefined) return sendJson(reply, 403, { signInAgain: `${base}/sign-in` });
      const options = await ui.engine.passkeys.secondFactorOptions(browser.user.id, browser.browserId);
      if (options === undefined) return sendJson(reply, 409, { message: 'You have no passkeys.' });
      return sendJson(reply, 200, options);
    },
  );

  app.post(ENDPOINTS.passkeyReauthentication.path, async function passkeyReauthentication(request, reply) {
    if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token'))) return forbiddenForm(ui, reply);
    const next = safeNext(field(request.body, 'next'));
    const browser = await ui.browsers.load(request, reply);
    // Signed out meanwhile: an ordinary sign-in, which the sign-in page offers.
    if (browser.user === undefined) {
      return reply.redirect(`${base}/sign-in?next=${encodeURIComponent(next)}`, 303);
    }
    const user = browser.user;
    const result = await ui.engine.passkeys.secondFactor({
      userId: user.id,
      credential: credentialField(request.body),
      browserId: browser.browserId,
      address: request.ip,
    });
    if (result.outcome === 'wrong-credentials') {
      return sendSignInPage(ui, request, reply, 401, browser, {
        csrfToken: browser.csrfToken,
        next,
        reauth: true,
        reauthOf: user,
        username: user.username,
        error: 'That passkey could not confirm it is you. Try again, or use your password.',
      });
    }
    if (result.outcome !== 'signed-in') return refused(request, reply, result, next);
    return completeReauthentication(ui, request, reply, {
      userId: user.id,
      authentication: result.authentication,
      next,
    });
  });

  /** The signed-in browser, when its sign-in is recent enough for a change to how it signs in. */
  async function recentlySignedIn(
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<SignedInContext | 'signed-out' | 'not-recent'> {
    const browser = await ui.browsers.load(request, reply);
    if (browser.user === undefined || browser.authentication === undefined) return 'signed-out';
    const signedIn = browser as SignedInContext;
    return signedInRecently(ui, signedIn) ? signedIn : 'not-recent';
  }

  app.post(ENDPOINTS.accountPasskeyOptions.path, async function addPasskeyOptions(request, reply) {
    if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token'))) {
      return sendJson(reply, 403, { message: 'This page has expired. Reload it and try again.' });
    }
    const browser = await recentlySignedIn(request, reply);
    if (typeof browser === 'string') {
      // The page's script goes where this says: sign in (again), then back to the security page.
      const again = `${base}/sign-in?reauth=1&next=${encodeURIComponent('/account/security')}`;
      return sendJson(reply, 403, {
        signInAgain: browser === 'signed-out' ? `${base}/sign-in?next=/account/security` : again,
      });
    }
    return sendJson(
      reply,
      200,
      await ui.engine.passkeys.registrationOptions(browser.user, browser.browserId),
    );
  });

  app.post(ENDPOINTS.accountPasskeys.path, async function addPasskey(request, reply) {
    if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token'))) return forbiddenForm(ui, reply);
    const browser = await recentlySignedIn(request, reply);
    if (browser === 'signed-out') return reply.redirect(`${base}/sign-in?next=/account/security`, 303);
    if (browser === 'not-recent') return askToSignInAgain(ui, reply);
    const result = await ui.engine.passkeys.register(
      browser.user,
      browser.browserId,
      {
        name: field(request.body, 'name') ?? '',
        credential: credentialField(request.body),
      },
      byUser(browser.user.id, request.ip),
    );
    setNotice(
      reply,
      result.outcome === 'added'
        ? 'Passkey added'
        : result.outcome === 'invalid-name'
          ? 'The passkey was not added: give it a name of at most 64 characters.'
          : result.outcome === 'too-many'
            ? 'The passkey was not added: remove one you no longer use first.'
            : 'The passkey was not added. Try again.',
    );
    return reply.redirect(`${base}/account/security`, 303);
  });

  app.post(ENDPOINTS.accountPasskeyRemoval.path, async function removePasskey(request, reply) {
    if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token'))) return forbiddenForm(ui, reply);
    const browser = await recentlySignedIn(request, reply);
    if (browser === 'signed-out') return reply.redirect(`${base}/sign-in?next=/account/security`, 303);
    if (browser === 'not-recent') return askToSignInAgain(ui, reply);
    // Decision 40: a user with no password (made by an upstream sign-in) keeps one way in at least.
    const id = field(request.body, 'id') ?? '';
    const own = (await ui.engine.passkeys.list(browser.user.id)).some((passkey) => passkey.id === id);
    if (own && (await ui.engine.federation.waysIn(browser.user)) <= 1) {
      setNotice(reply, 'This passkey is your only way to sign in: link an account or set a password first.');
      return reply.redirect(`${base}/account/security`, 303);
    }
    const removed = await ui.engine.passkeys.remove(browser.user.id, id, byUser(browser.user.id, request.ip));
    setNotice(reply, removed ? 'Passkey removed' : 'That passkey was already removed.');
    return reply.redirect(`${base}/account/security`, 303);
  });
}
