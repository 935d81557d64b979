import type { Passkey } from '../../../core/model.js';
import { PASSKEY_NAME_MAX_LENGTH } from '../../../core/sign-in/passkey-rules.js';
import type { SignedInContext } from '../browser-context.js';
import { html } from '../html.js';
import { formatTime } from '../pages/format.js';
import type { SecuritySection } from '../pages/security-page.js';
import type { UiContext } from '../ui-context.js';

function time(epochSeconds: number) {
  const { text, iso } = formatTime(epochSeconds);
  return html`<time datetime="${iso}">${text}</time>`;
}

/**
 * The security page's "Passkeys" (docs/decisions.md, decision 33): each passkey with its name, when it
 * was added and last used, and "Remove"; then "Add a passkey" with a name. The add form is hidden until
 * /assets/passkey finds WebAuthn in the browser (it runs the ceremony, then posts the form).
 */
export async function passkeysSection(ui: UiContext, browser: SignedInContext): Promise<SecuritySection> {
  const base = ui.config.basePath;
  const passkeys = await ui.engine.passkeys.list(browser.user.id);
  const item = (passkey: Passkey, index: number) =>
    html`<li class="app" aria-labelledby="passkey-${index}">
      <h3 id="passkey-${index}">${passkey.name}</h3>
      <dl>
        <dt>Added</dt>
        <dd>${time(passkey.createdAt)}</dd>
        <dt>Last used</dt>
        <dd>${passkey.lastUsedAt === null ? 'Never' : time(passkey.lastUsedAt)}</dd>
        <dt>Kind</dt>
        <dd>${passkey.backupEligible ? 'Synced between your devices' : 'Kept on one device'}</dd>
      </dl>
      <form method="post" action="${base}/account/security/passkeys/remove">
        <input type="hidden" name="csrf_token" value="${browser.csrfToken}" />
        <input type="hidden" name="id" value="${passkey.id}" />
        <button type="submit" class="danger" aria-describedby="passkey-${index}">Remove</button>
      </form>
    </li>`;
  const body = html`<p>Sign in with your fingerprint, face or screen lock instead of a password.</p>
    ${
      passkeys.length === 0
        ? html`<p class="empty">You have no passkeys yet.</p>`
        : html`<ul class="apps passkeys">
            ${passkeys.map(item)}
          </ul>`
    }
    <form
      method="post"
      action="${base}/account/security/passkeys"
      class="stack"
      data-passkey="create"
      data-options="${base}/account/security/passkeys/options"
      hidden
    >
      <input type="hidden" name="csrf_token" value="${browser.csrfToken}" />
      <input type="hidden" name="credential" value="" />
      <div class="field">
        <label for="passkey-name">Name</label>
        <input
          id="passkey-name"
          name="name"
          required
          maxlength="${String(PASSKEY_NAME_MAX_LENGTH)}"
          autocomplete="off"
          aria-describedby="passkey-name-hint"
        />
        <p class="hint" id="passkey-name-hint">
          So you can tell your passkeys apart, for example “Work laptop”.
        </p>
      </div>
      <p class="error" role="alert" data-passkey-error hidden></p>
      <div class="actions">
        <button type="submit" class="primary">Add a passkey</button>
      </div>
    </form>`;
  return { id: 'passkeys', heading: 'Passkeys', body, scripts: ['/assets/passkey'] };
}
