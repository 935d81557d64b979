import type { SignedInContext } from '../browser-context.js';
import { html } from '../html.js';
import type { SecuritySection } from '../pages/security-page.js';
import type { UiContext } from '../ui-context.js';
import type { SecuritySectionSource } from './sections.js';

/** The section's id: its heading's anchor, and how a form's answer replaces it (sendSecurityPage). */
export const PASSWORD_SECTION_ID = 'password';

/** The form again after a refusal: the message, and the field it is about. */
export interface PasswordFormError {
  message: string;
  field: 'current' | 'new';
}

/**
 * "Password": "Change password" with "Current password" and "New password" (decision 37). The current
 * password is the re-authentication this change needs: no recent sign-in is asked for first.
 */
export function passwordSection(
  ui: UiContext,
  browser: SignedInContext,
  error?: PasswordFormError,
): SecuritySection {
  if (browser.user.passwordHash === '') return setPasswordSection(ui, browser);
  // WCAG 3.3.1: the field in error says so, points at the message, and has the focus.
  const invalid = (field: PasswordFormError['field']) =>
    error?.field === field ? html` aria-invalid="true" aria-describedby="password-error" autofocus` : '';
  return {
    id: PASSWORD_SECTION_ID,
    heading: 'Password',
    body: html`<form method="post" action="${ui.config.basePath}/account/security/password" class="stack">
      <input type="hidden" name="csrf_token" value="${browser.csrfToken}" />
      ${error !== undefined ? html`<p class="error" id="password-error" role="alert">${error.message}</p>` : ''}
      <div class="field">
        <label for="current-password">Current password</label>
        <input
          id="current-password"
          name="current_password"
          type="password"
          autocomplete="current-password"
          required${invalid('current')}
        />
      </div>
      <div class="field">
        <label for="new-password">New password</label>
        <input
          id="new-password"
          name="new_password"
          type="password"
          autocomplete="new-password"
          minlength="8"
          maxlength="1024"
          required${error?.field === 'new' ? html` aria-invalid="true" aria-describedby="password-error new-password-hint" autofocus` : html` aria-describedby="new-password-hint"`}
        />
        <p class="hint" id="new-password-hint">
          8 characters or more. Changing it signs you out everywhere else, and apps you allowed ask again.
        </p>
      </div>
      <div class="actions"><button type="submit">Change password</button></div>
    </form>`,
  };
}

export const passwordSectionSource: SecuritySectionSource = (ui, browser) =>
  Promise.resolve(passwordSection(ui, browser));

/**
 * "Password" of a user who has none (created by a sign-in through an upstream provider, decision 40):
 * no "Change password" (there is nothing to check), but "Set a password" through the mailed reset link
 * of decision 35, which also proves the address; without an address, an administrator sets one.
 */
function setPasswordSection(ui: UiContext, browser: SignedInContext): SecuritySection {
  const { email } = browser.user;
  return {
    id: PASSWORD_SECTION_ID,
    heading: 'Password',
    body:
      email === null
        ? html`<p>You have no password: you sign in through a linked account or a passkey.</p>
            <p class="muted">To sign in with a password too, ask an administrator to set one.</p>`
        : html`<p>You have no password: you sign in through a linked account or a passkey.</p>
            <form method="post" action="${ui.config.basePath}/forgot-password" class="stack">
              <input type="hidden" name="csrf_token" value="${browser.csrfToken}" />
              <input type="hidden" name="email" value="${email}" />
              <p class="hint" id="set-password-hint">
                We mail a link to <strong>${email}</strong> to set one. Setting it signs you out everywhere,
                and apps you allowed ask again.
              </p>
              <div class="actions">
                <button type="submit" aria-describedby="set-password-hint">Set a password</button>
              </div>
            </form>`,
  };
}
