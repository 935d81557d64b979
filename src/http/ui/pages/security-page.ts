import { html, type SafeHtml } from '../html.js';
import { layout, type PageFrame } from './layout.js';

/**
 * One part of the account's security page: passkeys, the authenticator app, recovery codes, the
 * password, sessions, linked accounts. Each is written by the method it belongs to
 * (src/http/ui/security/), so a new way of signing in adds a section, not an edit here.
 */
export interface SecuritySection {
  /** The section's id, for its heading's anchor and `aria-labelledby`. */
  id: string;
  heading: string;
  body: SafeHtml;
  /** Scripts the section's forms need (asset paths, `/assets/...`); each is loaded once. */
  scripts?: readonly string[];
}

export interface SecurityPageInput {
  sections: readonly SecuritySection[];
  /** A one-time confirmation of the change just made ("Passkey added"). */
  notice?: string;
}

export function securityPage(frame: PageFrame, input: SecurityPageInput): string {
  const body = html`<h1>Security</h1>
    <p class="lead">How you sign in, and where you are signed in.</p>
    ${input.notice !== undefined ? html`<p class="notice" role="status">${input.notice}</p>` : ''}
    ${input.sections.map(
      (section) =>
        html`<section class="security-section" aria-labelledby="${section.id}">
          <h2 id="${section.id}">${section.heading}</h2>
          ${section.body}
        </section>`,
    )}`;
  const scripts = [...new Set(input.sections.flatMap((section) => section.scripts ?? []))];
  return layout(frame, { title: 'Security', name: 'security', body, scripts });
}
