import { html } from '../html.js';
import { clientLabel } from './client-label.js';
import { layout, type PageFrame } from './layout.js';

export interface LogoutPageInput {
  csrfToken: string;
  /** The logout request's query, carried to POST /logout/confirm and checked again there. */
  request: string;
  /** The application that sent the user here, when the request says. */
  clientName: string | undefined;
  /** Its Client ID Metadata Document's host (decision 46), shown beside the name. */
  clientHost?: string | undefined;
}

/** RP-Initiated Logout 1.0 §3: the user confirms before the browser session ends. */
export function logoutPage(frame: PageFrame, input: LogoutPageInput): string {
  const body = html` <h1>Sign out of ${frame.productName}?</h1>
    <p class="lead">Signed in as <strong>${frame.username}</strong>.</p>
    ${
      input.clientName !== undefined
        ? html`<p>
            <strong>${clientLabel(input.clientName, input.clientHost)}</strong> asks you to sign out.
          </p>`
        : ''
    }
    <form method="post" action="${frame.basePath}/logout/confirm" class="stack">
      <input type="hidden" name="csrf_token" value="${input.csrfToken}" />
      <input type="hidden" name="request" value="${input.request}" />
      <div class="actions">
        <button type="submit" class="primary">Sign out</button>
        <a href="${frame.basePath}/account/apps">Stay signed in</a>
      </div>
    </form>
    <p class="muted small">
      Signing out ends your session in this browser. Applications you allowed keep the access you gave them
      until it expires or you revoke it under Connected apps.
    </p>`;
  return layout(frame, { title: 'Sign out?', name: 'logout', body, signOutInPage: true });
}

/** After signing out, when the application named no address to return to (or nobody was signed in). */
export function signedOutPage(frame: PageFrame): string {
  const body = html` <h1>You are signed out</h1>
    <p role="status">You are signed out of ${frame.productName} in this browser.</p>
    <p><a href="${frame.basePath}/sign-in">Sign in again</a></p>`;
  return layout(frame, { title: 'You are signed out', name: 'signed-out', body });
}
