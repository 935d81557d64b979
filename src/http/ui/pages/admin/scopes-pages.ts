import { html } from '../../html.js';
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

/**
 * The console's scopes (decision 42): the list searched and paged by /v1/scopes, a form to register
 * one, a page to change its description, and a confirmation before a delete. The form to register one
 * is on the list page (not at /admin/scopes/new): a scope may be named `new`.
 */

export interface ScopeRow {
  name: string;
  description: string;
  createdAt: string;
  /** A scope Gatehouse itself depends on, which the API refuses to delete (409). */
  builtIn: boolean;
}

export interface ScopeFormValues {
  name: string;
  description: string;
}

const SCOPE_FIELDS = ['name', 'description'] as const;
const scopePath = (frame: ConsoleFrame, name: string) =>
  `${frame.basePath}/admin/scopes/${encodeURIComponent(name)}`;

export function scopesPage(
  frame: ConsoleFrame,
  input: {
    rows: ScopeRow[];
    search: string;
    offset: number;
    limit: number;
    total: number;
    notice?: string;
    values: ScopeFormValues;
    problem?: ApiProblem;
  },
): string {
  const base = frame.basePath;
  const body = html`<h1>Scopes</h1>
    ${notice(input.notice)}
    <div class="toolbar">
      <form method="get" action="${base}/admin/scopes" class="search" role="search">
        <label for="scope-search">Name contains</label>
        <input id="scope-search" name="search" type="search" value="${input.search}" />
        <button type="submit">Search</button>
      </form>
      <a class="button primary" href="#new-scope">New scope</a>
    </div>
    ${
      input.rows.length === 0
        ? html`<p class="empty">No scope${input.search ? ' whose name contains that' : ''}.</p>`
        : html`<div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">What the consent page says</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                ${input.rows.map(
                  (row) =>
                    html`<tr>
                      <td>
                        <a href="${scopePath(frame, row.name)}"><code>${row.name}</code></a
                        >${row.builtIn ? html` <span class="muted small">(built in)</span>` : ''}
                      </td>
                      <td>${row.description}</td>
                      <td>${time(row.createdAt)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }
    ${pager(`${base}/admin/scopes`, input.search ? { search: input.search } : {}, input.offset, input.limit, input.total)}
    <h2 class="spaced" id="new-scope">New scope</h2>
    ${formProblem(input.problem, SCOPE_FIELDS)}
    <form method="post" action="${base}/admin/scopes" class="stack" novalidate>
      ${csrf(frame)}
      ${inputField({
        name: 'name',
        label: 'Name',
        value: input.values.name,
        problem: input.problem,
        required: true,
        hint: 'As clients ask for it, for example calendar:read (no spaces or quotes).',
      })}
      ${inputField({
        name: 'description',
        label: 'Description',
        value: input.values.description,
        problem: input.problem,
        hint: 'What the consent page tells people; the name when left empty.',
      })}
      <div class="actions"><button type="submit" class="primary">Create</button></div>
    </form>`;
  return consolePage(frame, 'scopes', 'Scopes', body);
}

export function scopePage(
  frame: ConsoleFrame,
  input: { scope: ScopeRow; description: string; notice?: string; problem?: ApiProblem },
): string {
  const { scope } = input;
  const path = scopePath(frame, scope.name);
  const body = html`<h1><code>${scope.name}</code></h1>
    ${notice(input.notice)}
    <dl class="facts">
      <dt>Created</dt>
      <dd>${time(scope.createdAt)}</dd>
      <dt>Kind</dt>
      <dd>${scope.builtIn ? 'Built in: Gatehouse depends on it, so it cannot be deleted' : 'Registered'}</dd>
    </dl>
    <h2>Edit</h2>
    ${formProblem(input.problem, ['description'])}
    <form method="post" action="${path}" class="stack" novalidate>
      ${csrf(frame)}
      ${inputField({
        name: 'description',
        label: 'Description',
        value: input.description,
        problem: input.problem,
        required: true,
        hint: 'What the consent page tells people when an application asks for this scope.',
      })}
      <div class="actions"><button type="submit" class="primary">Save</button></div>
    </form>
    ${
      scope.builtIn
        ? ''
        : html`<h2 class="spaced">Removal</h2>
            <div class="actions"><a class="button danger" href="${path}/delete">Delete…</a></div>`
    }`;
  return consolePage(frame, 'scopes', scope.name, body);
}

export function confirmDeleteScopePage(frame: ConsoleFrame, scope: ScopeRow): string {
  const path = scopePath(frame, scope.name);
  return confirmationPage(frame, 'scopes', {
    title: `Delete ${scope.name}`,
    heading: html`Delete the scope <code>${scope.name}</code>?`,
    caution: html`<p>
      Its description goes with it: the server’s metadata no longer lists it, and a consent page shows the
      bare name. Clients and resource servers that name it keep it. This cannot be undone.
    </p>`,
    action: `${path}/delete`,
    button: 'Delete scope',
    cancel: `${path}`,
  });
}
