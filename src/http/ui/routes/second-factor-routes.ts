import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ENDPOINTS } from '../../../config/endpoints.js';
import { byUser } from '../../../core/audit/audit-log.js';
import type { SignInResult } from '../../../core/sign-in/sign-in-service.js';
import type { User } from '../../../core/model.js';
import type { BrowserContext, SignedInContext } from '../browser-context.js';
import { recoveryCodesPage, secondFactorPage, totpSetUpPage } from '../pages/second-factor-pages.js';
import { clearPendingSignIn, pendingSignIn } from '../second-factor/pending-sign-in.js';
import { qrCodeSvg } from '../second-factor/qr-code.js';
import { askToSignInAgain, signedInRecently } from '../security/recent-sign-in.js';
import { completeReauthentication, completeSignIn } from '../sign-in-completion.js';
import { passkeySecondFactorOption } from '../pages/passkey-second-factor.js';
import type { PendingPasswordSignIn } from './passkey-routes.js';
import {
  accountDisabled,
  field,
  forbiddenForm,
  frameFor,
  sendPage,
  type UiContext,
  tooManySignIns,
} from '../ui-context.js';
import { SECURITY_NOTICE_COOKIE, SECURITY_NOTICE_OPTIONS } from './security-routes.js';

/** A passkey that did not prove the pending sign-in's second factor: the code step again (decision 33). */
const PASSKEY_REFUSED = 'That passkey could not sign you in. Try again.';
const WRONG_CODE = 'That code is not right. Try the newest code, or another recovery code.';
const MUST_SET_UP =
  'Your account needs a second step at sign-in. Set up an authenticator app to finish signing in.';

/**
 * The second factor (docs/decisions.md, decision 34): the step after a correct password
 * (/sign-in/second-factor, and its set-up for a user who must have one), and the security page's
 * authenticator app and recovery codes (/account/security/...).
 */
export function registerSecondFactorRoutes(app: FastifyInstance, ui: UiContext): void {
  const base = ui.config.basePath;
  const toSignIn = (reply: FastifyReply) => reply.redirect(`${base}/sign-in`, 303);

  async function renderSetUp(
    reply: FastifyReply,
    status: number,
    frame: ReturnType<typeof frameFor>,
    setUp: { secret: string; uri: string },
    options: { csrfToken: string; action: string; reason?: string; error?: string },
  ): Promise<FastifyReply> {
    return sendPage(
      reply,
      status,
      totpSetUpPage(frame, { ...options, secret: setUp.secret, qrSvg: await qrCodeSvg(setUp.uri) }),
    );
  }

  /** The pending sign-in's user, or undefined (no pending sign-in, or the user is gone). */
  async function pendingUser(request: FastifyRequest) {
    const pending = pendingSignIn(ui, request);
    const user = pending && (await ui.engine.secondFactors.user(pending.userId));
    return pending && user && { pending, user };
  }

  /** Ends a sign-in whose code was right: the session records the password, then the code (decision 30). */
  async function finish(
    request: FastifyRequest,
    reply: FastifyReply,
    found: NonNullable<Awaited<ReturnType<typeof pendingUser>>>,
    result: Extract<SignInResult, { outcome: 'signed-in' }>,
  ): Promise<FastifyReply> {
    clearPendingSignIn(reply);
    const complete = found.pending.reauth === true ? completeReauthentication : completeSignIn;
    return complete(ui, request, reply, {
      userId: found.user.id,
      authentication: [found.pending.first, result.authentication],
      next: found.pending.next,
    });
  }

  app.get(ENDPOINTS.signInSecondFactor.path, async function secondFactorForm(request, reply) {
    const found = await pendingUser(request);
    if (found === undefined) return toSignIn(reply);
    if (found.pending.setUp) return reply.redirect(base + ENDPOINTS.signInSecondFactorSetUp.path, 303);
    return codePage(ui, request, reply, found.user.id, 200);
  });

  app.post(ENDPOINTS.signInSecondFactor.path, async function secondFactorSubmit(request, reply) {
    if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token'))) return forbiddenForm(ui, reply);
    const found = await pendingUser(request);
    if (found === undefined || found.pending.setUp) return toSignIn(reply);
    const result = await ui.engine.verifySecondFactor({
      userId: found.user.id,
      code: (field(request.body, 'code') ?? '').trim(),
      address: request.ip,
    });
    if (result.outcome === 'throttled') return tooManySignIns(ui, reply, result.retryAfter);
    if (result.outcome === 'disabled') return accountDisabled(ui, reply);
    if (result.outcome === 'wrong-credentials') {
      return codePage(ui, request, reply, found.user.id, 401, WRONG_CODE);
    }
    return finish(request, reply, found, result);
  });

  app.get(ENDPOINTS.signInSecondFactorSetUp.path, async function signInSetUpForm(request, reply) {
    const found = await pendingUser(request);
    if (found === undefined) return toSignIn(reply);
    if (!found.pending.setUp) return reply.redirect(base + ENDPOINTS.signInSecondFactor.path, 303);
    const setUp = await ui.engine.secondFactors.beginTotp(found.user);
    // Set up meanwhile (another tab): the code step asks for it.
    if (setUp === undefined) return toSignIn(reply);
    const browser = await ui.browsers.load(request, reply);
    return renderSetUp(reply, 200, frameFor(ui), setUp, {
      csrfToken: browser.csrfToken,
      action: ENDPOINTS.signInSecondFactorSetUp.path,
      reason: MUST_SET_UP,
    });
  });

  app.post(ENDPOINTS.signInSecondFactorSetUp.path, async function signInSetUpSubmit(request, reply) {
    if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token'))) return forbiddenForm(ui, reply);
    const found = await pendingUser(request);
    if (found === undefined || !found.pending.setUp) return toSignIn(reply);
    const result = await ui.engine.confirmTotpSetUp({
      userId: found.user.id,
      code: (field(request.body, 'code') ?? '').trim(),
      address: request.ip,
    });
    if (result.outcome === 'throttled') return tooManySignIns(ui, reply, result.retryAfter);
    if (result.outcome === 'disabled') return accountDisabled(ui, reply);
    if (result.outcome === 'wrong-credentials') {
      const setUp = await ui.engine.secondFactors.begunTotp(found.user);
      if (setUp === undefined) return toSignIn(reply);
      const browser = await ui.browsers.load(request, reply);
      return renderSetUp(reply, 401, frameFor(ui), setUp, {
        csrfToken: browser.csrfToken,
        action: ENDPOINTS.signInSecondFactorSetUp.path,
        reason: MUST_SET_UP,
        error: WRONG_CODE,
      });
    }
    return finish(request, reply, found, result);
  });

  // The security page's changes: signed in, recently (recent-sign-in.ts), or asked to sign in again.
  async function recentlySignedIn(
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<SignedInContext | FastifyReply> {
    const browser: BrowserContext = await ui.browsers.load(request, reply);
    if (browser.user === undefined || browser.authentication === undefined) {
      return reply.redirect(`${base}/sign-in?next=/account/security`, 303);
    }
    const signedIn = browser as SignedInContext;
    return signedInRecently(ui, signedIn) ? signedIn : askToSignInAgain(ui, reply);
  }
  const isReply = (value: SignedInContext | FastifyReply): value is FastifyReply => !('browserId' in value);
  const done = (reply: FastifyReply, notice: string) => {
    reply.setCookie(SECURITY_NOTICE_COOKIE, notice, { ...SECURITY_NOTICE_OPTIONS, maxAge: 60 });
    return reply.redirect(`${base}/account/security`, 303);
  };

  app.get(ENDPOINTS.authenticatorAppSetUp.path, async function appSetUpForm(request, reply) {
    const browser = await recentlySignedIn(request, reply);
    if (isReply(browser)) return browser;
    const setUp = await ui.engine.secondFactors.beginTotp(browser.user);
    if (setUp === undefined) return reply.redirect(`${base}/account/security`, 303);
    return renderSetUp(reply, 200, frameFor(ui, browser), setUp, {
      csrfToken: browser.csrfToken,
      action: ENDPOINTS.authenticatorAppSetUp.path,
    });
  });

  app.post(ENDPOINTS.authenticatorAppSetUp.path, async function appSetUpSubmit(request, reply) {
    if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token'))) return forbiddenForm(ui, reply);
    const browser = await recentlySignedIn(request, reply);
    if (isReply(browser)) return browser;
    const user: User = browser.user;
    const result = await ui.engine.confirmTotpSetUp({
      userId: user.id,
      code: (field(request.body, 'code') ?? '').trim(),
      address: request.ip,
    });
    if (result.outcome === 'throttled') return tooManySignIns(ui, reply, result.retryAfter);
    if (result.outcome === 'disabled') return accountDisabled(ui, reply);
    if (result.outcome === 'wrong-credentials') {
      const setUp = await ui.engine.secondFactors.begunTotp(user);
      if (setUp === undefined) return reply.redirect(`${base}/account/security`, 303);
      return renderSetUp(reply, 401, frameFor(ui, browser), setUp, {
        csrfToken: browser.csrfToken,
        action: ENDPOINTS.authenticatorAppSetUp.path,
        error: WRONG_CODE,
      });
    }
    return done(reply, 'Authenticator app set up');
  });

  app.post(ENDPOINTS.authenticatorAppRemoval.path, async function appRemove(request, reply) {
    if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token'))) return forbiddenForm(ui, reply);
    const browser = await recentlySignedIn(request, reply);
    if (isReply(browser)) return browser;
    await ui.engine.secondFactors.removeTotp(browser.user.id, byUser(browser.user.id, request.ip));
    return done(reply, 'Authenticator app removed');
  });

  app.post(ENDPOINTS.recoveryCodesGeneration.path, async function recoveryCodes(request, reply) {
    if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token'))) return forbiddenForm(ui, reply);
    const browser = await recentlySignedIn(request, reply);
    if (isReply(browser)) return browser;
    const codes = await ui.engine.secondFactors.generateRecoveryCodes(
      browser.user.id,
      byUser(browser.user.id, request.ip),
    );
    return sendPage(reply, 200, recoveryCodesPage(frameFor(ui, browser), codes));
  });
}

/** The code step's page (decision 34), with "Use a passkey" for a user with passkeys (decision 33). */
async function codePage(
  ui: UiContext,
  request: FastifyRequest,
  reply: FastifyReply,
  userId: string,
  status: number,
  error?: string,
): Promise<FastifyReply> {
  const browser = await ui.browsers.load(request, reply);
  const [passkeys, factors] = await Promise.all([
    ui.engine.passkeys.list(userId),
    ui.engine.secondFactors.status(userId),
  ]);
  return sendPage(
    reply,
    status,
    secondFactorPage(frameFor(ui), {
      csrfToken: browser.csrfToken,
      action: ENDPOINTS.signInSecondFactor.path,
      ...(error !== undefined ? { error } : {}),
      ...(passkeys.length > 0
        ? { passkeyOption: passkeySecondFactorOption(ui.config.basePath, browser.csrfToken) }
        : {}),
      // One who has no app and no recovery codes is asked for the passkey alone (afterPassword's
      // 'verify' for a user who must use a second factor and has a passkey).
      codes: factors.totp || factors.recoveryCodesLeft > 0,
    }),
  );
}

/**
 * The password sign-in waiting for its second factor, as the passkey routes see it (decision 33): a
 * passkey completes it, the session recording the password and then the passkey. A pending set-up
 * (a user who must set up an app) is not a sign-in a passkey can finish.
 */
export function passkeyPendingSignIn(ui: UiContext): PendingPasswordSignIn {
  return {
    async pending(request) {
      const pending = pendingSignIn(ui, request);
      return pending !== undefined && !pending.setUp
        ? { userId: pending.userId, next: pending.next }
        : undefined;
    },
    async refused(request, reply) {
      const pending = pendingSignIn(ui, request);
      if (pending === undefined) return reply.redirect(`${ui.config.basePath}/sign-in`, 303);
      return codePage(ui, request, reply, pending.userId, 401, PASSKEY_REFUSED);
    },
    async complete(request, reply, passkey) {
      const pending = pendingSignIn(ui, request);
      if (pending === undefined) throw new Error('no password sign-in is pending');
      clearPendingSignIn(reply);
      const complete = pending.reauth === true ? completeReauthentication : completeSignIn;
      return complete(ui, request, reply, {
        userId: pending.userId,
        authentication: [pending.first, passkey],
        next: pending.next,
      });
    },
  };
}
