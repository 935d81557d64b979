import { html, SafeHtml } from '../../html.js';
import type { ApiProblem } from '../../admin/admin-api.js';
import {
  consolePage,
  csrf,
  formProblem,
  inputField,
  notice,
  pager,
  type ConsoleFrame,
} from './console-layout.js';

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
