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
