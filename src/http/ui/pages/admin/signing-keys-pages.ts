import { html } from '../../html.js';
import {
  ageInDays,
  consolePage,
  csrf,
  notice,
  time,
  type ConsoleFrame,
  confirmationPage,
} from './console-layout.js';

export interface KeyView {
  kid: string;
  alg: string;
  status: string;
  createdAt: string;
  retiredAt: string;
  revokedAt: string;
}

export function signingKeysPage(
  frame: ConsoleFrame,
  input: { keys: KeyView[]; notice?: string; now: number },
): string {
  const base = frame.basePath;
  const body = html`<h1>Signing keys</h1>
    ${notice(input.notice)}
    <p class="lead">
      Tokens are signed with the active key. Rotating makes a new active key; the previous one stays in /jwks
      until the tokens it signed have expired.
    </p>
    <form method="post" action="${base}/admin/signing-keys/rotate" class="actions">
      ${csrf(frame)}<button type="submit" class="primary">Rotate signing key</button>
    </form>
    <div class="table-wrap spaced">
      <table>
        <thead>
          <tr>
            <th scope="col">Key ID</th>
            <th scope="col">Algorithm</th>
            <th scope="col">Status</th>
            <th scope="col">Created</th>
            <th scope="col">Age</th>
            <th scope="col"><span class="visually-hidden">Actions</span></th>
          </tr>
        </thead>
        <tbody>
          ${input.keys.map(
            (key) =>
              html`<tr>
                <td><code>${key.kid}</code></td>
                <td>${key.alg}</td>
                <td>${key.status}</td>
                <td>${time(key.createdAt)}</td>
                <td>${ageInDays(key.createdAt, input.now)}</td>
                <td>
                  ${
                    key.status === 'revoked'
                      ? ''
                      : html`<a href="${base}/admin/signing-keys/${encodeURIComponent(key.kid)}/revoke"
                          >Revoke<span class="visually-hidden"> ${key.kid}</span>…</a
                        >`
                  }
                </td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>`;
  return consolePage(frame, 'signing-keys', 'Signing keys', body);
}

export function confirmRevokeKeyPage(frame: ConsoleFrame, key: KeyView): string {
  const path = `${frame.basePath}/admin/signing-keys/${encodeURIComponent(key.kid)}/revoke`;
  return confirmationPage(frame, 'signing-keys', {
    title: `Revoke ${key.kid}`,
    heading: html`Revoke key ${key.kid}?`,
    caution: html`<p>
        Revoke a key only when it may have been stolen. It leaves /jwks at once, and every token it signed is
        refused from then on: access and ID tokens already handed out stop working, and their users and
        services must get new ones.
      </p>
      ${key.status === 'active' ? html`<p>This is the active key: a new one is made to sign from now on.</p>` : ''}`,
    action: `${path}`,
    button: 'Revoke key',
    cancel: `${frame.basePath}/admin/signing-keys`,
  });
}
