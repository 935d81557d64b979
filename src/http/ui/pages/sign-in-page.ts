import { ACR_MULTI_FACTOR, ACR_PHISHING_RESISTANT } from '../../../core/sign-in/assurance.js';
import { html } from '../html.js';
import { clientLabel } from './client-label.js';
import { layout, type PageFrame } from './layout.js';

export interface SignInPageInput {
  csrfToken: string;
  /** Where to continue after signing in, relative to the base path. */
  next: string;
  /** The application the user is signing in for, when an authorization request is pending. */
  clientName?: string;
  /** The host of its Client ID Metadata Document (decision 46), shown beside the name. */
  clientHost?: string | undefined;
  username?: string;
  /**
   * Why a signed-in user is asked again (OpenID Connect Core §3.1.2.1): `login` for prompt=login,
   * `max-age` for a sign-in older than the application accepts.
   */
  again?: 'login' | 'max-age' | 'acr';
  /** With `again: 'acr'`: the weakest `acr` that will do (decision 36), to say what is asked. */
  strongerAcr?: string;
  /**
   * A signed-in person asked to prove who they are again before a change to the account's security
   * (decision 37): "Confirm it's you", the user name fixed to the signed-in one.
   */
  reauth?: boolean;
  /**
   * With `reauth`: the signed-in user has passkeys, so "Sign in with a passkey" is offered too, limited
   * to their own (decision 37's re-authentication by another method, decision 33).
   */
  reauthPasskey?: boolean;
  /**
   * Upstream identity providers (decision 40): "Continue with NAME", one per provider offered (with
   * `reauth`: the ones the signed-in user has linked, which confirm it is them too).
   */
  providers?: readonly ProviderButton[];
  /**
   * An upstream account waiting to be linked (decision 40, case d): signing in links it, which the
   * page says, with "Don't link it".
   */
  pendingLink?: { providerName: string; label: string | null; reason: 'email' | 'username' };
  /** prompt=select_account: the user signed in, who may continue as themselves (POST /sign-in/continue). */
  continueAs?: string;
  error?: string;
  /** The field the error is about: marked aria-invalid, described by the error and focused. */
  invalidField?: 'username' | 'password';
}

/** One provider's button: its id (the start route's), its name, and its logo (an https URL) if any. */
export interface ProviderButton {
  id: string;
  name: string;
  logoUri: string | null;
}

export function signInPage(frame: PageFrame, input: SignInPageInput): string {
  // WCAG 3.3.1: the field in error says so (aria-invalid), points at the message, and has the focus.
  const invalid = (name: 'username' | 'password') =>
    input.invalidField === name ? html` aria-invalid="true" aria-describedby="form-error"` : '';
  // A user name already filled in (login_hint, or asked again) puts the cursor in the password field.
  const first = input.username !== undefined && input.username !== '' ? 'password' : 'username';
  const focus = (name: 'username' | 'password') =>
    input.continueAs === undefined && (input.invalidField ?? first) === name ? html` autofocus` : '';
  const client = input.clientName ?? 'the application';
  const heading =
    input.reauth === true
      ? "Confirm it's you"
      : input.continueAs !== undefined
        ? 'Choose an account'
        : 'Sign in';
  const submit = input.reauth === true ? 'Confirm' : 'Sign in';
  // Decision 36: an application that asks for a phishing-resistant sign-in (acr phr) is met by a
  // passkey alone, so the passkey comes first, saying why; the password stays below (a voluntary
  // request is then answered with the weaker sign-in reached).
  const passkeyFirst =
    input.reauth !== true && input.again === 'acr' && input.strongerAcr === ACR_PHISHING_RESISTANT;
  const submitClass = input.continueAs !== undefined ? '' : 'primary';
  const body = html` <h1>${heading}</h1>
    ${
      input.reauth === true
        ? input.reauthPasskey === true
          ? html`<p class="lead">Enter your password again, or use a passkey, to change how you sign in.</p>`
          : html`<p class="lead">Enter your password again to change how you sign in.</p>`
        : input.clientName !== undefined
          ? html`<p class="lead">
              to continue to <strong>${clientLabel(input.clientName, input.clientHost)}</strong>
            </p>`
          : html`<p class="lead">to ${frame.productName}</p>`
    }
    ${
      input.again === 'login'
        ? html`<p>${client} asks you to enter your password again.</p>`
        : input.again === 'max-age'
          ? html`<p>You signed in a while ago. ${client} asks you to enter your password again.</p>`
          : input.again === 'acr'
            ? html`<p>${client} asks for a stronger sign-in: ${strongerSignIn(input.strongerAcr)}</p>`
            : ''
    }
    ${input.error ? html`<p class="error" id="form-error" role="alert">${input.error}</p>` : ''}
    ${input.pendingLink !== undefined ? pendingLinkNotice(frame, input, input.pendingLink) : ''}
    ${
      passkeyFirst
        ? html`${passkeySignIn(frame, input, { why: true })}
            <h2 class="or">Or use your password</h2>`
        : ''
    }
    ${
      input.continueAs !== undefined
        ? html`<form method="post" action="${frame.basePath}/sign-in/continue" class="stack">
              <input type="hidden" name="csrf_token" value="${input.csrfToken}" />
              <input type="hidden" name="next" value="${input.next}" />
              <p>You are signed in as <strong>${input.continueAs}</strong>.</p>
              <div class="actions">
                <button type="submit" class="primary" autofocus>Continue as ${input.continueAs}</button>
              </div>
            </form>
            <h2 class="or">Or sign in as someone else</h2>`
        : ''
    }
    <form method="post" action="${frame.basePath}/sign-in" class="stack">
      <input type="hidden" name="csrf_token" value="${input.csrfToken}" />
      <input type="hidden" name="next" value="${input.next}" />
      ${input.reauth === true ? html`<input type="hidden" name="reauth" value="1" />` : ''}
      <div class="field">
        <label for="username">Username</label>
        <input
          id="username"
          name="username"
          autocomplete="username webauthn"
          autocapitalize="none"
          spellcheck="false"
          required
          value="${input.username ?? ''}"
          ${input.reauth === true ? html`readonly` : ''}${invalid('username')}${focus('username')}
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
        <button type="submit" class="${submitClass}">${submit}</button>
      </div>
    </form>
    ${input.reauth === true ? (input.reauthPasskey === true ? passkeyReauthentication(frame, input) : '') : passkeyFirst ? '' : passkeySignIn(frame, input)}
    ${input.pendingLink === undefined ? providerButtons(frame, input) : ''}
    ${input.reauth === true ? '' : html`<p><a href="${frame.basePath}/forgot-password">Forgot password?</a></p>`}`;
  return layout(frame, {
    title: input.reauth === true ? "Confirm it's you" : 'Sign in',
    name: 'sign-in',
    body,
    scripts: ['/assets/passkey'],
  });
}

/**
 * "Sign in with a passkey" (docs/decisions.md, decision 33): a discoverable credential, no user name
 * typed; the same form also receives a passkey picked from the user name field's autofill
 * (`data-conditional`, `autocomplete="username webauthn"` above). Hidden until /assets/passkey finds
 * WebAuthn in the browser; it fills `credential` and posts the form.
 */
function passkeySignIn(frame: PageFrame, input: SignInPageInput, { why = false } = {}) {
  return html`<form
    method="post"
    action="${frame.basePath}/sign-in/passkey"
    class="stack passkey-sign-in"
    data-passkey="get"
    data-conditional
    data-options="${frame.basePath}/sign-in/passkey/options"
    hidden
  >
    <input type="hidden" name="csrf_token" value="${input.csrfToken}" />
    <input type="hidden" name="next" value="${input.next}" />
    <input type="hidden" name="credential" value="" />
    ${
      why
        ? html`<p>
            A passkey works only on this site, so a look-alike site cannot use it: that is why it is asked
            for.
          </p>`
        : ''
    }
    <p class="error" role="alert" data-passkey-error hidden></p>
    <div class="actions">
      <button type="button" data-passkey-start class="${why ? 'primary' : ''}">Sign in with a passkey</button>
    </div>
  </form>`;
}

/**
 * "Sign in with a passkey" when a signed-in person confirms who they are (decision 37): the options
 * allow only the signed-in user's passkeys, and the answer is checked for that user; no autofill
 * request (the user name is already known).
 */
function passkeyReauthentication(frame: PageFrame, input: SignInPageInput) {
  return html`<form
    method="post"
    action="${frame.basePath}/sign-in/passkey/reauthentication"
    class="stack passkey-sign-in"
    data-passkey="get"
    data-options="${frame.basePath}/sign-in/passkey/reauthentication/options"
    hidden
  >
    <input type="hidden" name="csrf_token" value="${input.csrfToken}" />
    <input type="hidden" name="next" value="${input.next}" />
    <input type="hidden" name="credential" value="" />
    <p class="error" role="alert" data-passkey-error hidden></p>
    <div class="actions">
      <button type="button" data-passkey-start>Sign in with a passkey</button>
    </div>
  </form>`;
}

/** What a stronger sign-in means to the person, by the weakest `acr` asked for (decision 36). */
function strongerSignIn(acr: string | undefined): string {
  if (acr === ACR_PHISHING_RESISTANT) return 'sign in with a passkey.';
  if (acr === ACR_MULTI_FACTOR) {
    return 'sign in with your password and a second factor (a code from your authenticator app, or a passkey).';
  }
  return 'sign in again.';
}

/**
 * "Continue with NAME" (decision 40): links, not forms, to the upstream flow's start, which redirects
 * to the provider (a form's redirect to another origin would need that origin in form-action). They
 * carry `next`, and `reauth=1` when a signed-in person confirms it is them.
 */
function providerButtons(frame: PageFrame, input: SignInPageInput) {
  const providers = input.providers ?? [];
  if (providers.length === 0) return '';
  const query = `?next=${encodeURIComponent(input.next)}${input.reauth === true ? '&reauth=1' : ''}`;
  return html`<h2 class="or">${input.reauth === true ? 'Or confirm with' : 'Or continue with'}</h2>
    <ul class="providers">
      ${providers.map(
        (provider) =>
          html`<li>
            <a
              class="button"
              href="${frame.basePath}/sign-in/upstream/${encodeURIComponent(provider.id)}${query}"
              >${
                provider.logoUri !== null && /^https:\/\//.test(provider.logoUri)
                  ? html`<img src="${provider.logoUri}" alt="" width="20" height="20" />`
                  : ''
              }<span>Continue with ${provider.name}</span></a
            >
          </li>`,
      )}
    </ul>`;
}

/** What signing in now also does (decision 40, case d), and the way out of it. */
function pendingLinkNotice(
  frame: PageFrame,
  input: SignInPageInput,
  pending: NonNullable<SignInPageInput['pendingLink']>,
) {
  return html`<div class="caution" id="pending-link">
    <p>
      An account with this ${pending.reason === 'email' ? 'email' : 'user name'} already exists. Sign in to it
      to link your ${pending.providerName}
      account${pending.label !== null ? html` <strong>${pending.label}</strong>` : ''} to it; from then on,
      ${pending.providerName} signs you in.
    </p>
    <form method="post" action="${frame.basePath}/sign-in/pending-link/cancel">
      <input type="hidden" name="csrf_token" value="${input.csrfToken}" />
      <input type="hidden" name="next" value="${input.next}" />
      <p><button type="submit" class="link">Don't link it</button></p>
    </form>
  </div>`;
}
