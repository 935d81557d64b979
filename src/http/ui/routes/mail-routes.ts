import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ENDPOINTS } from '../../../config/endpoints.js';
import type { LinkState } from '../../../core/users/account-mail.js';
import { BrowserSessions } from '../../../core/sign-in/browser-sessions.js';
import { ValidationError } from '../../../core/validation.js';
import {
  emailVerifiedPage,
  forgotPasswordPage,
  linkUnusablePage,
  newPasswordPage,
  passwordSetPage,
  resetLinkSentPage,
  verifyEmailPage,
} from '../pages/mail-pages.js';
import { SECURITY_NOTICE_COOKIE, SECURITY_NOTICE_OPTIONS } from './security-routes.js';
import { field, forbiddenForm, frameFor, sendPage, type UiContext } from '../ui-context.js';

type LinkPurpose = 'password-reset' | 'email-verification';

/** A link token as issued (43 base64url characters); anything else is not one. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

function tokenOf(value: unknown): string | undefined {
  return typeof value === 'string' && TOKEN.test(value) ? value : undefined;
}

/**
 * Logs a mail that could not be sent, after the person had their answer (the send runs off the
 * request's path). The message only: MailSendError's names no credential and no link.
 */
function mailFailed(request: FastifyRequest) {
  return (error: unknown) =>
    request.log.error(
      { err: { name: (error as Error).name, message: (error as Error).message } },
      'a mail could not be sent',
    );
}

/**
 * Why a link does not work, as a page: 410 Gone for one that worked once (used, expired: it will not
 * again), 400 for one that never did.
 */
function sendUnusable(
  ui: UiContext,
  reply: FastifyReply,
  state: Exclude<LinkState, { outcome: 'valid' }> | { outcome: 'address-changed' },
  purpose: LinkPurpose,
): FastifyReply {
  const frame = frameFor(ui);
  const again = purpose;
  switch (state.outcome) {
    case 'used':
      return sendPage(
        reply,
        410,
        linkUnusablePage(frame, {
          title: 'This link was used already',
          message: 'Each link works once.',
          again,
        }),
      );
    case 'expired':
      return sendPage(
        reply,
        410,
        linkUnusablePage(frame, {
          title: 'This link has expired',
          message: 'Links work for 30 minutes after they are sent.',
          again,
        }),
      );
    case 'address-changed':
      return sendPage(
        reply,
        410,
        linkUnusablePage(frame, {
          title: 'Your address has changed',
          message: "This link was sent to an address that is no longer your account's.",
          again,
        }),
      );
    default:
      return sendPage(
        reply,
        400,
        linkUnusablePage(frame, {
          title: 'This link does not work',
          message: 'Check that the whole link from the mail was opened.',
          again,
        }),
      );
  }
}

/**
 * "Forgot password?" and email verification by mail (docs/decisions.md, decision 35): GET/POST
 * /forgot-password, GET/POST /password-reset, GET/POST /email-verification, and the security page's
 * POST /account/security/email/verify.
 */
export function registerMailRoutes(app: FastifyInstance, ui: UiContext): void {
  const base = ui.config.basePath;

  app.get(ENDPOINTS.forgotPassword.path, async function forgotPasswordForm(request, reply) {
    const browser = await ui.browsers.load(request, reply);
    return sendPage(reply, 200, forgotPasswordPage(frameFor(ui), { csrfToken: browser.csrfToken }));
  });

  app.post(ENDPOINTS.forgotPassword.path, async function sendResetLink(request, reply) {
    if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token'))) return forbiddenForm(ui, reply);
    const email = (field(request.body, 'email') ?? '').trim();
    try {
      // Returns before the store is read: the answer below is the same, and as quick, whether an
      // account has the address or not.
      ui.engine.accountMail.startPasswordReset(email, mailFailed(request));
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      const browser = await ui.browsers.load(request, reply);
      return sendPage(
        reply,
        400,
        forgotPasswordPage(frameFor(ui), {
          csrfToken: browser.csrfToken,
          email,
          error: 'Enter an email address, such as name@example.com.',
        }),
      );
    }
    return sendPage(reply, 200, resetLinkSentPage(frameFor(ui), { email }));
  });

  app.get(ENDPOINTS.passwordReset.path, async function newPasswordForm(request, reply) {
    const token = tokenOf((request.query as Record<string, unknown>).token);
    if (token === undefined) return sendUnusable(ui, reply, { outcome: 'unknown' }, 'password-reset');
    const state = await ui.engine.accountMail.check(token, 'password-reset');
    if (state.outcome !== 'valid') return sendUnusable(ui, reply, state, 'password-reset');
    const browser = await ui.browsers.load(request, reply);
    return sendPage(
      reply,
      200,
      newPasswordPage(frameFor(ui), { csrfToken: browser.csrfToken, token, username: state.user.username }),
    );
  });

  app.post(ENDPOINTS.passwordReset.path, async function setNewPassword(request, reply) {
    if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token'))) return forbiddenForm(ui, reply);
    const token = tokenOf(field(request.body, 'token'));
    if (token === undefined) return sendUnusable(ui, reply, { outcome: 'unknown' }, 'password-reset');
    let result;
    try {
      result = await ui.engine.accountMail.resetPassword(token, field(request.body, 'new_password') ?? '');
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      // The password was refused before the link was consumed: the form again, the link still good.
      const state = await ui.engine.accountMail.check(token, 'password-reset');
      if (state.outcome !== 'valid') return sendUnusable(ui, reply, state, 'password-reset');
      const browser = await ui.browsers.load(request, reply);
      return sendPage(
        reply,
        400,
        newPasswordPage(frameFor(ui), {
          csrfToken: browser.csrfToken,
          token,
          username: state.user.username,
          error: 'The new password must be 8 to 1024 characters.',
        }),
      );
    }
    if (result.outcome !== 'reset') return sendUnusable(ui, reply, result, 'password-reset');
    // Every session of the user ended (decision 12), this browser's too if it was one: a fresh id.
    ui.browsers.setCookie(reply, BrowserSessions.newBrowserId());
    return sendPage(reply, 200, passwordSetPage(frameFor(ui)));
  });

  app.get(ENDPOINTS.emailVerification.path, async function verifyEmailForm(request, reply) {
    const token = tokenOf((request.query as Record<string, unknown>).token);
    if (token === undefined) return sendUnusable(ui, reply, { outcome: 'unknown' }, 'email-verification');
    const state = await ui.engine.accountMail.check(token, 'email-verification');
    if (state.outcome !== 'valid') return sendUnusable(ui, reply, state, 'email-verification');
    if (state.user.email !== state.link.address) {
      return sendUnusable(ui, reply, { outcome: 'address-changed' }, 'email-verification');
    }
    const browser = await ui.browsers.load(request, reply);
    return sendPage(
      reply,
      200,
      verifyEmailPage(frameFor(ui, browser), {
        csrfToken: browser.csrfToken,
        token,
        email: state.link.address,
      }),
    );
  });

  app.post(ENDPOINTS.emailVerification.path, async function verifyEmail(request, reply) {
    if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token'))) return forbiddenForm(ui, reply);
    const token = tokenOf(field(request.body, 'token'));
    if (token === undefined) return sendUnusable(ui, reply, { outcome: 'unknown' }, 'email-verification');
    const result = await ui.engine.accountMail.verifyEmail(token);
    if (result.outcome !== 'verified') return sendUnusable(ui, reply, result, 'email-verification');
    const browser = await ui.browsers.load(request, reply);
    return sendPage(reply, 200, emailVerifiedPage(frameFor(ui, browser), { email: result.user.email ?? '' }));
  });

  app.post(ENDPOINTS.emailVerificationRequest.path, async function sendVerificationLink(request, reply) {
    if (!ui.browsers.verifyCsrf(request, field(request.body, 'csrf_token'))) return forbiddenForm(ui, reply);
    const browser = await ui.browsers.load(request, reply);
    if (browser.user === undefined) return reply.redirect(`${base}/sign-in?next=/account/security`, 303);
    const email = browser.user.email;
    if (email !== null && !browser.user.emailVerified) {
      ui.engine.accountMail.startEmailVerification(browser.user.id, mailFailed(request));
      const notice = `Verification link sent to ${email}`;
      reply.setCookie(
        SECURITY_NOTICE_COOKIE,
        notice.length <= 120 ? notice : 'Verification link sent',
        SECURITY_NOTICE_OPTIONS,
      );
    }
    return reply.redirect(`${base}/account/security`, 303);
  });
}
