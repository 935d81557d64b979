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
import { grantsTable, type GrantRow } from './grants-pages.js';

export interface UserRow {
  id: string;
  username: string;
  email: string;
  name: string;
  admin: boolean;
  disabled: boolean;
  methods: string[];
  sessions: number | undefined;
  /** What an operator's second-factor reset removes (decision 34), and what it leaves. */
  secondFactors: { totp: boolean; recoveryCodes: number; passkeys: number };
}

/** A browser session as the console lists it (GET /v1/users/{id}/sessions). */
export interface SessionRow {
  sid: string;
  /** Named from the User-Agent as on the user's own security page (decision 37). */
  device: string;
  address: string;
  createdAt: string;
  lastActiveAt: string;
}

/** What the user's page shows beside the user: their sessions and grants. */
export interface UserPageInput {
  user: UserRow;
  sessions: SessionRow[];
  grants: GrantRow[];
  notice?: string;
  values: UserFormValues;
  problem?: ApiProblem;
  /** A problem of the "Send reset link" form (no address, too many links). */
  resetProblem?: ApiProblem;
  /** What was typed in that form's email field. */
  resetEmail?: string;
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

export function userPage(frame: ConsoleFrame, input: UserPageInput): string {
  const { user } = input;
  const path = `${frame.basePath}/admin/users/${encodeURIComponent(user.id)}`;
  const factors = user.secondFactors;
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
        hint: 'Leave empty to keep the current one. A new password signs the user out everywhere and revokes their grants.',
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
    ${passwordResetSection(frame, path, input)}
    <h2 class="spaced">Second factors</h2>
    <p>
      ${factors.totp ? 'An authenticator app is set up.' : 'No authenticator app.'}
      ${factors.recoveryCodes === 0 ? 'No recovery codes.' : `${factors.recoveryCodes} unused recovery codes.`}
    </p>
    ${
      factors.totp || factors.recoveryCodes > 0
        ? html`<p><a class="button danger" href="${path}/second-factors">Reset second factors…</a></p>`
        : ''
    }
    ${sessionsSection(frame, path, input.sessions)}
    <h2 class="spaced">Grants</h2>
    ${
      input.grants.length === 0
        ? html`<p class="empty">This user has allowed no client.</p>`
        : grantsTable(frame, input.grants, `/admin/users/${encodeURIComponent(user.id)}`, {
            client: true,
            user: false,
          })
    }
    <h2 class="spaced">Access</h2>
    <form method="post" action="${path}/${user.disabled ? 'enable' : 'disable'}" class="actions">
      ${csrf(frame)}
      <button type="submit" class="${user.disabled ? '' : 'danger'}">
        ${user.disabled ? 'Enable user' : 'Disable user'}
      </button>
    </form>`;
  return consolePage(frame, 'users', user.username, body);
}

/**
 * "Reset password": a link by mail (decision 35), the way that never makes an operator hold the
 * user's password; a user without an address gets one here first. Setting a password outright is the
 * edit form's "New password".
 */
function passwordResetSection(frame: ConsoleFrame, path: string, input: UserPageInput) {
  const { user } = input;
  // Its own field name: the edit form above has `email` (one id per page). The API's problem naming
  // `email` is shown next to this one.
  const problem =
    input.resetProblem?.field === 'email'
      ? { ...input.resetProblem, field: 'reset_email' }
      : input.resetProblem;
  return html`<h2 class="spaced">Reset password</h2>
    ${
      user.email === ''
        ? html`<p>This user has no email address. Give one to send them a link to choose a new password.</p>`
        : html`<p>
            Send ${user.username} a link to choose a new password, to <strong>${user.email}</strong>. It works
            once, for 30 minutes; nothing changes until it is followed.
          </p>`
    }
    ${formProblem(problem, ['reset_email'])}
    <form method="post" action="${path}/password-reset" class="stack" novalidate>
      ${csrf(frame)}
      ${
        user.email === ''
          ? inputField({
              name: 'reset_email',
              label: 'Email for the link',
              value: input.resetEmail ?? '',
              problem,
              required: true,
            })
          : ''
      }
      <div class="actions">
        <button type="submit">${user.email === '' ? 'Save email and send link' : 'Send reset link'}</button>
      </div>
    </form>`;
}

function sessionsSection(frame: ConsoleFrame, path: string, sessions: readonly SessionRow[]) {
  return html`<h2 class="spaced">Sessions</h2>
    ${
      sessions.length === 0
        ? html`<p class="empty">Not signed in anywhere.</p>`
        : html`<div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Device</th>
                    <th scope="col">Address</th>
                    <th scope="col">Signed in</th>
                    <th scope="col">Last active</th>
                    <th scope="col"><span class="visually-hidden">Actions</span></th>
                  </tr>
                </thead>
                <tbody>
                  ${sessions.map(
                    (session, index) =>
                      html`<tr>
                        <td id="session-${index}">${session.device}</td>
                        <td>${session.address || 'Unknown'}</td>
                        <td>${time(session.createdAt)}</td>
                        <td>${time(session.lastActiveAt)}</td>
                        <td>
                          <form
                            method="post"
                            action="${path}/sessions/${encodeURIComponent(session.sid)}/sign-out"
                          >
                            ${csrf(frame)}
                            <button type="submit" class="danger" aria-describedby="session-${index}">
                              Sign out
                            </button>
                          </form>
                        </td>
                      </tr>`,
                  )}
                </tbody>
              </table>
            </div>
            <form method="post" action="${path}/sessions/sign-out" class="actions spaced">
              ${csrf(frame)}
              <button type="submit" class="danger">Sign out everywhere</button>
            </form>`
    }`;
}

/** "Reset second factors…": what it removes and what stays, then the button. */
export function confirmResetSecondFactorsPage(frame: ConsoleFrame, user: UserRow): string {
  const path = `${frame.basePath}/admin/users/${encodeURIComponent(user.id)}`;
  const { totp, recoveryCodes, passkeys } = user.secondFactors;
  const removed = [
    ...(totp ? ['their authenticator app'] : []),
    ...(recoveryCodes > 0 ? [`their ${recoveryCodes} unused recovery codes`] : []),
  ];
  return confirmationPage(frame, 'users', {
    title: `Reset second factors of ${user.username}`,
    heading: html`Reset ${user.username}’s second factors?`,
    caution: html`<p>
        This removes ${removed.length === 0 ? 'nothing: they have none' : removed.join(' and ')}.
      </p>
      <p>
        They then sign in with their password alone, or set up an authenticator app again where one is
        required.
        ${passkeys > 0 ? `Their ${passkeys === 1 ? 'passkey stays' : `${passkeys} passkeys stay`}.` : ''}
        Sessions already signed in stay. Do this only once you are sure the request comes from them.
      </p>`,
    action: `${path}/second-factors`,
    button: 'Reset second factors',
    cancel: `${path}`,
  });
}
