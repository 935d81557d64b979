import type { FederatedLink } from '../../../core/model.js';
import type { SignedInContext } from '../browser-context.js';
import { html } from '../html.js';
import { formatTime } from '../pages/format.js';
import type { SecuritySection } from '../pages/security-page.js';
import type { UiContext } from '../ui-context.js';
import type { SecuritySectionSource } from './sections.js';

/** The section's id: its heading's anchor, and how a refusal replaces it (sendSecurityPage). */
export const LINKED_ACCOUNTS_SECTION_ID = 'linked-accounts';

function time(epochSeconds: number) {
  const { text, iso } = formatTime(epochSeconds);
  return html`<time datetime="${iso}">${text}</time>`;
}

/**
 * "Linked accounts" (docs/decisions.md, decision 40): each upstream account that signs this user in,
 * with its provider, its name there, when it was linked and last used, and "Remove" (refused for the
 * last way to sign in); then "Link NAME" for each provider not linked yet. Linking starts the upstream
 * flow (a link, not a form: the flow redirects to the provider's origin, which form-action would
 * refuse), carrying this page's CSRF token, after a recent sign-in. Shown only where providers exist.
 */
export async function linkedAccountsSection(
  ui: UiContext,
  browser: SignedInContext,
  error?: string,
): Promise<SecuritySection | undefined> {
  const base = ui.config.basePath;
  const [providers, links] = await Promise.all([
    ui.engine.federation.providers(),
    ui.engine.federation.links(browser.user.id),
  ]);
  if (providers.length === 0 && links.length === 0) return undefined;
  const nameOf = (id: string) => providers.find((provider) => provider.id === id)?.name ?? id;
  const item = (link: FederatedLink, index: number) =>
    html`<li class="app" aria-labelledby="linked-account-${index}">
      <h3 id="linked-account-${index}">${nameOf(link.providerId)}</h3>
      <dl>
        ${
          link.label !== null
            ? html`<dt>Account</dt>
                <dd>${link.label}</dd>`
            : ''
        }
        <dt>Linked</dt>
        <dd>${time(link.createdAt)}</dd>
        <dt>Last used</dt>
        <dd>${link.lastUsedAt === null ? 'Never' : time(link.lastUsedAt)}</dd>
      </dl>
      <form method="post" action="${base}/account/security/linked-accounts/remove">
        <input type="hidden" name="csrf_token" value="${browser.csrfToken}" />
        <input type="hidden" name="id" value="${link.id}" />
        <button type="submit" class="danger" aria-describedby="linked-account-${index}">Remove</button>
      </form>
    </li>`;
  const linked = new Set(links.map((link) => link.providerId));
  const linkable = providers.filter((provider) => !linked.has(provider.id));
  const body = html`<p>Accounts elsewhere that sign you in here.</p>
    ${error !== undefined ? html`<p class="error" id="linked-accounts-error" role="alert">${error}</p>` : ''}
    ${
      links.length === 0
        ? html`<p class="empty">You have no linked accounts.</p>`
        : html`<ul class="apps linked-accounts">
            ${links.map(item)}
          </ul>`
    }
    ${
      linkable.length === 0
        ? ''
        : html`<ul class="providers">
            ${linkable.map(
              (provider) =>
                html`<li>
                  <a
                    class="button"
                    href="${base}/sign-in/upstream/${encodeURIComponent(provider.id)}?link=1&amp;csrf_token=${encodeURIComponent(browser.csrfToken)}"
                    >Link ${provider.name}</a
                  >
                </li>`,
            )}
          </ul>`
    }`;
  return { id: LINKED_ACCOUNTS_SECTION_ID, heading: 'Linked accounts', body };
}

/** The section on the security page (SECURITY_SECTIONS). */
export const linkedAccountsSectionSource: SecuritySectionSource = (ui, browser) =>
  linkedAccountsSection(ui, browser);
