import { costRatio, cpuPerRequest, throughputRatio } from './cost.js';
import type { Machine } from './machine.js';
import type { BenchOptions, Bracket, Check, MemorySample, Row, Target } from './types.js';
import { mib } from './memory.js';

export interface RunReport {
  date: string;
  command: string;
  /** git describe --always --dirty */
  code: string;
  machine: Machine;
  pinned: boolean;
  options: BenchOptions;
  loadBefore: string;
  loadAfter: string;
  rows: Row[];
  /** Resident memory of the servers: idle, and after loaded runs. */
  memory: MemorySample[];
  /** Each target with the bare runs around its scenario. */
  targets: Array<{ target: Target; bracket: Bracket }>;
  checks: Check[];
  notes: string[];
}

export interface JudgedTarget {
  name: string;
  target: string;
  measured: string;
  pass: boolean;
  reported?: boolean;
}

const verdict = (t: JudgedTarget, fail: string) => (t.reported ? 'reported' : t.pass ? 'PASS' : fail);

export function judgeTargets(report: RunReport): JudgedTarget[] {
  return report.targets.map(({ target, bracket }) => ({
    name: target.name,
    target: target.target,
    ...target.judge(bracket),
  }));
}

const int = (value: number) => (Number.isFinite(value) ? Math.round(value).toLocaleString('en') : '-');
const ms = (value: number) => (Number.isFinite(value) ? String(value) : '-');
const fixed = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : '-');

const HEADERS = [
  'scenario',
  'requests/s',
  'p50 ms',
  'p99 ms',
  'server CPU',
  'loop CPU',
  'CPU us/req',
  'driver CPU',
  'x bare req/s',
  'x bare CPU/req',
  'other',
];
const TEXT_COLUMNS = new Set([0, HEADERS.length - 1]);

function cells(row: Row): string[] {
  const r = row.result;
  return [
    row.label,
    int(r.rps),
    ms(r.p50),
    ms(r.p99),
    fixed(r.serverCpu, 2),
    fixed(r.loopCpu, 2),
    fixed(cpuPerRequest(r), 0),
    fixed(r.driverCpu, 2),
    fixed(throughputRatio(r, row.bracket), 3),
    fixed(costRatio(r, row.bracket), 3),
    row.compare ?? '',
  ];
}

const LEGEND = [
  '"x bare req/s": requests/s divided by the mean of the bare Fastify runs just before and just after the',
  'scenario (bare rows: by the mean of all bare runs). "server CPU", "driver CPU": cores used during the',
  'measured seconds (1.00 = one core fully busy); "loop CPU": the server\'s main thread (event loop) alone,',
  'the rest being thread-pool work such as argon2. A neighbour taking part of core 0 lowers requests/s but',
  'hardly the CPU a request costs, so "CPU us/req" (server CPU per request) and "x bare CPU/req" (bare CPU',
  'per request / this CPU per request) are the noise-resistant cross-checks.',
];

/** A plain-text table for the terminal. */
export function renderConsole(report: RunReport): string {
  const table = [HEADERS, ...report.rows.map(cells)];
  const widths = HEADERS.map((_, i) => Math.max(...table.map((line) => (line[i] ?? '').length)));
  const lines = table.map((line) =>
    line
      .map((cell, i) => (TEXT_COLUMNS.has(i) ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join('  '),
  );
  const targets = judgeTargets(report).map(
    (t) => `${verdict(t, 'FAIL')}  ${t.name}: ${t.measured} (needs ${t.target})`,
  );
  const checks = report.checks.map((c) => `${c.pass ? 'ok  ' : 'FAIL'}  ${c.name}: ${c.detail}`);
  const memory = report.memory.map(
    (m) => `${m.server}, ${m.when}: RSS ${mib(m.rssBytes)} MiB, V8 heap used ${mib(m.heapUsedBytes)} MiB`,
  );
  return [
    lines.join('\n'),
    '',
    ...LEGEND,
    '',
    ...(memory.length > 0 ? ['Memory:', ...memory, ''] : []),
    'Targets:',
    ...targets,
    '',
    'Correctness:',
    ...checks,
    ...(report.notes.length > 0 ? ['', 'Notes:', ...report.notes.map((n) => `- ${n}`)] : []),
  ].join('\n');
}

const escape = (text: string) => text.replace(/\|/g, '\\|');

/** The generated block of docs/benchmarks.md. */
export function renderMarkdown(report: RunReport): string {
  const { machine, options } = report;
  const out: string[] = [
    `### Latest run (${report.date})`,
    '',
    `- Command: \`${report.command}\`; code: \`${report.code}\` (\`-dirty\`: with uncommitted changes)`,
    `- Machine: ${machine.nproc} cores (\`nproc\`), ${machine.cpuModel}, Node ${machine.node}, Linux ${machine.kernel}`,
    `- Load average (1/5/15 min) before: ${report.loadBefore}; after: ${report.loadAfter}`,
    report.pinned
      ? '- Pinning: each server on core 0 (`taskset -c 0`), the load driver (autocannon, in-process) on core 1.'
      : '- Pinning: **none** (taskset missing or one core only): figures are not per core.',
    `- Load: ${options.connections} keep-alive HTTPS connections, ${options.warmup} s warm-up then ${options.duration} s measured per run.`,
    '',
    `| ${HEADERS.join(' | ')} |`,
    `|${HEADERS.map((_, i) => (TEXT_COLUMNS.has(i) ? '---' : '---:')).join('|')}|`,
    ...report.rows.map((row) => `| ${cells(row).map(escape).join(' | ')} |`),
    '',
    ...LEGEND,
    '',
    ...(report.memory.length > 0
      ? [
          '| server | when | RSS MiB | V8 heap used MiB |',
          '|---|---|---:|---:|',
          ...report.memory.map(
            (m) =>
              `| ${escape(m.server)} | ${escape(m.when)} | ${mib(m.rssBytes)} | ${mib(m.heapUsedBytes)} |`,
          ),
          '',
        ]
      : []),
    '| target | required | measured | result |',
    '|---|---|---|---|',
    ...judgeTargets(report).map(
      (t) =>
        `| ${escape(t.name)} | ${escape(t.target)} | ${escape(t.measured)} | ${verdict(t, '**FAIL**')} |`,
    ),
    '',
    '| correctness check | result | detail |',
    '|---|---|---|',
    ...report.checks.map(
      (c) => `| ${escape(c.name)} | ${c.pass ? 'ok' : '**FAIL**'} | ${escape(c.detail)} |`,
    ),
  ];
  if (report.notes.length > 0) out.push('', ...report.notes.map((note) => `- ${note}`));
  return out.join('\n');
}
