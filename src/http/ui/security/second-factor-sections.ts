import { ENDPOINTS } from '../../../config/endpoints.js';
import { html } from '../html.js';
import type { SecuritySectionSource } from './sections.js';

/**
 * "Authenticator app" (docs/decisions.md, decision 34): "Set up" when there is none, else "Remove".
 * Both go through the recent-sign-in check at their routes (routes/second-factor-routes.ts).
 */
export const authenticatorAppSection: SecuritySectionSource = async (ui, browser) => {
  const base = ui.config.basePath;
  const status = await ui.engine.secondFactors.status(browser.user.id);
  const body = status.totp
    ? html`<p>An authenticator app is set up: signing in with your password asks for its code.</p>
        <form method="post" action="${base}${ENDPOINTS.authenticatorAppRemoval.path}">
          <input type="hidden" name="csrf_token" value="${browser.csrfToken}" />
          <button type="submit" class="danger">Remove</button>
        </form>`
    : html`<p>Use an app on your phone to get a code at sign-in, so a password alone is not enough.</p>
        <form method="get" action="${base}${ENDPOINTS.authenticatorAppSetUp.path}">
          <button type="submit" class="primary">Set up</button>
        </form>`;
  return { id: 'authenticator-app', heading: 'Authenticator app', body };
};

/** "Recovery codes": how many are left, and "Generate" (which replaces them all), shown once. */
export const recoveryCodesSection: SecuritySectionSource = async (ui, browser) => {
  const base = ui.config.basePath;
  const { recoveryCodesLeft } = await ui.engine.secondFactors.status(browser.user.id);
  const body = html`<p id="recovery-codes-left">
      ${recoveryCodesLeft === 1 ? '1 recovery code left.' : `${recoveryCodesLeft} recovery codes left.`} Each
      signs you in once in place of your authenticator app.
      ${recoveryCodesLeft > 0 ? 'Generating new ones replaces them all.' : ''}
    </p>
    <form method="post" action="${base}${ENDPOINTS.recoveryCodesGeneration.path}">
      <input type="hidden" name="csrf_token" value="${browser.csrfToken}" />
      <button type="submit">Generate</button>
    </form>`;
  return { id: 'recovery-codes', heading: 'Recovery codes', body };
};
