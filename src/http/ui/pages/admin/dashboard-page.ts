import { html, type SafeHtml } from '../../html.js';
import { consolePage, time, type ConsoleFrame } from './console-layout.js';

/** The answer of GET /v1/statistics (decision 43), as the dashboard reads it. */
export interface DashboardStatistics {
  at: string;
  minutes: string[];
  processes: number;
  token_responses: Record<string, number[]>;
  sign_ins: number[];
  failed_sign_ins: number[];
  lockouts: number[];
  errors: Record<string, number[]>;
  requests: number[];
  latency_ms: { p50: (number | null)[]; p99: (number | null)[] };
  active_sessions: number;
  active_sessions_per_minute: (number | null)[];
  signing_keys: { kid: string; alg: string; status: string; created_at: string; age_seconds: number }[];
  pending_migrations: string[];
  tls_certificate: { subject: string; not_after: string; expires_in_seconds: number } | null;
  purge_backlog: Record<string, number>;
  count_limit: number;
}

/** Where the page's script finds its files and figures (ConsoleRouter.asset, the console's JSON). */
export interface DashboardAssets {
  script: string;
  uplotScript: string;
  uplotStyle: string;
  source: string;
}

type Values = readonly (number | null)[];

const sum = (values: Values, from: number) =>
  values.slice(from).reduce<number>((total, value) => total + (value ?? 0), 0);
const highest = (values: Values) =>
  values.reduce<number | null>(
    (top, value) => (value !== null && (top === null || value > top) ? value : top),
    null,
  );
const figure = (value: number | null | undefined) => (value === null || value === undefined ? '—' : value);

/** "3 days", "5 hours", "12 minutes": an age or a time left, in its largest whole unit. */
export function duration(seconds: number): string {
  const units: [number, string][] = [
    [86_400, 'day'],
    [3600, 'hour'],
    [60, 'minute'],
  ];
  for (const [size, name] of units) {
    const n = Math.floor(Math.abs(seconds) / size);
    if (n >= 1) return `${n} ${name}${n === 1 ? '' : 's'}`;
  }
  return 'less than a minute';
}

/** Per chart: its rows (a label and a value per minute) and what its table's columns say. */
function chartRows(
  name: string,
  s: DashboardStatistics,
): { rows: { label: string; values: Values }[]; none?: string } {
  const byLabel = (record: Record<string, number[]>, none: string) => {
    const labels = Object.keys(record).sort();
    return labels.length === 0
      ? { rows: [{ label: none, values: [] }] }
      : { rows: labels.map((label) => ({ label, values: record[label] ?? [] })) };
  };
  switch (name) {
    case 'tokens':
      return byLabel(s.token_responses, 'No token responses');
    case 'errors':
      return byLabel(s.errors, 'No errors');
    case 'sign-ins':
      return {
        rows: [
          { label: 'Signed in', values: s.sign_ins },
          { label: 'Failed', values: s.failed_sign_ins },
          { label: 'Locked out', values: s.lockouts },
        ],
      };
    case 'sessions':
      return { rows: [{ label: 'Active sessions', values: s.active_sessions_per_minute }] };
    default:
      return {
        rows: [
          { label: 'p50', values: s.latency_ms.p50 },
          { label: 'p99', values: s.latency_ms.p99 },
        ],
      };
  }
}

/**
 * One chart: where the script draws it (an image to assistive technology, named by its caption) and
 * its table, the same figures as text, which is all there is without script. The script fills the
 * table's body again at each refresh (browser/dashboard.ts, the same columns).
 */
function chart(name: string, title: string, description: string, s: DashboardStatistics): SafeHtml {
  const latency = name === 'latency';
  // A level (latency, live sessions) is read per minute, not summed over minutes.
  const level = latency || name === 'sessions';
  const { rows } = chartRows(name, s);
  const headings = latency
    ? ['This minute (ms)', 'Previous minute (ms)', 'Slowest minute of the hour (ms)']
    : level
      ? ['This minute', 'Previous minute', 'Highest of the hour']
      : ['This minute', 'Last 5 minutes', 'Last hour'];
  return html`<figure class="chart-figure" aria-labelledby="chart-${name}-title">
    <figcaption>
      <h3 id="chart-${name}-title">${title}</h3>
      <p class="muted small">${description}</p>
    </figcaption>
    <div
      class="chart"
      data-chart="${name}"
      role="img"
      aria-label="${title} per minute over the last hour: chart; the table below gives its figures."
    ></div>
    <div class="table-wrap">
      <table>
        <caption class="visually-hidden">
          ${title}
        </caption>
        <thead>
          <tr>
            <th scope="col">${latency ? 'Quantile' : 'Series'}</th>
            ${headings.map((heading) => html`<th scope="col">${heading}</th>`)}
          </tr>
        </thead>
        <tbody data-table="${name}">
          ${rows.map(({ label, values }) => {
            const cells = level
              ? [values.at(-1), values.at(-2), highest(values)]
              : [values.at(-1) ?? 0, sum(values, -5), sum(values, 0)];
            return html`<tr>
              <th scope="row">${label}</th>
              ${cells.map((cell) => html`<td>${figure(cell)}</td>`)}
            </tr>`;
          })}
        </tbody>
      </table>
    </div>
  </figure>`;
}

/** Rows waiting for the purge, at the count's limit said as "at least". */
const backlogText = (rows: number, limit: number) => (rows >= limit ? `${limit} or more` : String(rows));

function stateOfThings(
  s: DashboardStatistics,
  counts: { clients: number | undefined; users: number | undefined },
): SafeHtml {
  const active = s.signing_keys.find((key) => key.status === 'active');
  const inJwks = s.signing_keys.filter((key) => key.status !== 'revoked').length;
  const certificate = s.tls_certificate;
  const backlog = Object.entries(s.purge_backlog).filter(([, rows]) => rows > 0);
  return html`<h2>State of things</h2>
    <div class="table-wrap">
      <table class="state">
        <caption class="visually-hidden">
          State of things
        </caption>
        <tbody>
          <tr>
            <th scope="row">Active signing key</th>
            <td data-state="signing-key">
              ${
                active === undefined
                  ? 'None'
                  : html`<code>${active.kid}</code> (${active.alg}), created ${time(active.created_at)},
                      ${duration(active.age_seconds)} old`
              }
            </td>
          </tr>
          <tr>
            <th scope="row">Signing keys in /jwks</th>
            <td>${inJwks}</td>
          </tr>
          <tr>
            <th scope="row">Pending migrations</th>
            <td data-state="migrations">
              ${
                s.pending_migrations.length === 0
                  ? 'None: the store is current'
                  : html`<span class="error-text">${s.pending_migrations.join(', ')}</span> (run
                      <code>gatehouse migrate</code>)`
              }
            </td>
          </tr>
          <tr>
            <th scope="row">TLS certificate</th>
            <td data-state="certificate">
              ${
                certificate === null
                  ? 'Served by a proxy in front of Gatehouse'
                  : certificate.expires_in_seconds <= 0
                    ? html`<span class="error-text">Expired ${time(certificate.not_after)}</span>`
                    : html`Expires ${time(certificate.not_after)}, in
                      ${duration(certificate.expires_in_seconds)}
                      (${certificate.subject.replace(/\n/g, ', ')})`
              }
            </td>
          </tr>
          <tr>
            <th scope="row">Purge backlog</th>
            <td data-state="purge-backlog">
              ${
                backlog.length === 0
                  ? 'None: no expired rows waiting'
                  : html`${backlog.map(
                      ([kind, rows], i) =>
                        html`${i > 0 ? ', ' : ''}${kind.replace(/_/g, ' ')}:
                        ${backlogText(rows, s.count_limit)}`,
                    )}`
              }
            </td>
          </tr>
          <tr>
            <th scope="row">Active sessions</th>
            <td data-state="sessions">${backlogText(s.active_sessions, s.count_limit)}</td>
          </tr>
          <tr>
            <th scope="row">Processes reporting</th>
            <td>${s.processes} in the last hour</td>
          </tr>
          <tr>
            <th scope="row">Clients</th>
            <td>${counts.clients ?? '—'}</td>
          </tr>
          <tr>
            <th scope="row">Users</th>
            <td>${counts.users ?? '—'}</td>
          </tr>
        </tbody>
      </table>
    </div>`;
}

export function dashboardPage(
  frame: ConsoleFrame,
  input: {
    statistics: DashboardStatistics;
    clients: number | undefined;
    users: number | undefined;
    assets: DashboardAssets;
  },
): string {
  const s = input.statistics;
  const a = input.assets;
  const base = frame.basePath;
  const body = html`<h1>Dashboard</h1>
    <p class="lead">
      The last hour of every Gatehouse process on this store, per minute, and the state of this server.
    </p>
    <section
      aria-labelledby="figures-title"
      data-dashboard
      data-source="${base}${a.source}"
      data-uplot-script="${base}${a.uplotScript}"
      data-uplot-style="${base}${a.uplotStyle}"
    >
      <h2 id="figures-title">The last hour</h2>
      <p class="muted small" data-updated-text>
        Figures as of ${time(s.at)}; each process adds its own every 15 seconds.
      </p>
      <div class="charts">
        ${chart('tokens', 'Token responses', 'Tokens issued, by grant type.', s)}
        ${chart('sign-ins', 'Sign-ins', 'Sign-in steps that succeeded, failed, or met a lockout.', s)}
        ${chart('errors', 'Errors', 'Error responses, by OAuth error code; server_error is a 5xx.', s)}
        ${chart('latency', 'Latency', 'Time to answer a request: median (p50) and 99th percentile.', s)}
        ${chart('sessions', 'Active sessions', 'Browser sessions live, as read once a minute.', s)}
      </div>
    </section>
    ${stateOfThings(s, input)}`;
  return consolePage(frame, 'dashboard', 'Dashboard', body, [a.script]);
}
