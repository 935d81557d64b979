import { html } from '../html.js';
import { clientLabel } from './client-label.js';
import { layout, type PageFrame } from './layout.js';

export interface DeviceCodePageInput {
  csrfToken: string;
  /** What the field holds: from verification_uri_complete, or what the user typed before. */
  userCode?: string;
  error?: string;
}

/**
 * The verification page (RFC 8628 §3.3): a field labelled "Code" and a button "Continue". A code in
 * the link (verification_uri_complete, §3.3.1) only fills the field: the user still presses Continue,
 * and the consent page that follows names the application and the code to compare (§5.4).
 */
export function deviceCodePage(frame: PageFrame, input: DeviceCodePageInput): string {
  const invalid = input.error !== undefined ? html` aria-invalid="true" aria-describedby="form-error"` : '';
  const body = html` <h1>Connect a device</h1>
    <p class="lead">Enter the code your device shows to let it use your ${frame.productName} account.</p>
    ${input.error ? html`<p class="error" id="form-error" role="alert">${input.error}</p>` : ''}
    <form method="post" action="${frame.basePath}/device" class="stack">
      <input type="hidden" name="csrf_token" value="${input.csrfToken}" />
      <div class="field">
        <label for="user_code">Code</label>
        <input
          id="user_code"
          name="user_code"
          class="user-code"
          autocomplete="off"
          autocapitalize="characters"
          spellcheck="false"
          maxlength="64"
          placeholder="XXXX-XXXX"
          required
          autofocus
          value="${input.userCode ?? ''}"
          ${invalid}
        />
        <p class="hint">
          Eight letters, shown on your device as two groups of four; capitals and the dash are optional.
        </p>
      </div>
      <div class="actions">
        <button type="submit" class="primary">Continue</button>
      </div>
    </form>`;
  return layout(frame, { title: 'Connect a device', name: 'device', body });
}

/** After the decision (RFC 8628 §3.3): the device may continue, or was refused. */
export function deviceDonePage(
  frame: PageFrame,
  input: { approved: boolean; clientName: string; clientHost?: string | undefined },
): string {
  const name = clientLabel(input.clientName, input.clientHost);
  const body = input.approved
    ? html` <h1>Device connected</h1>
        <p class="notice" role="status">
          You allowed <strong>${name}</strong>. Your device may continue: it will carry on by itself in a few
          seconds.
        </p>
        <p class="muted">You can close this page. To end its access, revoke it under Connected apps.</p>`
    : html` <h1>Access denied</h1>
        <p role="status">
          You denied <strong>${name}</strong>. The device was not given access to your account.
        </p>
        <p class="muted">You can close this page.</p>`;
  return layout(frame, {
    title: input.approved ? 'Device connected' : 'Access denied',
    name: 'device-done',
    body,
  });
}
