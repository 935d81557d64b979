import type { ConnectedApp } from '../../../core/authorize/connected-apps.js';
import { html } from '../html.js';
import { clientLabel } from './client-label.js';
import { descriptionNamesScope, formatTime } from './format.js';
import { layout, type PageFrame } from './layout.js';

export interface AppsPageInput {
  csrfToken: string;
  apps: ConnectedApp[];
  describe: (scope: string) => string;
  /** The client whose access was just revoked, to confirm it: its name, and its document's host if any. */
  revoked?: { name: string; host?: string | undefined };
}

function time(epochSeconds: number) {
  const { text, iso } = formatTime(epochSeconds);
  return html`<time datetime="${iso}">${text}</time>`;
}

export function appsPage(frame: PageFrame, input: AppsPageInput): string {
  const body = html` <h1>Connected apps</h1>
    <p class="lead">Applications you have allowed to use your account. Revoking ends their access at once.</p>
    ${input.revoked !== undefined ? html`<p class="notice" role="status">Access for <strong>${clientLabel(input.revoked.name, input.revoked.host)}</strong> was revoked.</p>` : ''}
    ${
      input.apps.length === 0
        ? html`<p class="empty">No application has access to your account.</p>`
        : html`<ul class="apps">
            ${input.apps.map(
              (app, index) =>
                html`<li class="app" aria-labelledby="app-${index}">
                  <h2 id="app-${index}">${clientLabel(app.clientName, app.clientHost)}</h2>
                  <dl>
                    <dt>Allowed to</dt>
                    <dd>
                      ${
                        app.scope.length === 0
                          ? 'Know that it is you'
                          : html`<ul class="scope-list">
                              ${app.scope.map(
                                (name) =>
                                  html`<li>
                                    ${
                                      descriptionNamesScope(input.describe(name), name)
                                        ? input.describe(name)
                                        : html`${input.describe(name)} <code>${name}</code>`
                                    }
                                  </li>`,
                              )}
                            </ul>`
                      }
                    </dd>
                    <dt>Granted</dt>
                    <dd>${time(app.grantedAt)}</dd>
                    <dt>Valid until</dt>
                    <dd>${app.validUntil === null ? 'Until you revoke it' : time(app.validUntil)}</dd>
                  </dl>
                  <form
                    method="post"
                    action="${frame.basePath}/account/apps/${encodeURIComponent(app.clientId)}/revoke"
                  >
                    <input type="hidden" name="csrf_token" value="${input.csrfToken}" />
                    <button type="submit" class="danger" aria-describedby="app-${index}">Revoke</button>
                  </form>
                </li>`,
            )}
          </ul>`
    }`;
  return layout(frame, { title: 'Connected apps', name: 'apps', body });
}
