import { html } from '../html.js';
import { layout, type PageFrame } from './layout.js';

export interface SignInPageInput {
  csrfToken: string;
  /** Where to continue after signing in, relative to the base path. */
  next: string;
  /** The application the user is signing in for, when an authorization request is pending. */
  clientName?: string;
  username?: string;
  error?: string;
  /** The field the error is about: marked aria-invalid, described by the error and focused. */
  invalidField?: 'username' | 'password';
}

export function signInPage(frame: PageFrame, input: SignInPageInput): string {
  // WCAG 3.3.1: the field in error says so (aria-invalid), points at the message, and has the focus.
  const invalid = (name: 'username' | 'password') =>
    input.invalidField === name ? html` aria-invalid="true" aria-describedby="form-error"` : '';
  const focus = (name: 'username' | 'password') =>
    (input.invalidField ?? 'username') === name ? html` autofocus` : '';
  const body = html` <h1>Sign in</h1>
    ${
      input.clientName !== undefined
        ? html`<p class="lead">to continue to <strong>${input.clientName}</strong></p>`
        : html`<p class="lead">to ${frame.productName}</p>`
    }
    ${input.error ? html`<p class="error" id="form-error" role="alert">${input.error}</p>` : ''}
    <form method="post" action="${frame.basePath}/sign-in" class="stack">
      <input type="hidden" name="csrf_token" value="${input.csrfToken}" />
      <input type="hidden" name="next" value="${input.next}" />
      <div class="field">
        <label for="username">Username</label>
        <input
          id="username"
          name="username"
          autocomplete="username"
          autocapitalize="none"
          spellcheck="false"
          required
          value="${input.username ?? ''}"
          ${invalid('username')}${focus('username')}
        />
      </div>
      <div class="field">
        <label for="password">Password</label>
        <input
          id="password"
          name="password"
          type="password"
          autocomplete="current-password"
          required${invalid('password')}${focus('password')}
        />
      </div>
      <div class="actions">
        <button type="submit" class="primary">Sign in</button>
      </div>
    </form>`;
  return layout(frame, { title: 'Sign in', name: 'sign-in', body });
}
