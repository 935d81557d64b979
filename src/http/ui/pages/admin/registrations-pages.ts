import { html, SafeHtml } from '../../html.js';
import type { ApiProblem } from '../../admin/admin-api.js';
import {
  consolePage,
  csrf,
  formProblem,
  inputField,
  notice,
  pager,
  time,
  type ConsoleFrame,
  confirmationPage,
} from './console-layout.js';
import { plainWords } from '../../admin/admin-api.js';

/**
 * The console's registrations (RFC 7591; decisions 20 and 42): the clients that registered
 * themselves at /register, listed by /v1/clients?registration=…, and the initial access tokens that
 * let them (/v1/initial-access-tokens), each token shown once when made.
 */

export type RegistrationWay = 'any' | 'token' | 'open' | 'document';

export interface RegisteredRow {
  id: string;
  name: string;
  registration: string;
  createdAt: string;
}

export interface TokenRow {
  id: string;
  scopes: string[] | null;
  createdAt: string;
  expiresAt: string;
  expired: boolean;
  clientsRegistered: number;
}

const WAYS: readonly { value: RegistrationWay; label: string }[] = [
  { value: 'any', label: 'Any way (not by an operator)' },
  { value: 'token', label: 'With an initial access token' },
  { value: 'open', label: 'Open registration (no token)' },
  { value: 'document', label: 'Client ID Metadata Document' },
];

const howRegistered = (registration: string) =>
  registration === 'token'
    ? 'Initial access token'
    : registration === 'open'
      ? 'Open registration'
      : registration === 'document'
        ? 'Client ID Metadata Document'
        : 'Operator';

function subNavigation(frame: ConsoleFrame, current: 'clients' | 'tokens'): SafeHtml {
  const base = `${frame.basePath}/admin/registrations`;
  const link = (href: string, text: string, on: boolean) =>
    html`<a href="${href}" ${new SafeHtml(on ? 'aria-current="page"' : '')}>${text}</a>`;
  return html`<nav class="pager" aria-label="Registrations">
    ${link(base, 'Registered clients', current === 'clients')}
    ${link(`${base}/tokens`, 'Initial access tokens', current === 'tokens')}
  </nav>`;
}

export function registrationsPage(
  frame: ConsoleFrame,
  input: {
    rows: RegisteredRow[];
    way: RegistrationWay;
    offset: number;
    limit: number;
    total: number;
    notice?: string;
  },
): string {
  const base = frame.basePath;
  const body = html`<h1>Registrations</h1>
    ${subNavigation(frame, 'clients')}
    <p class="lead spaced">
      Clients that registered themselves at <code>/register</code> (RFC 7591), and those described by a Client
      ID Metadata Document at their client ID's URL.
    </p>
    ${notice(input.notice)}
    <div class="toolbar">
      <form method="get" action="${base}/admin/registrations" class="search">
        <label for="registration-way">Registered</label>
        <select id="registration-way" name="way">
          ${WAYS.map(
            (way) =>
              html`<option value="${way.value}" ${new SafeHtml(way.value === input.way ? 'selected' : '')}>
                ${way.label}
              </option>`,
          )}
        </select>
        <button type="submit">Show</button>
      </form>
    </div>
    ${
      input.rows.length === 0
        ? html`<p class="empty">No client registered itself${input.way === 'any' ? '' : ' that way'}.</p>`
        : html`<div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Client ID</th>
                  <th scope="col">How</th>
                  <th scope="col">Registered</th>
                </tr>
              </thead>
              <tbody>
                ${input.rows.map(
                  (row) =>
                    html`<tr>
                      <td>
                        <a href="${base}/admin/clients/${encodeURIComponent(row.id)}">${row.name}</a>
                        <br /><a
                          class="small"
                          href="${base}/admin/registrations/${encodeURIComponent(row.id)}/delete"
                          >Delete<span class="visually-hidden"> ${row.name}</span>…</a
                        >
                      </td>
                      <td><code>${row.id}</code></td>
                      <td>
                        ${howRegistered(row.registration)}
                        ${
                          // Decision 46: the client ID is the document's URL.
                          row.registration === 'document'
                            ? html`<br /><span class="small">at <code>${row.id}</code></span>`
                            : ''
                        }
                      </td>
                      <td>${time(row.createdAt)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }
    ${pager(`${base}/admin/registrations`, input.way === 'any' ? {} : { way: input.way }, input.offset, input.limit, input.total)}`;
  return consolePage(frame, 'registrations', 'Registrations', body);
}

export function confirmDeleteRegistrationPage(frame: ConsoleFrame, row: RegisteredRow): string {
  const base = `${frame.basePath}/admin/registrations`;
  return confirmationPage(frame, 'registrations', {
    title: `Delete ${row.name}`,
    heading: html`Delete ${row.name}?`,
    about: html`<p>
      <code>${row.id}</code>,
      ${row.registration === 'document' ? 'described by its Client ID Metadata Document since' : html`registered by ${howRegistered(row.registration).toLowerCase()}, on`}
      ${time(row.createdAt)}.
    </p>`,
    caution:
      row.registration === 'document'
        ? html`<p>
            Its grants go with it, so every token it holds stops working at once. Its document is fetched
            again the next time it is used, while documents are accepted from its host. This cannot be undone.
          </p>`
        : html`<p>
            Its grants go with it, so every token it holds stops working at once. It may register again if
            registration lets it. This cannot be undone.
          </p>`,
    action: `${base}/${encodeURIComponent(row.id)}/delete`,
    button: 'Delete client',
    cancel: `${base}`,
  });
}

/** Choices of "Expires in", in seconds (RFC 7591 §3 leaves the lifetime to the server; a day by default). */
export const EXPIRY_CHOICES: readonly { value: string; label: string }[] = [
  { value: '3600', label: '1 hour' },
  { value: '86400', label: '1 day' },
  { value: '604800', label: '7 days' },
  { value: '2592000', label: '30 days' },
  { value: '31536000', label: '1 year' },
];

export interface TokenFormValues {
  expiresIn: string;
  scopes: string;
}

export function initialAccessTokensPage(
  frame: ConsoleFrame,
  input: {
    rows: TokenRow[];
    offset: number;
    limit: number;
    total: number;
    notice?: string;
    /** The token just made: shown this once. */
    token?: string;
    values: TokenFormValues;
    problem?: ApiProblem;
    /** GATEHOUSE_DYNAMIC_REGISTRATION: tokens are taken only with `token` or `open`. */
    registration: string;
  },
): string {
  const base = frame.basePath;
  const expiryError = input.problem?.field === 'expires_in' ? input.problem : undefined;
  const body = html`<h1>Initial access tokens</h1>
    ${subNavigation(frame, 'tokens')}
    <p class="lead spaced">
      A token lets clients register themselves at <code>/register</code> (RFC 7591 §3) until it expires or is
      deleted.
    </p>
    ${
      input.registration === 'off'
        ? html`<div class="caution" role="note">
            <p>
              Dynamic registration is off on this server (<code>GATEHOUSE_DYNAMIC_REGISTRATION</code>): tokens
              register nothing until it is <code>token</code> or <code>open</code>.
            </p>
          </div>`
        : ''
    }
    ${notice(input.notice)}
    ${
      input.token === undefined
        ? ''
        : html`<div class="caution" role="status">
            <p>
              <strong>Initial access token</strong> (shown this once; copy it now, it is stored only as a
              hash):
            </p>
            <p><code class="secret" id="initial-access-token">${input.token}</code></p>
            <p>A client sends it as <code>Authorization: Bearer …</code> to <code>/register</code>.</p>
          </div>`
    }
    ${
      input.rows.length === 0
        ? html`<p class="empty">No initial access token.</p>`
        : html`<div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">ID</th>
                  <th scope="col">Scopes</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Clients registered</th>
                </tr>
              </thead>
              <tbody>
                ${input.rows.map(
                  (row) =>
                    html`<tr>
                      <td>
                        <code title="${row.id}">${row.id.slice(0, 8)}</code>
                        <br /><a
                          class="small"
                          href="${base}/admin/registrations/tokens/${encodeURIComponent(row.id)}/delete"
                          >Delete<span class="visually-hidden"> token ${row.id.slice(0, 8)}</span>…</a
                        >
                      </td>
                      <td>
                        ${row.scopes === null ? html`<span class="muted">as open registration</span>` : row.scopes.join(' ') || '—'}
                      </td>
                      <td>${time(row.expiresAt)}${row.expired ? html` <strong>(expired)</strong>` : ''}</td>
                      <td>${String(row.clientsRegistered)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }
    ${pager(`${base}/admin/registrations/tokens`, {}, input.offset, input.limit, input.total)}
    <h2 class="spaced" id="new-token">New initial access token</h2>
    ${formProblem(input.problem, ['expires_in', 'scopes'])}
    <form method="post" action="${base}/admin/registrations/tokens" class="stack" novalidate>
      ${csrf(frame)}
      <div class="field">
        <label for="field-expires_in">Expires in</label>
        <select
          id="field-expires_in"
          name="expires_in"
          ${new SafeHtml(expiryError ? 'aria-invalid="true" aria-describedby="field-expires_in-error"' : '')}
        >
          ${EXPIRY_CHOICES.map(
            (choice) =>
              html`<option
                value="${choice.value}"
                ${new SafeHtml(choice.value === input.values.expiresIn ? 'selected' : '')}
              >
                ${choice.label}
              </option>`,
          )}
        </select>
        ${expiryError ? html`<p class="error" id="field-expires_in-error">${plainWords(expiryError)}</p>` : ''}
      </div>
      ${inputField({
        name: 'scopes',
        label: 'Scopes',
        value: input.values.scopes,
        problem: input.problem,
        hint: 'The scopes clients it registers may have, separated by spaces; empty: those open registration allows.',
      })}
      <div class="actions"><button type="submit" class="primary">Create token</button></div>
    </form>`;
  return consolePage(frame, 'registrations', 'Initial access tokens', body);
}

export function confirmDeleteTokenPage(frame: ConsoleFrame, row: TokenRow): string {
  const base = `${frame.basePath}/admin/registrations/tokens`;
  return confirmationPage(frame, 'registrations', {
    title: 'Delete initial access token',
    heading: 'Delete this initial access token?',
    about: html`<p>
      <code>${row.id}</code>: ${String(row.clientsRegistered)} client(s) registered with it.
    </p>`,
    caution: html`<p>It registers nothing more; the clients it registered stay. This cannot be undone.</p>`,
    action: `${base}/${encodeURIComponent(row.id)}/delete`,
    button: 'Delete token',
    cancel: `${base}`,
  });
}
