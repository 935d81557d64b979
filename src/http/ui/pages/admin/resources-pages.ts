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
 * The console's resource servers (RFC 8707; decision 42): the list searched and paged by
 * /v1/resources, a form to register one, a page to change its name and scopes, and a confirmation
 * before a delete. A resource is named in paths by its URI as one percent-encoded segment.
 */

export interface ResourceRow {
  uri: string;
  name: string;
  scopes: string[];
  createdAt: string;
}

export interface ResourceFormValues {
  uri: string;
  name: string;
  scopes: string;
}

const RESOURCE_FIELDS = ['uri', 'name', 'scopes'] as const;
export const resourcePath = (frame: ConsoleFrame, uri: string) =>
  `${frame.basePath}/admin/resources/${encodeURIComponent(uri)}`;

const scopesHint = 'Separated by spaces; empty: any scope a client has.';

export function resourcesPage(
  frame: ConsoleFrame,
  input: {
    rows: ResourceRow[];
    search: string;
    offset: number;
    limit: number;
    total: number;
    notice?: string;
    values: ResourceFormValues;
    problem?: ApiProblem;
  },
): string {
  const base = frame.basePath;
  const body = html`<h1>Resources</h1>
    <p class="lead">The APIs a client may ask a token for with <code>resource</code> (RFC 8707).</p>
    ${notice(input.notice)}
    <div class="toolbar">
      <form method="get" action="${base}/admin/resources" class="search" role="search">
        <label for="resource-search">URI or name contains</label>
        <input id="resource-search" name="search" type="search" value="${input.search}" />
        <button type="submit">Search</button>
      </form>
      <a class="button primary" href="#new-resource">New resource</a>
    </div>
    ${
      input.rows.length === 0
        ? html`<p class="empty">No resource${input.search ? ' matches that' : ''}.</p>`
        : html`<div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">URI</th>
                  <th scope="col">Name</th>
                  <th scope="col">Scopes</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                ${input.rows.map(
                  (row) =>
                    html`<tr>
                      <td>
                        <a href="${resourcePath(frame, row.uri)}"><code>${row.uri}</code></a>
                      </td>
                      <td>${row.name || '—'}</td>
                      <td>
                        ${row.scopes.length === 0 ? html`<span class="muted">any</span>` : row.scopes.join(' ')}
                      </td>
                      <td>${time(row.createdAt)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }
    ${pager(`${base}/admin/resources`, input.search ? { search: input.search } : {}, input.offset, input.limit, input.total)}
    <h2 class="spaced" id="new-resource">New resource</h2>
    ${formProblem(input.problem, RESOURCE_FIELDS)}
    <form method="post" action="${base}/admin/resources" class="stack" novalidate>
      ${csrf(frame)}
      ${inputField({
        name: 'uri',
        label: 'URI',
        value: input.values.uri,
        problem: input.problem,
        required: true,
        hint: 'Absolute https (http only on loopback), no fragment: the aud of its tokens.',
      })}
      ${inputField({ name: 'name', label: 'Name', value: input.values.name, problem: input.problem })}
      ${inputField({
        name: 'scopes',
        label: 'Scopes',
        value: input.values.scopes,
        problem: input.problem,
        hint: scopesHint,
      })}
      <div class="actions"><button type="submit" class="primary">Create</button></div>
    </form>`;
  return consolePage(frame, 'resources', 'Resources', body);
}

export function resourcePage(
  frame: ConsoleFrame,
  input: { resource: ResourceRow; values: ResourceFormValues; notice?: string; problem?: ApiProblem },
): string {
  const { resource } = input;
  const path = resourcePath(frame, resource.uri);
  const title = resource.name || resource.uri;
  const body = html`<h1>${title}</h1>
    ${notice(input.notice)}
    <dl class="facts">
      <dt>URI</dt>
      <dd><code id="resource-uri">${resource.uri}</code></dd>
      <dt>Created</dt>
      <dd>${time(resource.createdAt)}</dd>
    </dl>
    <h2>Edit</h2>
    ${formProblem(input.problem, ['name', 'scopes'])}
    <form method="post" action="${path}" class="stack" novalidate>
      ${csrf(frame)}
      ${inputField({
        name: 'name',
        label: 'Name',
        value: input.values.name,
        problem: input.problem,
        hint: 'Empty: none.',
      })}
      ${inputField({
        name: 'scopes',
        label: 'Scopes',
        value: input.values.scopes,
        problem: input.problem,
        hint: scopesHint,
      })}
      <div class="actions"><button type="submit" class="primary">Save</button></div>
    </form>
    <h2 class="spaced">Removal</h2>
    <div class="actions"><a class="button danger" href="${path}/delete">Delete…</a></div>`;
  return consolePage(frame, 'resources', title, body);
}

export function confirmDeleteResourcePage(frame: ConsoleFrame, resource: ResourceRow): string {
  const path = resourcePath(frame, resource.uri);
  return confirmationPage(frame, 'resources', {
    title: `Delete ${resource.name || resource.uri}`,
    heading: html`Delete ${resource.name || 'this resource'}?`,
    about: html`<p><code>${resource.uri}</code></p>`,
    caution: html`<p>
      Requests naming it are refused from now on (invalid_target); access tokens already issued for it stay
      valid until they expire. This cannot be undone.
    </p>`,
    action: `${path}/delete`,
    button: 'Delete resource',
    cancel: `${path}`,
  });
}
