import { html } from '../html.js';
import type { SecuritySectionSource } from './sections.js';

/**
 * "Email" on /account/security (docs/decisions.md, decision 35): the account's address, and "Verify"
 * beside it until its owner has followed a link mailed to it. What `email_verified` says in ID tokens
 * and UserInfo is what this shows.
 */
export const emailSection: SecuritySectionSource = async (ui, browser) => {
  const { email, emailVerified } = browser.user;
  const base = ui.config.basePath;
  const body =
    email === null
      ? html`<p>Your account has no email address, so a forgotten password cannot be reset by mail.</p>`
      : emailVerified
        ? html`<p><strong>${email}</strong> <span class="muted">(verified)</span></p>`
        : html`<form method="post" action="${base}/account/security/email/verify">
            <input type="hidden" name="csrf_token" value="${browser.csrfToken}" />
            <p>
              <strong>${email}</strong> <span class="muted">(not verified)</span>
              <button type="submit" aria-label="Verify ${email}">Verify</button>
            </p>
          </form>`;
  return { id: 'email', heading: 'Email', body };
};
