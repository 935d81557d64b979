import { html, type SafeHtml } from '../html.js';
import { clientLabel, clientLabelText } from './client-label.js';
import { descriptionNamesScope } from './format.js';
import { layout, type PageFrame } from './layout.js';

export interface ConsentPageInput {
  csrfToken: string;
  clientName: string;
  /** Host (or scheme) the user will be sent back to, so they can tell where the answer goes. */
  returnTo?: string;
  /** The authorization request's query, carried to POST /consent and validated again there. */
  request?: string;
  /**
   * A device authorization request (RFC 8628 §3.3) instead: the form goes to POST /device/consent with
   * the user code and the ticket of its check, and the page shows the code for the user to compare
   * with their device's (§5.4: a code sent by someone else is a phishing attempt).
   */
  device?: { userCode: string; ticket: string };
  /**
   * What allowing at all gives, without a box to untick: OpenID Connect's `openid` (Core §3.1.2.1),
   * which is the sign-in itself. Refusing it is refusing the request: Deny.
   */
  fixed?: { name: string; description: string }[];
  scopes: { name: string; description: string; checked: boolean }[];
  /**
   * The resource servers the access is for (RFC 8707 `resource`), each by the name it was registered
   * with, and its URI; the URI alone when it has no name. Absent or empty: the request named none.
   */
  resources?: { uri: string; name: string | null }[];
  lifetime: string;
  /**
   * The client registered itself (RFC 7591): its name is its own claim, which nobody checked
   * (docs/decisions.md, decision 20).
   */
  selfRegistered?: boolean;
  /**
   * The host of the Client ID Metadata Document the client is described by (decision 46), shown beside
   * its name; absent for every other client.
   */
  clientHost?: string;
  error?: string;
}

export const LIFETIME_OPTIONS: readonly { value: string; label: string }[] = [
  { value: '3600', label: '1 hour' },
  { value: '86400', label: '1 day' },
  { value: '2592000', label: '30 days' },
  { value: 'forever', label: 'Until I revoke it' },
];

/** "A (uri)", "A (uri) and uri", "A (uri), B (uri) and C (uri)": the resources in plain words. */
function resourceList(resources: readonly { uri: string; name: string | null }[]): SafeHtml[] {
  return resources.map((resource, index) => {
    const separator = index === 0 ? '' : index === resources.length - 1 ? ' and ' : ', ';
    return resource.name === null
      ? html`${separator}<strong>${resource.uri}</strong>`
      : html`${separator}<strong>${resource.name}</strong> (${resource.uri})`;
  });
}

export function consentPage(frame: PageFrame, input: ConsentPageInput): string {
  const fixed = input.fixed ?? [];
  const label = (scope: { name: string; description: string }) =>
    descriptionNamesScope(scope.description, scope.name)
      ? scope.description
      : html`${scope.description} <code>${scope.name}</code>`;
  const name = clientLabel(input.clientName, input.clientHost);
  const body = html` <h1>Allow <span class="client">${name}</span> to access your account?</h1>
    <p class="lead">Signed in as <strong>${frame.username}</strong>.</p>
    ${
      input.clientHost !== undefined
        ? html`<p class="self-registered">
            This application describes itself in a document published at
            <strong class="document-host">${input.clientHost}</strong>. Its name is its own claim: nobody has
            checked it. You are asked each time it asks for access.
            ${
              input.returnTo !== undefined
                ? html`Whatever you choose, it will redirect you to
                    <strong class="redirect-host">${input.returnTo}</strong>.`
                : ''
            }
          </p>`
        : input.selfRegistered === true
          ? html`<p class="self-registered">
              This application registered itself with ${frame.productName}, so nobody has checked that its
              name is really its own.
              ${
                // Decision 20: its name is its own claim; where the answer goes is the fact to judge it by.
                input.returnTo !== undefined
                  ? html`Whatever you choose, it will redirect you to
                      <strong class="redirect-host">${input.returnTo}</strong>.`
                  : ''
              }
            </p>`
          : ''
    }
    ${input.error ? html`<p class="error" id="form-error" role="alert">${input.error}</p>` : ''}
    ${
      input.device
        ? html`<div class="caution" role="note">
            <p>A device asks for this with the code</p>
            <p class="user-code" id="device-code">${input.device.userCode}</p>
            <p>
              Allow only if your device shows this same code and you started this yourself on a device you
              have with you. If someone sent you this code or link, choose Deny.
            </p>
          </div>`
        : ''
    }
    ${
      input.resources !== undefined && input.resources.length > 0
        ? html`<p class="resources">This access is for ${resourceList(input.resources)}.</p>`
        : ''
    }
    <form
      method="post"
      action="${frame.basePath}${input.device ? '/device/consent' : '/consent'}"
      class="stack"
    >
      <input type="hidden" name="csrf_token" value="${input.csrfToken}" />
      ${
        input.device
          ? html`<input type="hidden" name="user_code" value="${input.device.userCode}" />
              <input type="hidden" name="ticket" value="${input.device.ticket}" />`
          : html`<input type="hidden" name="request" value="${input.request ?? ''}" />`
      }
      ${
        input.scopes.length > 0 || fixed.length > 0
          ? html`<fieldset class="scopes">
              <legend>${name} will be able to:</legend>
              ${fixed.map(
                (scope) =>
                  html`<p class="check fixed" data-scope="${scope.name}">
                    <span aria-hidden="true">✓</span><span>${label(scope)}</span>
                  </p>`,
              )}
              ${input.scopes.map(
                (scope, index) =>
                  html`<div class="check">
                    <input
                      type="checkbox"
                      id="scope-${index}"
                      name="scope"
                      value="${scope.name}"
                      ${scope.checked ? html` checked` : ''}
                      ${
                        // WCAG 3.3.1: the error is about the scopes; the first one says so and has the focus.
                        input.error !== undefined && index === 0
                          ? html` aria-invalid="true" aria-describedby="form-error" autofocus`
                          : ''
                      }
                    />
                    <label for="scope-${index}">${label(scope)}</label>
                  </div>`,
              )}
              ${
                input.scopes.length > 0
                  ? html`<p class="hint">Untick anything you do not want to allow.</p>`
                  : ''
              }
            </fieldset>`
          : html`<p>${name} asks to know that it is you; it asks for no other access.</p>`
      }
      <div class="field">
        <label for="lifetime">Access valid for</label>
        <select id="lifetime" name="lifetime">
          ${LIFETIME_OPTIONS.map(
            (option) =>
              html`<option value="${option.value}" ${option.value === input.lifetime ? html` selected` : ''}>
                ${option.label}
              </option>`,
          )}
        </select>
        <p class="hint">You can revoke access at any time under Connected apps.</p>
      </div>
      <div class="actions">
        <button type="submit" name="decision" value="allow" class="primary">Allow</button>
        <button type="submit" name="decision" value="deny">Deny</button>
      </div>
    </form>
    ${
      input.returnTo !== undefined
        ? html`<p class="muted small">
            Either way you will be sent back to <strong>${input.returnTo}</strong>.
          </p>`
        : ''
    }`;
  return layout(frame, {
    title: `Allow ${clientLabelText(input.clientName, input.clientHost)}?`,
    name: 'consent',
    body,
  });
}
