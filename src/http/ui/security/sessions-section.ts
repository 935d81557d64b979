import type { SessionListing } from '../../../core/sign-in/browser-sessions.js';
import type { SignedInContext } from '../browser-context.js';
import { html } from '../html.js';
import { formatTime } from '../pages/format.js';
import type { SecuritySection } from '../pages/security-page.js';
import type { UiContext } from '../ui-context.js';
import { deviceName } from './device-name.js';
import type { SecuritySectionSource } from './sections.js';

function time(epochSeconds: number) {
  const { text, iso } = formatTime(epochSeconds);
  return html`<time datetime="${iso}">${text}</time>`;
}

/**
 * "Sessions" (decision 37): this browser and the others where the user is signed in, each with its
 * device (from its User-Agent), the address it signed in from (no geolocation database: the address
 * is what is known), when it signed in and was last active; "Sign out" for each other one, and "Sign
 * out everywhere else". Each form names a session by its `sid`, which is safe to show.
 */
export function sessionsSection(
  ui: UiContext,
  browser: SignedInContext,
  sessions: readonly SessionListing[],
): SecuritySection {
  const base = ui.config.basePath;
  // This browser first, then the others, most recently active first.
  const ordered = [...sessions].sort(
    (a, b) => Number(b.current) - Number(a.current) || b.lastActiveAt - a.lastActiveAt,
  );
  const others = ordered.filter((session) => !session.current).length;
  return {
    id: 'sessions',
    heading: 'Sessions',
    body: html`<p>Where you are signed in.</p>
      <ul class="apps sessions">
        ${ordered.map(
          (session, index) =>
            html`<li class="app" aria-labelledby="session-${index}">
              <h3 id="session-${index}">
                ${deviceName(session.userAgent)}${session.current ? ' (this browser)' : ''}
              </h3>
              <dl>
                <dt>Address</dt>
                <dd>${session.address ?? 'Unknown'}</dd>
                <dt>Signed in</dt>
                <dd>${time(session.createdAt)}</dd>
                <dt>Last active</dt>
                <dd>${session.current ? 'Now' : time(session.lastActiveAt)}</dd>
              </dl>
              ${
                session.current
                  ? ''
                  : html`<form method="post" action="${base}/account/security/sessions/sign-out">
                      <input type="hidden" name="csrf_token" value="${browser.csrfToken}" />
                      <input type="hidden" name="session" value="${session.sid}" />
                      <button type="submit" class="danger" aria-describedby="session-${index}">
                        Sign out
                      </button>
                    </form>`
              }
            </li>`,
        )}
      </ul>
      ${
        others > 0
          ? html`<form method="post" action="${base}/account/security/sessions/sign-out-others">
              <input type="hidden" name="csrf_token" value="${browser.csrfToken}" />
              <div class="actions">
                <button type="submit" class="danger">Sign out everywhere else</button>
              </div>
            </form>`
          : html`<p class="hint">You are not signed in anywhere else.</p>`
      }`,
  };
}

export const sessionsSectionSource: SecuritySectionSource = async (ui, browser) =>
  sessionsSection(ui, browser, await ui.engine.browserSessions.list(browser.user.id, browser.browserId));
