import { html, SafeHtml } from '../../html.js';
import { plainWords, type ApiProblem } from '../../admin/admin-api.js';
import {
  consolePage,
  csrf,
  formProblem,
  inputField,
  notice,
  pager,
  type ConsoleFrame,
  confirmationPage,
  time,
} from './console-layout.js';

export interface ClientRow {
  id: string;
  name: string;
  public: boolean;
  redirectUris: string[];
  scopes: string[];
  grantTypes: string[];
  registration: string;
  /** When it last changed; for a Client ID Metadata Document's client, when the document was last fetched. */
  updatedAt: string;
  /** Until when that fetch stands (decision 46); empty for every other client. */
  documentExpiresAt: string;
}

/** Who registered it, in the console's words. */
function registeredBy(registration: string): string {
  switch (registration) {
    case 'operator':
      return 'An operator';
    case 'document':
      return 'Nobody: its Client ID Metadata Document describes it';
    default:
      return 'Itself (dynamic registration)';
  }
}

export function clientsPage(
  frame: ConsoleFrame,
  input: { rows: ClientRow[]; name: string; offset: number; limit: number; total: number; notice?: string },
): string {
  const base = frame.basePath;
  const body = html`<h1>Clients</h1>
    ${notice(input.notice)}
    <div class="toolbar">
      <form method="get" action="${base}/admin/clients" class="search" role="search">
        <label for="client-search">Name</label>
        <input id="client-search" name="name" type="search" value="${input.name}" />
        <button type="submit">Search</button>
      </form>
      <a class="button primary" href="${base}/admin/clients/new">New client</a>
    </div>
    ${
      input.rows.length === 0
        ? html`<p class="empty">No client${input.name ? ' of that name' : ''}.</p>`
        : html`<div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Client ID</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Grant types</th>
                </tr>
              </thead>
              <tbody>
                ${input.rows.map(
                  (row) =>
                    html`<tr>
                      <td><a href="${base}/admin/clients/${encodeURIComponent(row.id)}">${row.name}</a></td>
                      <td><code>${row.id}</code></td>
                      <td>${row.public ? 'Public' : 'Confidential'}</td>
                      <td>${row.grantTypes.join(', ')}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }
    ${pager(`${base}/admin/clients`, input.name ? { name: input.name } : {}, input.offset, input.limit, input.total)}`;
  return consolePage(frame, 'clients', 'Clients', body);
}

export interface ClientFormValues {
  name: string;
  redirectUris: string;
  scopes: string;
  grantTypes: string[];
  public: boolean;
}

const GRANT_CHOICES: readonly { value: string; label: string }[] = [
  { value: 'authorization_code', label: 'Authorization code (people sign in)' },
  { value: 'refresh_token', label: 'Refresh token' },
  { value: 'client_credentials', label: 'Client credentials (a service acting for itself)' },
];

const CLIENT_FIELDS = ['name', 'redirect_uris', 'scopes', 'grant_types', 'public'] as const;

function clientFormFields(values: ClientFormValues, problem: ApiProblem | undefined): SafeHtml {
  const grantError = problem?.field?.split('.')[0] === 'grant_types' ? problem : undefined;
  return html`${inputField({ name: 'name', label: 'Name', value: values.name, problem, required: true })}
    ${inputField({
      name: 'redirect_uris',
      label: 'Redirect URIs',
      value: values.redirectUris,
      problem,
      multiline: true,
      hint: 'One per line; https, or a loopback or private-use URI for native apps.',
    })}
    ${inputField({
      name: 'scopes',
      label: 'Scopes',
      value: values.scopes,
      problem,
      hint: 'Separated by spaces, for example: openid profile email',
    })}
    <fieldset ${new SafeHtml(grantError ? 'aria-describedby="grant-types-error"' : '')}>
      <legend>Grant types</legend>
      ${GRANT_CHOICES.map(
        (choice) =>
          html`<label class="check"
            ><input
              type="checkbox"
              name="grant_types"
              value="${choice.value}"
              ${new SafeHtml(values.grantTypes.includes(choice.value) ? 'checked' : '')}
            /><span>${choice.label}</span></label
          >`,
      )}
      ${grantError ? html`<p class="error" id="grant-types-error">${plainWords(grantError)}</p>` : ''}
    </fieldset>
    <label class="check"
      ><input
        type="checkbox"
        name="public"
        value="true"
        ${new SafeHtml(values.public ? 'checked' : '')}
      /><span>Public client (no secret: a browser or native app, with PKCE)</span></label
    >`;
}

export function newClientPage(frame: ConsoleFrame, values: ClientFormValues, problem?: ApiProblem): string {
  const body = html`<h1>New client</h1>
    ${formProblem(problem, CLIENT_FIELDS)}
    <form method="post" action="${frame.basePath}/admin/clients/new" class="stack" novalidate>
      ${csrf(frame)} ${clientFormFields(values, problem)}
      <div class="actions"><button type="submit" class="primary">Create</button></div>
    </form>`;
  return consolePage(frame, 'clients', 'New client', body);
}

function secretBox(secret: string): SafeHtml {
  return html`<div class="caution" role="status">
    <p><strong>Client secret</strong> (shown this once; copy it now, it is stored only as a hash):</p>
    <p><code class="secret" id="client-secret">${secret}</code></p>
  </div>`;
}

export function clientPage(
  frame: ConsoleFrame,
  input: {
    client: ClientRow;
    secret?: string;
    notice?: string;
    values: ClientFormValues;
    problem?: ApiProblem;
  },
): string {
  const { client } = input;
  const base = frame.basePath;
  const path = `${base}/admin/clients/${encodeURIComponent(client.id)}`;
  const document = client.registration === 'document';
  const body = html`<h1>${client.name}</h1>
    ${notice(input.notice)} ${input.secret !== undefined ? secretBox(input.secret) : ''}
    <dl class="facts">
      <dt>Client ID</dt>
      <dd><code id="client-id">${client.id}</code></dd>
      <dt>Kind</dt>
      <dd>${client.public ? 'Public' : 'Confidential'}</dd>
      <dt>Registered by</dt>
      <dd>${registeredBy(client.registration)}</dd>
      ${
        document
          ? html`<dt>Document</dt>
              <dd><code id="client-document">${client.id}</code></dd>
              <dt>Last fetched</dt>
              <dd>${time(client.updatedAt)}</dd>
              <dt>Used until</dt>
              <dd>${time(client.documentExpiresAt)}, then fetched again</dd>`
          : ''
      }
    </dl>
    ${
      // Decision 46: such a client is what its document says, fetched again when stale; an edit here would
      // be undone by the next fetch, so none is offered. Deleting it only drops the stored copy.
      document
        ? html`<p class="muted">
            Its settings come from its document and cannot be edited here. Deleting it ends its grants; it
            comes back, fetched again, the next time it is used.
          </p>`
        : html`<h2>Edit</h2>
            ${formProblem(input.problem, CLIENT_FIELDS)}
            <form method="post" action="${path}" class="stack" novalidate>
              ${csrf(frame)} ${clientFormFields(input.values, input.problem)}
              <div class="actions"><button type="submit" class="primary">Save</button></div>
            </form>`
    }
    <h2 class="spaced">${document ? 'Removal' : 'Secret and removal'}</h2>
    <div class="actions">
      ${
        client.public || document
          ? ''
          : html`<form method="post" action="${path}/rotate-secret" class="inline">
              ${csrf(frame)}<button type="submit">Rotate secret</button>
            </form>`
      }
      <a class="button danger" href="${path}/delete">Delete…</a>
    </div>`;
  return consolePage(frame, 'clients', client.name, body);
}

export function confirmDeleteClientPage(frame: ConsoleFrame, client: ClientRow): string {
  const path = `${frame.basePath}/admin/clients/${encodeURIComponent(client.id)}`;
  return confirmationPage(frame, 'clients', {
    title: `Delete ${client.name}`,
    heading: html`Delete ${client.name}?`,
    caution: html`<p>
      Its grants go with it, so every token it holds stops working at once, and the people who use it can no
      longer sign in to it. This cannot be undone.
    </p>`,
    action: `${path}/delete`,
    button: 'Delete client',
    cancel: `${path}`,
  });
}
