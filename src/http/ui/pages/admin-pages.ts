import { html, SafeHtml } from '../html.js';
import { plainWords, type ApiProblem } from '../admin/admin-api.js';
import { layout, type PageFrame } from './layout.js';

/**
 * The admin console's pages (docs/decisions.md, decision 42): server-rendered in the sign-in pages'
 * design language, no script, every form a plain POST with the CSRF token. Everything shown comes
 * from /v1 answers, escaped by `html`.
 */

export type ConsoleSection = 'dashboard' | 'clients' | 'users' | 'signing-keys' | 'audit';

const SECTIONS: readonly { id: ConsoleSection; path: string; label: string }[] = [
  { id: 'dashboard', path: '/admin', label: 'Dashboard' },
  { id: 'clients', path: '/admin/clients', label: 'Clients' },
  { id: 'users', path: '/admin/users', label: 'Users' },
  { id: 'signing-keys', path: '/admin/signing-keys', label: 'Signing keys' },
  { id: 'audit', path: '/admin/audit', label: 'Audit log' },
];

export interface ConsoleFrame extends PageFrame {
  csrfToken: string;
  /** The administrator has no second factor and the console does not require one: say so on every page. */
  secondFactorPrompt: boolean;
}

function consolePage(frame: ConsoleFrame, section: ConsoleSection, title: string, body: SafeHtml): string {
  const base = frame.basePath;
  const links = html`${SECTIONS.map(
    (item) =>
      html`<a href="${base}${item.path}" ${new SafeHtml(item.id === section ? 'aria-current="page"' : '')}
        >${item.label}</a
      >`,
  )}`;
  const prompt = frame.secondFactorPrompt
    ? html`<div class="caution" role="note">
        <p>
          Your administrator account has no second factor. Anyone with your password can manage this server.
          <a href="${base}/account/security">Add a second factor</a>.
        </p>
      </div>`
    : '';
  return layout(frame, {
    title: `${title} · Admin`,
    name: `admin-${section}`,
    wide: true,
    navigation: { label: 'Admin console', links },
    body: html`${prompt}${body}`,
  });
}

const csrf = (frame: ConsoleFrame) =>
  html`<input type="hidden" name="csrf_token" value="${frame.csrfToken}" />`;

/** A problem the API answered that names no field of the form: shown above it. */
function formProblem(problem: ApiProblem | undefined, fields: readonly string[]): SafeHtml | '' {
  if (problem === undefined) return '';
  if (problem.field !== undefined && fields.includes(problem.field.split('.')[0] ?? '')) return '';
  return html`<p class="error" role="alert">${plainWords(problem)}</p>`;
}

/** A labelled field; the API's problem shown next to it when it names it (aria-describedby, aria-invalid). */
function inputField(options: {
  name: string;
  label: string;
  value: string;
  problem: ApiProblem | undefined;
  hint?: string;
  multiline?: boolean;
  type?: 'text' | 'password';
  required?: boolean;
}): SafeHtml {
  const id = `field-${options.name}`;
  const error = options.problem?.field?.split('.')[0] === options.name ? options.problem : undefined;
  const described = [options.hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  const attributes = new SafeHtml(
    [
      described ? `aria-describedby="${described}"` : '',
      error ? 'aria-invalid="true"' : '',
      options.required ? 'required' : '',
    ].join(' '),
  );
  return html`<div class="field">
    <label for="${id}">${options.label}</label>
    ${
      options.multiline
        ? html`<textarea id="${id}" name="${options.name}" ${attributes}>${options.value}</textarea>`
        : html`<input
            id="${id}"
            name="${options.name}"
            type="${options.type ?? 'text'}"
            value="${options.value}"
            autocomplete="off"
            ${attributes}
          />`
    }
    ${options.hint ? html`<p class="hint" id="${id}-hint">${options.hint}</p>` : ''}
    ${error ? html`<p class="error" id="${id}-error">${plainWords(error)}</p>` : ''}
  </div>`;
}

function notice(text: string | undefined): SafeHtml | '' {
  return text === undefined ? '' : html`<p class="notice" role="status">${text}</p>`;
}

function time(iso: string): SafeHtml | string {
  if (iso === '') return '—';
  return html`<time datetime="${iso}">${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC</time>`;
}

/** "Showing 1–20 of 45", with Previous and Next as links (the API's limit and offset). */
function pager(base: string, query: Record<string, string>, offset: number, limit: number, total: number) {
  const link = (to: number, text: string) => {
    const params = new URLSearchParams({ ...query, offset: String(to) });
    return html`<a href="${base}?${params.toString()}">${text}</a>`;
  };
  const shown = total === 0 ? 'None' : `Showing ${offset + 1}–${Math.min(offset + limit, total)} of ${total}`;
  return html`<nav class="pager" aria-label="Pages">
    <span>${shown}</span>
    ${offset > 0 ? link(Math.max(0, offset - limit), 'Previous') : ''}
    ${offset + limit < total ? link(offset + limit, 'Next') : ''}
  </nav>`;
}

// ---- dashboard

export interface KeyView {
  kid: string;
  alg: string;
  status: string;
  createdAt: string;
  retiredAt: string;
  revokedAt: string;
}

function ageInDays(iso: string, now: number): string {
  const days = Math.floor((now - Date.parse(iso) / 1000) / 86400);
  return Number.isFinite(days) ? (days <= 0 ? 'today' : days === 1 ? '1 day' : `${days} days`) : '—';
}

export function dashboardPage(
  frame: ConsoleFrame,
  input: { keys: KeyView[]; clients: number | undefined; users: number | undefined; now: number },
): string {
  const active = input.keys.find((key) => key.status === 'active');
  const body = html`<h1>Dashboard</h1>
    <p class="lead">The state of this server, as its API reports it.</p>
    <dl class="facts">
      <dt>Active signing key</dt>
      <dd>
        ${
          active === undefined
            ? 'None'
            : html`<code>${active.kid}</code> (${active.alg}), created ${time(active.createdAt)}, age
                ${ageInDays(active.createdAt, input.now)}`
        }
      </dd>
      <dt>Signing keys in /jwks</dt>
      <dd>${input.keys.filter((key) => key.status !== 'revoked').length}</dd>
      <dt>Clients</dt>
      <dd>${input.clients ?? '—'}</dd>
      <dt>Users</dt>
      <dd>${input.users ?? '—'}</dd>
    </dl>
    <p class="muted small">Charts of the last hour are not in the console yet.</p>`;
  return consolePage(frame, 'dashboard', 'Dashboard', body);
}

// ---- clients

export interface ClientRow {
  id: string;
  name: string;
  public: boolean;
  redirectUris: string[];
  scopes: string[];
  grantTypes: string[];
  registration: string;
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
  const body = html`<h1>${client.name}</h1>
    ${notice(input.notice)} ${input.secret !== undefined ? secretBox(input.secret) : ''}
    <dl class="facts">
      <dt>Client ID</dt>
      <dd><code id="client-id">${client.id}</code></dd>
      <dt>Kind</dt>
      <dd>${client.public ? 'Public' : 'Confidential'}</dd>
      <dt>Registered by</dt>
      <dd>${client.registration === 'operator' ? 'An operator' : 'Itself (dynamic registration)'}</dd>
    </dl>
    <h2>Edit</h2>
    ${formProblem(input.problem, CLIENT_FIELDS)}
    <form method="post" action="${path}" class="stack" novalidate>
      ${csrf(frame)} ${clientFormFields(input.values, input.problem)}
      <div class="actions"><button type="submit" class="primary">Save</button></div>
    </form>
    <h2 class="spaced">Secret and removal</h2>
    <div class="actions">
      ${
        client.public
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
  const body = html`<h1>Delete ${client.name}?</h1>
    <div class="caution">
      <p>
        Its grants go with it, so every token it holds stops working at once, and the people who use it can no
        longer sign in to it. This cannot be undone.
      </p>
    </div>
    <form method="post" action="${path}/delete" class="actions">
      ${csrf(frame)}
      <button type="submit" class="danger">Delete client</button>
      <a class="button" href="${path}">Cancel</a>
    </form>`;
  return consolePage(frame, 'clients', `Delete ${client.name}`, body);
}

// ---- users

export interface UserRow {
  id: string;
  username: string;
  email: string;
  name: string;
  admin: boolean;
  disabled: boolean;
  methods: string[];
  sessions: number | undefined;
}

export function usersPage(
  frame: ConsoleFrame,
  input: { rows: UserRow[]; username: string; offset: number; limit: number; total: number; notice?: string },
): string {
  const base = frame.basePath;
  const body = html`<h1>Users</h1>
    ${notice(input.notice)}
    <div class="toolbar">
      <form method="get" action="${base}/admin/users" class="search" role="search">
        <label for="user-search">User name</label>
        <input id="user-search" name="username" type="search" value="${input.username}" />
        <button type="submit">Search</button>
      </form>
      <a class="button primary" href="${base}/admin/users/new">New user</a>
    </div>
    ${
      input.rows.length === 0
        ? html`<p class="empty">No user${input.username ? ' of that name' : ''}.</p>`
        : html`<div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">User name</th>
                  <th scope="col">Email</th>
                  <th scope="col">Role</th>
                  <th scope="col">Status</th>
                </tr>
              </thead>
              <tbody>
                ${input.rows.map(
                  (row) =>
                    html`<tr>
                      <td><a href="${base}/admin/users/${encodeURIComponent(row.id)}">${row.username}</a></td>
                      <td>${row.email || '—'}</td>
                      <td>${row.admin ? 'Administrator' : 'User'}</td>
                      <td>${row.disabled ? 'Disabled' : 'Active'}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }
    ${pager(`${base}/admin/users`, input.username ? { username: input.username } : {}, input.offset, input.limit, input.total)}`;
  return consolePage(frame, 'users', 'Users', body);
}

export interface UserFormValues {
  username: string;
  email: string;
  name: string;
  admin: boolean;
}

const USER_FIELDS = ['username', 'password', 'email', 'name', 'admin'] as const;

export function newUserPage(frame: ConsoleFrame, values: UserFormValues, problem?: ApiProblem): string {
  const body = html`<h1>New user</h1>
    ${formProblem(problem, USER_FIELDS)}
    <form method="post" action="${frame.basePath}/admin/users/new" class="stack" novalidate>
      ${csrf(frame)}
      ${inputField({ name: 'username', label: 'User name', value: values.username, problem, required: true })}
      ${inputField({ name: 'password', label: 'Password', value: '', problem, type: 'password', required: true })}
      ${inputField({ name: 'email', label: 'Email', value: values.email, problem })}
      ${inputField({ name: 'name', label: 'Full name', value: values.name, problem })}
      <label class="check"
        ><input
          type="checkbox"
          name="admin"
          value="true"
          ${new SafeHtml(values.admin ? 'checked' : '')}
        /><span>Administrator (may use this console and the management API)</span></label
      >
      <div class="actions"><button type="submit" class="primary">Create</button></div>
    </form>`;
  return consolePage(frame, 'users', 'New user', body);
}

export function userPage(
  frame: ConsoleFrame,
  input: { user: UserRow; notice?: string; values: UserFormValues; problem?: ApiProblem },
): string {
  const { user } = input;
  const path = `${frame.basePath}/admin/users/${encodeURIComponent(user.id)}`;
  const body = html`<h1>${user.username}</h1>
    ${notice(input.notice)}
    <dl class="facts">
      <dt>User ID</dt>
      <dd><code>${user.id}</code></dd>
      <dt>Status</dt>
      <dd>${user.disabled ? 'Disabled: cannot sign in' : 'Active'}</dd>
      <dt>Ways to sign in</dt>
      <dd>${user.methods.length === 0 ? 'None' : user.methods.join(', ')}</dd>
      <dt>Browser sessions</dt>
      <dd>${user.sessions ?? '—'}</dd>
    </dl>
    <h2>Edit</h2>
    ${formProblem(input.problem, USER_FIELDS)}
    <form method="post" action="${path}" class="stack" novalidate>
      ${csrf(frame)}
      ${inputField({ name: 'username', label: 'User name', value: input.values.username, problem: input.problem })}
      ${inputField({ name: 'email', label: 'Email', value: input.values.email, problem: input.problem })}
      ${inputField({ name: 'name', label: 'Full name', value: input.values.name, problem: input.problem })}
      ${inputField({
        name: 'password',
        label: 'New password',
        value: '',
        problem: input.problem,
        type: 'password',
        hint: 'Leave empty to keep the current one.',
      })}
      <label class="check"
        ><input
          type="checkbox"
          name="admin"
          value="true"
          ${new SafeHtml(input.values.admin ? 'checked' : '')}
        /><span>Administrator</span></label
      >
      <div class="actions"><button type="submit" class="primary">Save</button></div>
    </form>
    <h2 class="spaced">Access</h2>
    <form method="post" action="${path}/${user.disabled ? 'enable' : 'disable'}" class="actions">
      ${csrf(frame)}
      <button type="submit" class="${user.disabled ? '' : 'danger'}">
        ${user.disabled ? 'Enable user' : 'Disable user'}
      </button>
    </form>`;
  return consolePage(frame, 'users', user.username, body);
}

// ---- signing keys

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
  const body = html`<h1>Revoke key ${key.kid}?</h1>
    <div class="caution">
      <p>
        Revoke a key only when it may have been stolen. It leaves /jwks at once, and every token it signed is
        refused from then on: access and ID tokens already handed out stop working, and their users and
        services must get new ones.
      </p>
      ${key.status === 'active' ? html`<p>This is the active key: a new one is made to sign from now on.</p>` : ''}
    </div>
    <form method="post" action="${path}" class="actions">
      ${csrf(frame)}
      <button type="submit" class="danger">Revoke key</button>
      <a class="button" href="${frame.basePath}/admin/signing-keys">Cancel</a>
    </form>`;
  return consolePage(frame, 'signing-keys', `Revoke ${key.kid}`, body);
}

// ---- audit log

export interface AuditRow {
  time: string;
  type: string;
  actor: string;
  target: string;
  /** The address the change came from, when known. */
  address: string;
}

/**
 * The audit log: `/v1/audit-events` `{items, next_cursor}` (issue 30). `available` false while this
 * server's API has no such collection (it answers 404): the page says so.
 */
export function auditPage(
  frame: ConsoleFrame,
  input: { available: boolean; rows: AuditRow[]; type: string; nextCursor?: string },
): string {
  const base = frame.basePath;
  const body = !input.available
    ? html`<h1>Audit log</h1>
        <p class="empty">This server does not keep an audit log yet.</p>`
    : html`<h1>Audit log</h1>
        <form method="get" action="${base}/admin/audit" class="search" role="search">
          <label for="audit-type">Event type</label>
          <input id="audit-type" name="type" type="search" value="${input.type}" />
          <button type="submit">Filter</button>
        </form>
        ${
          input.rows.length === 0
            ? html`<p class="empty">No events.</p>`
            : html`<div class="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">When</th>
                      <th scope="col">Event</th>
                      <th scope="col">Who</th>
                      <th scope="col">What</th>
                      <th scope="col">From</th>
                    </tr>
                  </thead>
                  <tbody>
                    ${input.rows.map(
                      (row) =>
                        html`<tr>
                          <td>${time(row.time)}</td>
                          <td>${row.type}</td>
                          <td>${row.actor || '—'}</td>
                          <td>${row.target || '—'}</td>
                          <td>${row.address || '—'}</td>
                        </tr>`,
                    )}
                  </tbody>
                </table>
              </div>`
        }
        ${
          input.nextCursor !== undefined
            ? html`<nav class="pager" aria-label="Pages">
                <a
                  href="${base}/admin/audit?${new URLSearchParams({
                    ...(input.type ? { type: input.type } : {}),
                    cursor: input.nextCursor,
                  }).toString()}"
                  >Older events</a
                >
              </nav>`
            : ''
        }`;
  return consolePage(frame, 'audit', 'Audit log', body);
}

/** What an administrator sees when the API refused the console (a problem outside any form). */
export function consoleErrorPage(frame: ConsoleFrame, section: ConsoleSection, problem: ApiProblem): string {
  const body = html`<h1>That did not work</h1>
    <p class="error" role="alert">${plainWords(problem)}</p>`;
  return consolePage(frame, section, 'Error', body);
}
