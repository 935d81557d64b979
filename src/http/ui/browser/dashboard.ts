// Runs in the browser (served under /admin/assets/ as a module script; compiled by tsc with the DOM
// library). The admin console's dashboard (docs/decisions.md, decision 43): it loads uPlot from the
// issuer's own origin, draws the last hour's figures from the console's same-origin JSON (the answer
// of GET /v1/statistics), and fetches them again every 20 seconds while the page is shown. The page
// works without it: each chart's table, rendered by the server, holds the same figures as text; this
// script keeps those tables current too.
//
// Markup it acts on: an element `[data-dashboard]` with `data-source` (the JSON's URL),
// `data-uplot-script` and `data-uplot-style` (uPlot's files); in it, per chart, `[data-chart=NAME]`
// (where the chart goes) and `[data-table=NAME]` (its table's body); and `[data-updated-text]`. It sets
// `data-updated` on the root to the figures' time after each drawing.

import type uPlot from 'uplot';

interface Statistics {
  at: string;
  minutes: string[];
  token_responses: Record<string, number[]>;
  sign_ins: number[];
  failed_sign_ins: number[];
  lockouts: number[];
  errors: Record<string, number[]>;
  requests: number[];
  latency_ms: { p50: (number | null)[]; p99: (number | null)[] };
  active_sessions_per_minute: (number | null)[];
}

type Values = (number | null)[];
interface Chart {
  name: string;
  unit: string;
  series(statistics: Statistics): { label: string; values: Values }[];
}

const REFRESH_MS = 20_000;
const HEIGHT = 220;
// Colours with 3:1 contrast or more against the white card (WCAG 1.4.11), told apart by the legend too.
const COLOURS = ['#0b57d0', '#b3261e', '#1a7436', '#8a4b00', '#6f42c1', '#00748a', '#57606a', '#a0246b'];

const byLabel = (record: Record<string, number[]>, none: string) => {
  const labels = Object.keys(record).sort();
  return labels.length === 0
    ? [{ label: none, values: [] as Values }]
    : labels.map((label) => ({ label, values: record[label] ?? [] }));
};

const CHARTS: Chart[] = [
  {
    name: 'tokens',
    unit: 'responses',
    series: (s) => byLabel(s.token_responses, 'No token responses'),
  },
  {
    name: 'sign-ins',
    unit: 'attempts',
    series: (s) => [
      { label: 'Signed in', values: s.sign_ins },
      { label: 'Failed', values: s.failed_sign_ins },
      { label: 'Locked out', values: s.lockouts },
    ],
  },
  { name: 'errors', unit: 'responses', series: (s) => byLabel(s.errors, 'No errors') },
  {
    name: 'latency',
    unit: 'ms',
    series: (s) => [
      { label: 'p50', values: s.latency_ms.p50 },
      { label: 'p99', values: s.latency_ms.p99 },
    ],
  },
  {
    name: 'sessions',
    unit: 'sessions',
    series: (s) => [{ label: 'Active sessions', values: s.active_sessions_per_minute }],
  },
];

/** Charts of a level read per minute (latency, live sessions), not of counts summed over minutes. */
const LEVELS = new Set(['latency', 'sessions']);

const root = document.querySelector<HTMLElement>('[data-dashboard]');
const drawn = new Map<string, { plot: uPlot; labels: string }>();

function load(tag: 'script' | 'link', url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const element = document.createElement(tag);
    if (element instanceof HTMLScriptElement) element.src = url;
    else if (element instanceof HTMLLinkElement) {
      element.rel = 'stylesheet';
      element.href = url;
    }
    element.addEventListener('load', () => resolve());
    element.addEventListener('error', () => reject(new Error(`could not load ${url}`)));
    document.head.append(element);
  });
}

const sum = (values: Values, from: number) =>
  values.slice(from).reduce<number>((total, value) => total + (value ?? 0), 0);
const highest = (values: Values) =>
  values.reduce<number | null>(
    (top, value) => (value !== null && (top === null || value > top) ? value : top),
    null,
  );
const text = (value: number | null | undefined) =>
  value === null || value === undefined ? '—' : String(value);

/** The table beside a chart, as the server renders it (pages/admin/dashboard-page.ts). */
function fillTable(body: HTMLTableSectionElement, chart: Chart, statistics: Statistics): void {
  const rows = chart.series(statistics).map(({ label, values }) => {
    const cells = LEVELS.has(chart.name)
      ? [values.at(-1), values.at(-2), highest(values)]
      : [values.at(-1) ?? 0, sum(values, -5), sum(values, 0)];
    const row = document.createElement('tr');
    const head = document.createElement('th');
    head.scope = 'row';
    head.textContent = label;
    row.append(head);
    for (const cell of cells) {
      const td = document.createElement('td');
      td.textContent = text(cell);
      row.append(td);
    }
    return row;
  });
  body.replaceChildren(...rows);
}

function draw(Plot: typeof uPlot, statistics: Statistics): void {
  const minutes = statistics.minutes.map((minute) => Date.parse(minute) / 1000);
  for (const chart of CHARTS) {
    const target = root?.querySelector<HTMLElement>(`[data-chart="${chart.name}"]`);
    const table = root?.querySelector<HTMLTableSectionElement>(`[data-table="${chart.name}"]`);
    if (table) fillTable(table, chart, statistics);
    if (!target) continue;
    const series = chart.series(statistics);
    const data: uPlot.AlignedData = [
      minutes,
      ...series.map(({ values }) => (values.length === 0 ? minutes.map(() => 0) : values)),
    ];
    const labels = series.map((s) => s.label).join('\u0000');
    const existing = drawn.get(chart.name);
    if (existing !== undefined && existing.labels === labels) {
      existing.plot.setData(data);
      continue;
    }
    // A new set of series (a grant type or an error seen for the first time): a new chart.
    existing?.plot.destroy();
    const plot = new Plot(
      {
        width: Math.max(200, target.clientWidth),
        height: HEIGHT,
        series: [
          {},
          ...series.map(({ label }, i) => ({
            label,
            stroke: COLOURS[i % COLOURS.length],
            width: 2,
            spanGaps: false,
            // A level has gaps (minutes without requests or readings): its points are drawn, so a lone minute shows.
            ...(LEVELS.has(chart.name) ? { points: { show: true, size: 5 } } : {}),
            value: (_u: uPlot, value: number | null) => (value === null ? '—' : `${value} ${chart.unit}`),
          })),
        ],
        axes: [{}, { size: 56 }],
        scales: { y: { range: (_u, min, max) => [0, Math.max(1, max ?? min ?? 1)] } },
      },
      data,
      target,
    );
    drawn.set(chart.name, { plot, labels });
  }
}

async function refresh(Plot: typeof uPlot, source: string): Promise<void> {
  const status = root?.querySelector<HTMLElement>('[data-updated-text]');
  try {
    // A signed-out console answers with a redirect to sign-in: no figures, and a word to reload.
    const response = await fetch(source, { headers: { accept: 'application/json' }, redirect: 'manual' });
    if (!response.ok)
      throw new Error(response.type === 'opaqueredirect' ? 'signed out' : `${response.status}`);
    const statistics = (await response.json()) as Statistics;
    draw(Plot, statistics);
    root?.setAttribute('data-updated', statistics.at);
    if (status) status.textContent = `Updated ${new Date(statistics.at).toLocaleTimeString()}.`;
  } catch (error) {
    if (status) {
      status.textContent =
        error instanceof Error && error.message === 'signed out'
          ? 'Signed out of the console: reload the page.'
          : 'The figures could not be refreshed; trying again shortly.';
    }
  }
}

async function start(): Promise<void> {
  const source = root?.dataset['source'];
  const script = root?.dataset['uplotScript'];
  const style = root?.dataset['uplotStyle'];
  if (!root || !source || !script || !style) return;
  await Promise.all([load('link', style), load('script', script)]);
  const Plot = (window as unknown as { uPlot?: typeof uPlot }).uPlot;
  if (Plot === undefined) return;
  await refresh(Plot, source);
  setInterval(() => {
    if (!document.hidden) void refresh(Plot, source);
  }, REFRESH_MS);
  window.addEventListener('resize', () => {
    for (const [name, { plot }] of drawn) {
      const target = root.querySelector<HTMLElement>(`[data-chart="${name}"]`);
      if (target) plot.setSize({ width: Math.max(200, target.clientWidth), height: HEIGHT });
    }
  });
}

void start();
