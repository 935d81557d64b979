import { html, type SafeHtml } from '../html.js';
import { layout, type PageFrame } from './layout.js';

export interface SecondFactorPageInput {
  csrfToken: string;
  /** Where the form posts (under the base path). */
  action: string;
  error?: string;
  /**
   * PASSKEY HELPER (issue 28 point 2, decision 33): "Use a passkey" for a user with passkeys, the
   * ceremony that signs the pending sign-in in with a passkey as its second factor. Rendered as given,
   * below the code form; absent, nothing is shown.
   */
  passkeyOption?: SafeHtml;
  /**
   * False for a user with neither an authenticator app nor recovery codes, asked for a passkey alone
   * (one who must use a second factor and has a passkey, decision 33): the page asks for the passkey
   * and shows no "Code" field that nothing of theirs could fill. Default true.
   */
  codes?: boolean;
}

const codeField = (error: string | undefined) =>
  html`<div class="field">
    <label for="code">Code</label>
    <input
      id="code"
      name="code"
      autocomplete="one-time-code"
      autocapitalize="none"
      spellcheck="false"
      required
      autofocus
      ${error !== undefined ? html`aria-invalid="true" aria-describedby="form-error"` : ''}
    />
  </div>`;

const errorLine = (error: string | undefined) =>
  error !== undefined ? html`<p class="error" id="form-error" role="alert">${error}</p>` : '';

/** The step after a correct password for a user with a second factor (decision 34). */
export function secondFactorPage(frame: PageFrame, input: SecondFactorPageInput): string {
  if (input.codes === false && input.passkeyOption !== undefined) {
    const body = html`<h1>Use a passkey</h1>
      <p class="lead">Your account needs a second step at sign-in. Use one of your passkeys.</p>
      ${errorLine(input.error)} ${input.passkeyOption}`;
    return layout(frame, { title: 'Use a passkey', name: 'second-factor', body });
  }
  const body = html`<h1>Enter a code</h1>
    <p class="lead">Type the code your authenticator app shows, or one of your recovery codes.</p>
    ${errorLine(input.error)}
    <form method="post" action="${frame.basePath}${input.action}" class="stack">
      <input type="hidden" name="csrf_token" value="${input.csrfToken}" />
      ${codeField(input.error)}
      <div class="actions"><button type="submit" class="primary">Verify</button></div>
    </form>
    ${input.passkeyOption ?? ''}`;
  return layout(frame, { title: 'Enter a code', name: 'second-factor', body });
}

export interface TotpSetUpPageInput {
  csrfToken: string;
  action: string;
  /** The base32 secret, shown as the "Setup key" for apps that cannot scan. */
  secret: string;
  /** The QR code of the otpauth:// URI, as SVG markup made by `qrcode`. */
  qrSvg: SafeHtml;
  /** Why it is asked (signing in for something that requires two factors). */
  reason?: string;
  error?: string;
}

/** The setup key in groups of four, as apps print them (spaces are ignored when typed in). */
export function groupSetupKey(secret: string): string {
  return secret.replace(/(.{4})(?=.)/g, '$1 ');
}

/** "Set up": the QR code, the "Setup key", and the first code that confirms it (decision 34). */
export function totpSetUpPage(frame: PageFrame, input: TotpSetUpPageInput): string {
  const body = html`<h1>Set up an authenticator app</h1>
    ${input.reason !== undefined ? html`<p class="lead">${input.reason}</p>` : ''} ${errorLine(input.error)}
    <ol class="stack">
      <li>
        <p>Scan this QR code with an authenticator app on your phone.</p>
        <div class="qr-code" role="img" aria-label="QR code for your authenticator app">${input.qrSvg}</div>
      </li>
      <li>
        <p>Or type this key into the app instead:</p>
        <p>Setup key: <code id="setup-key" class="setup-key">${groupSetupKey(input.secret)}</code></p>
      </li>
      <li>
        <p>Type the six-digit code the app now shows.</p>
        <form method="post" action="${frame.basePath}${input.action}" class="stack">
          <input type="hidden" name="csrf_token" value="${input.csrfToken}" />
          ${codeField(input.error)}
          <div class="actions"><button type="submit" class="primary">Verify</button></div>
        </form>
      </li>
    </ol>`;
  return layout(frame, { title: 'Set up an authenticator app', name: 'totp-set-up', body });
}

/** The ten recovery codes, shown once after "Generate" (decision 34). */
export function recoveryCodesPage(frame: PageFrame, codes: readonly string[]): string {
  const body = html`<h1>Recovery codes</h1>
    <p class="lead">
      Keep these codes somewhere safe. Each one signs you in once if you lose your authenticator app. They
      will not be shown again; any codes you had before no longer work.
    </p>
    <ul class="recovery-codes" aria-label="Your recovery codes">
      ${codes.map((code) => html`<li><code>${code}</code></li>`)}
    </ul>
    <p><a href="${frame.basePath}/account/security">Back to Security</a></p>`;
  return layout(frame, { title: 'Recovery codes', name: 'recovery-codes', body });
}
