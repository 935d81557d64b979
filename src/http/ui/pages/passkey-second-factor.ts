import { html, type SafeHtml } from '../html.js';

/**
 * "Use a passkey" on the second-factor page (docs/decisions.md, decision 33), for a user with a pending
 * password sign-in who has passkeys: the page's `passkeyOption`. Self-contained: it loads
 * /assets/passkey itself (a module script of our own origin, which the page policy allows), which
 * shows the form when the browser has WebAuthn, fetches the options for that user's passkeys, runs the
 * ceremony and posts the answer to /sign-in/passkey/second-factor.
 */
export function passkeySecondFactorOption(basePath: string, csrfToken: string): SafeHtml {
  return html`<form
      method="post"
      action="${basePath}/sign-in/passkey/second-factor"
      class="stack passkey-second-factor"
      data-passkey="get"
      data-options="${basePath}/sign-in/passkey/second-factor/options"
      hidden
    >
      <input type="hidden" name="csrf_token" value="${csrfToken}" />
      <input type="hidden" name="credential" value="" />
      <p class="error" role="alert" data-passkey-error hidden></p>
      <div class="actions">
        <button type="button" data-passkey-start>Use a passkey</button>
      </div>
    </form>
    <script type="module" src="${basePath}/assets/passkey"></script>`;
}
