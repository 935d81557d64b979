import { html } from '../../html.js';
import { consolePage, time, type ConsoleFrame } from './console-layout.js';

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
