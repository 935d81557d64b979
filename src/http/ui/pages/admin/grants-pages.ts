import { html } from '../../html.js';
import type { ApiProblem } from '../../admin/admin-api.js';
import {
  consolePage,
  formProblem,
  notice,
  pager,
  time,
  type ConsoleFrame,
  confirmationPage,
} from './console-layout.js';

/** A standing grant as the console shows it: /v1's grant with the names of its client and user. */
export interface GrantRow {
  id: string;
  clientId: string;
  clientName: string;
  userId: string;
  username: string;
  scopes: string[];
  createdAt: string;
  expiresAt: string;
}

/** Where a revocation returns: the grants list it came from, or the user's page. */
export function revokeLink(base: string, grant: GrantRow, back: string): string {
  const params = new URLSearchParams({ user: grant.userId, back });
  return `${base}/admin/grants/${encodeURIComponent(grant.id)}/revoke?${params.toString()}`;
}

/**
 * The grants table (client, user, scopes, granted at, until), each row with "Revoke…" to its
 * confirmation page; `show` leaves out the column the list is already about.
 */
export function grantsTable(
  frame: ConsoleFrame,
  rows: readonly GrantRow[],
  back: string,
  show: { client: boolean; user: boolean },
) {
  const base = frame.basePath;
  return html`<div class="table-wrap">
    <table>
      <thead>
        <tr>
          ${show.client ? html`<th scope="col">Client</th>` : ''}
          ${show.user ? html`<th scope="col">User</th>` : ''}
          <th scope="col">Scopes</th>
          <th scope="col">Granted</th>
          <th scope="col">Until</th>
          <th scope="col"><span class="visually-hidden">Actions</span></th>
        </tr>
      </thead>
      <tbody>
        ${rows.map(
          (grant) =>
            html`<tr>
              ${
                show.client
                  ? html`<td>
                      <a href="${base}/admin/clients/${encodeURIComponent(grant.clientId)}"
                        >${grant.clientName}</a
                      >
                    </td>`
                  : ''
              }
              ${
                show.user
                  ? html`<td>
                      <a href="${base}/admin/users/${encodeURIComponent(grant.userId)}">${grant.username}</a>
                    </td>`
                  : ''
              }
              <td>${grant.scopes.length === 0 ? '—' : grant.scopes.join(' ')}</td>
              <td>${time(grant.createdAt)}</td>
              <td>${grant.expiresAt === '' ? 'Until revoked' : time(grant.expiresAt)}</td>
              <td>
                <a href="${revokeLink(base, grant, back)}"
                  >Revoke<span class="visually-hidden">
                    the grant to ${grant.clientName} of ${grant.username}</span
                  >…</a
                >
              </td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

export interface GrantsSearch {
  username: string;
  clientId: string;
}

/** /admin/grants: found by a user's name or a client's id, on the server (decision 42). */
export function grantsPage(
  frame: ConsoleFrame,
  input: {
    search: GrantsSearch;
    /** Undefined until something is searched for. */
    rows?: GrantRow[];
    offset: number;
    limit: number;
    total: number;
    back: string;
    notice?: string;
    problem?: ApiProblem;
  },
): string {
  const base = frame.basePath;
  const { search } = input;
  const query: Record<string, string> = {};
  if (search.username !== '') query['username'] = search.username;
  if (search.clientId !== '') query['client_id'] = search.clientId;
  const body = html`<h1>Grants</h1>
    ${notice(input.notice)}
    <p>
      A grant is what a user allowed a client to do. Revoking one stops its refresh and access tokens at once;
      the client asks the user again.
    </p>
    <form method="get" action="${base}/admin/grants" class="search" role="search">
      <label for="grant-user">User name</label>
      <input id="grant-user" name="username" type="search" value="${search.username}" />
      <label for="grant-client">or client ID</label>
      <input id="grant-client" name="client_id" type="search" value="${search.clientId}" />
      <button type="submit">Find grants</button>
    </form>
    ${formProblem(input.problem, [])}
    ${
      input.rows === undefined
        ? html`<p class="hint">Give a user name or a client ID to list their grants.</p>`
        : input.rows.length === 0
          ? html`<p class="empty">No standing grant.</p>`
          : html`${grantsTable(frame, input.rows, input.back, {
              client: search.clientId === '',
              user: search.username === '',
            })}
            ${pager(`${base}/admin/grants`, query, input.offset, input.limit, input.total)}`
    }`;
  return consolePage(frame, 'grants', 'Grants', body);
}

/** "Revoke…": what it stops, then the button (decision 42: a confirmation is its own page). */
export function confirmRevokeGrantPage(frame: ConsoleFrame, grant: GrantRow, back: string): string {
  const base = frame.basePath;
  return confirmationPage(frame, 'grants', {
    title: 'Revoke grant',
    heading: html`Revoke ${grant.clientName}’s grant from ${grant.username}?`,
    about: html`<dl class="facts">
      <dt>Client</dt>
      <dd>${grant.clientName} (<code>${grant.clientId}</code>)</dd>
      <dt>User</dt>
      <dd>${grant.username}</dd>
      <dt>Scopes</dt>
      <dd>${grant.scopes.length === 0 ? '—' : grant.scopes.join(' ')}</dd>
      <dt>Granted</dt>
      <dd>${time(grant.createdAt)}</dd>
    </dl>`,
    caution: html`<p>
      The client’s refresh and access tokens under this grant stop working at once. It can act for
      ${grant.username} again only after they allow it again.
    </p>`,
    action: `${base}/admin/grants/${encodeURIComponent(grant.id)}/revoke`,
    button: 'Revoke grant',
    cancel: `${base}${back}`,
    hidden: { user: grant.userId, back },
  });
}
