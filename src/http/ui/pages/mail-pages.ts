import { html, type SafeHtml } from '../html.js';
import { layout, type PageFrame } from './layout.js';

/**
 * The pages of recovery and email verification by mail (docs/decisions.md, decision 35): "Forgot
 * password?" → "Email" / "Send link"; the link → "New password" / "Set password"; the verification
 * link → "Verify". Labels as docs/design.md names them.
 */

const errorLine = (error: string | undefined): SafeHtml | string =>
  error ? html`<p class="error" id="form-error" role="alert">${error}</p>` : '';

const invalidIf = (error: string | undefined): SafeHtml | string =>
  error !== undefined ? html` aria-invalid="true" aria-describedby="form-error"` : '';

export function forgotPasswordPage(
  frame: PageFrame,
  input: { csrfToken: string; email?: string; error?: string },
): string {
  const body = html` <h1>Forgot password?</h1>
    <p class="lead">Enter your account's email address and we will send you a link to set a new password.</p>
    ${errorLine(input.error)}
    <form method="post" action="${frame.basePath}/forgot-password" class="stack">
      <input type="hidden" name="csrf_token" value="${input.csrfToken}" />
      <div class="field">
        <label for="email">Email</label>
        <input
          id="email"
          name="email"
          type="email"
          autocomplete="email"
          autocapitalize="none"
          spellcheck="false"
          maxlength="254"
          required
          autofocus
          value="${input.email ?? ''}"
          ${invalidIf(input.error)}
        />
      </div>
      <div class="actions">
        <button type="submit" class="primary">Send link</button>
      </div>
    </form>
    <p><a href="${frame.basePath}/sign-in">Back to sign in</a></p>`;
  return layout(frame, { title: 'Forgot password?', name: 'forgot-password', body });
}

/** The one answer to "Send link", whether an account has the address or not. */
export function resetLinkSentPage(frame: PageFrame, input: { email: string }): string {
  const body = html` <h1>Check your email</h1>
    <p class="notice" role="status">
      If an account has the address <strong>${input.email}</strong>, we have sent a link to it. The link works
      once, for 30 minutes.
    </p>
    <p class="muted">No mail? Check the spam folder, or ask again in a few minutes.</p>
    <p><a href="${frame.basePath}/sign-in">Back to sign in</a></p>`;
  return layout(frame, { title: 'Check your email', name: 'forgot-password-sent', body });
}

export function newPasswordPage(
  frame: PageFrame,
  input: { csrfToken: string; token: string; username: string; error?: string },
): string {
  const body = html` <h1>Set a new password</h1>
    <p class="lead">for the account <strong>${input.username}</strong></p>
    ${errorLine(input.error)}
    <form method="post" action="${frame.basePath}/password-reset" class="stack">
      <input type="hidden" name="csrf_token" value="${input.csrfToken}" />
      <input type="hidden" name="token" value="${input.token}" />
      <input type="hidden" name="username" autocomplete="username" value="${input.username}" />
      <div class="field">
        <label for="new_password">New password</label>
        <input
          id="new_password"
          name="new_password"
          type="password"
          autocomplete="new-password"
          minlength="8"
          maxlength="1024"
          required
          autofocus
          aria-describedby="${input.error !== undefined ? 'form-error password-hint' : 'password-hint'}"
          ${input.error !== undefined ? html` aria-invalid="true"` : ''}
        />
        <p class="hint" id="password-hint">At least 8 characters.</p>
      </div>
      <div class="actions">
        <button type="submit" class="primary">Set password</button>
      </div>
    </form>`;
  return layout(frame, { title: 'Set a new password', name: 'password-reset', body });
}

export function passwordSetPage(frame: PageFrame): string {
  const body = html` <h1>Password set</h1>
    <p class="notice" role="status">
      Your new password is set. You were signed out everywhere, and every application you had allowed must be
      allowed again.
    </p>
    <p><a href="${frame.basePath}/sign-in">Sign in with your new password</a></p>`;
  return layout(frame, { title: 'Password set', name: 'password-set', body });
}

/** The verification link's page: a button, so that a mail scanner opening the link verifies nothing. */
export function verifyEmailPage(
  frame: PageFrame,
  input: { csrfToken: string; token: string; email: string },
): string {
  const body = html` <h1>Verify your email address</h1>
    <p class="lead">Confirm that <strong>${input.email}</strong> is your address.</p>
    <form method="post" action="${frame.basePath}/email-verification" class="stack">
      <input type="hidden" name="csrf_token" value="${input.csrfToken}" />
      <input type="hidden" name="token" value="${input.token}" />
      <div class="actions">
        <button type="submit" class="primary" autofocus>Verify</button>
      </div>
    </form>`;
  return layout(frame, { title: 'Verify your email address', name: 'email-verification', body });
}

export function emailVerifiedPage(frame: PageFrame, input: { email: string }): string {
  const body = html` <h1>Email address verified</h1>
    <p class="notice" role="status"><strong>${input.email}</strong> is verified.</p>
    <p><a href="${frame.basePath}/account/security">Go to your account's security</a></p>`;
  return layout(frame, { title: 'Email address verified', name: 'email-verified', body });
}

/** Why a mailed link does not work (used, expired, unknown, or its address changed since). */
export function linkUnusablePage(
  frame: PageFrame,
  input: { title: string; message: string; again: 'password-reset' | 'email-verification' },
): string {
  const body = html` <h1>${input.title}</h1>
    <p role="alert">${input.message}</p>
    <p>
      ${
        input.again === 'password-reset'
          ? html`<a href="${frame.basePath}/forgot-password">Ask for a new link</a>`
          : html`<a href="${frame.basePath}/account/security"
              >Ask for a new link on your account's security page</a
            >`
      }
    </p>`;
  return layout(frame, { title: input.title, name: 'mail-link', body });
}
