import type { Clock } from '../../shared/clock.js';
import type { MetricSample, MetricSampleStore } from '../ports.js';

/**
 * The dashboard's figures (docs/decisions.md, decision 43). Every process counts in memory and adds
 * its counts to the store every FLUSH_INTERVAL_MS, one row per (minute, process, series, label): the
 * request path only increments a number, and a process that dies loses at most one interval. A reader
 * sums every process's rows per minute, and computes latency quantiles from the merged buckets.
 */

/** The series a process counts; each one's labels are a small, bounded set. */
export const FIGURE_SERIES = [
  /** Token responses, labelled by grant type. */
  'token_responses',
  /** Sign-in steps that succeeded (`sign-in.succeeded` events, decision 41). */
  'sign_ins',
  /** Sign-in attempts that failed (`sign-in.failed`). */
  'failed_sign_ins',
  /** Sign-in attempts refused by a lockout (`sign-in.locked-out`). */
  'lockouts',
  /** Error responses, labelled by their OAuth error code (`server_error` for a 5xx). */
  'errors',
  /** Requests answered, by the latency bucket they fell in (labelled by its upper bound). */
  'latency',
] as const;
export type FigureSeries = (typeof FIGURE_SERIES)[number];

/**
 * Upper bounds (seconds) of the latency buckets, as gatehouse_http_request_duration_seconds has them;
 * a last, unbounded bucket takes the rest. Non-cumulative counts per bucket: buckets of several
 * processes merge by adding them.
 */
export const LATENCY_BUCKETS: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
];
const LATENCY_LABELS = [...LATENCY_BUCKETS.map(String), '+Inf'];

/**
 * A gauge: a level read once a minute by each process (the live sessions, counted in the shared store),
 * not a count. Every process reads the same level, so a minute's value is the highest any process
 * wrote, never their sum.
 */
export const ACTIVE_SESSIONS_SERIES = 'active_sessions';

/** How often a process adds what it counted to the store. */
export const FLUSH_INTERVAL_MS = 15_000;

/** The purge deletes samples older than this: the dashboard shows one hour, two are kept. */
export const METRIC_SAMPLE_RETENTION_SECONDS = 2 * 3600;

/** Distinct labels a process keeps per series; any more count as `other` (labels must stay bounded). */
const MAX_LABELS_PER_SERIES = 32;
const MAX_LABEL_LENGTH = 64;
export const OTHER_LABEL = 'other';

/** The epoch second the minute holding `at` starts at. */
export const minuteOf = (at: number): number => Math.floor(at / 60) * 60;

const key = (series: string, label: string) => `${series}\u0000${label}`;

/** What the sign-in events of the audit log (decision 41) count as. */
const SIGN_IN_EVENTS: Readonly<Record<string, FigureSeries>> = {
  'sign-in.succeeded': 'sign_ins',
  'sign-in.failed': 'failed_sign_ins',
  'sign-in.locked-out': 'lockouts',
};

/** One process's counts, flushed to the store in batches (decision 43). */
export class FigureRecorder {
  /** Counts not yet flushed: minute → (series, label) → count. */
  private pending = new Map<number, Map<string, number>>();
  private currentMinute = -1;
  private current = new Map<string, number>();
  private readonly labels = new Map<string, Set<string>>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  /** The minute the live sessions were last read in. */
  private gaugeMinute = -1;

  constructor(
    private readonly store: MetricSampleStore,
    private readonly clock: Clock,
    /** This process's id: its rows are its own, so no two processes ever add to one row. */
    readonly processId: string,
    /** Reads the live sessions (a bounded count), once a minute at a flush; none when not given. */
    private readonly activeSessions?: () => Promise<number>,
  ) {}

  /** Adds `n` to a series; a label beyond the series' bound counts as `other`. */
  count(series: FigureSeries, label = '', n = 1): void {
    this.add(key(series, this.bounded(series, label)), n);
  }

  /** A request answered after `seconds`. */
  request(seconds: number): void {
    let i = 0;
    while (i < LATENCY_BUCKETS.length && seconds > (LATENCY_BUCKETS[i] as number)) i++;
    this.add(key('latency', LATENCY_LABELS[i] as string), 1);
  }

  /** An audit event written (decision 41): sign-ins, failures and lockouts are counted from them. */
  auditEvent(type: string): void {
    const series = SIGN_IN_EVENTS[type];
    if (series !== undefined) this.count(series);
  }

  /** Starts flushing every `intervalMs`, on a timer that keeps no process alive. */
  start(onError: (error: unknown) => void, intervalMs = FLUSH_INTERVAL_MS): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => {
      this.flush().catch(onError);
    }, intervalMs);
    this.timer.unref();
  }

  /** Stops the timer and flushes what is left (a process closing loses nothing). */
  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  /**
   * Adds what was counted since the last flush to the store. Counts a failed write took are put back
   * (added to, not overwritten), so the next flush carries them; one flush at a time.
   */
  async flush(): Promise<void> {
    while (this.flushing !== undefined) await this.flushing.catch(() => undefined);
    // From here to `this.flushing` nothing awaits: one flush at a time takes the counts and the
    // minute's reading of the live sessions, which is read inside the flush it belongs to.
    const minuteNow = minuteOf(this.clock.now());
    const gaugeDue = this.activeSessions !== undefined && minuteNow !== this.gaugeMinute;
    const previousGaugeMinute = this.gaugeMinute;
    if (gaugeDue) this.gaugeMinute = minuteNow;
    const taken = this.pending;
    this.pending = new Map();
    this.currentMinute = -1;
    const samples: MetricSample[] = [];
    for (const [minute, counts] of taken) {
      for (const [k, value] of counts) {
        const [series, label] = k.split('\u0000') as [string, string];
        samples.push({ processId: this.processId, minute, series, label, value });
      }
    }
    if (samples.length === 0 && !gaugeDue) return;
    const write = async () => {
      if (gaugeDue && this.activeSessions !== undefined) {
        const value = await this.activeSessions();
        samples.push({
          processId: this.processId,
          minute: minuteNow,
          series: ACTIVE_SESSIONS_SERIES,
          label: '',
          value,
        });
      }
      await this.store.add(samples);
    };
    this.flushing = write().then(
      () => undefined,
      (error: unknown) => {
        // Nothing was written: the counts (and a reading, if one was made) go back for the next flush;
        // a reading that failed is made again then.
        for (const sample of samples)
          this.addAt(sample.minute, key(sample.series, sample.label), sample.value);
        if (gaugeDue && !samples.some((sample) => sample.series === ACTIVE_SESSIONS_SERIES)) {
          this.gaugeMinute = previousGaugeMinute;
        }
        throw error;
      },
    );
    try {
      await this.flushing;
    } finally {
      this.flushing = undefined;
    }
  }

  private add(k: string, n: number): void {
    const minute = minuteOf(this.clock.now());
    if (minute !== this.currentMinute) {
      let counts = this.pending.get(minute);
      if (counts === undefined) {
        counts = new Map();
        this.pending.set(minute, counts);
      }
      this.current = counts;
      this.currentMinute = minute;
    }
    this.current.set(k, (this.current.get(k) ?? 0) + n);
  }

  private addAt(minute: number, k: string, n: number): void {
    let counts = this.pending.get(minute);
    if (counts === undefined) {
      counts = new Map();
      this.pending.set(minute, counts);
    }
    counts.set(k, (counts.get(k) ?? 0) + n);
    this.currentMinute = -1;
  }

  private bounded(series: string, label: string): string {
    const cut = label.slice(0, MAX_LABEL_LENGTH);
    let seen = this.labels.get(series);
    if (seen === undefined) {
      seen = new Set();
      this.labels.set(series, seen);
    }
    if (seen.has(cut)) return cut;
    if (seen.size >= MAX_LABELS_PER_SERIES) return OTHER_LABEL;
    seen.add(cut);
    return cut;
  }
}

/**
 * The `q` quantile (0 < q < 1) of observations counted in `counts` (one per bucket of `bounds`, then
 * the unbounded one), in seconds: linear within the bucket the rank falls in, as Prometheus's
 * histogram_quantile does; the highest finite bound when it falls in the unbounded one; null without
 * observations.
 */
export function bucketQuantile(
  bounds: readonly number[],
  counts: readonly number[],
  q: number,
): number | null {
  const total = counts.reduce((sum, n) => sum + n, 0);
  if (total === 0) return null;
  const rank = q * total;
  let below = 0;
  for (let i = 0; i < counts.length; i++) {
    const n = counts[i] ?? 0;
    if (n > 0 && below + n >= rank) {
      const upper = bounds[i];
      const lower = i === 0 ? 0 : (bounds[i - 1] as number);
      if (upper === undefined) return lower;
      return lower + ((upper - lower) * (rank - below)) / n;
    }
    below += n;
  }
  return bounds.at(-1) ?? null;
}

/** The last hour, per minute, summed over every process (what /v1/statistics answers). */
export interface FigureSummary {
  /** The epoch second each minute starts at, oldest first; the last is the current minute. */
  minutes: number[];
  /** Processes that reported in the window. */
  processes: number;
  /** Per series, per label, one count per minute. */
  counts: Record<Exclude<FigureSeries, 'latency'>, Record<string, number[]>>;
  /** Requests answered per minute (the latency buckets' total). */
  requests: number[];
  /** Latency quantiles per minute, in milliseconds; null for a minute without requests. */
  latencyMs: { p50: (number | null)[]; p99: (number | null)[] };
  /** Live sessions per minute: the highest level any process read; null where none read it. */
  activeSessions: (number | null)[];
}

/** How many minutes the dashboard shows. */
export const SUMMARY_MINUTES = 60;

/**
 * Sums `samples` (any processes, any minutes) into the `minutes` minutes up to the one holding `now`;
 * samples outside them, and of series this version does not know, are left out.
 */
export function summarize(
  samples: readonly MetricSample[],
  now: number,
  minutes = SUMMARY_MINUTES,
): FigureSummary {
  const last = minuteOf(now);
  const first = last - (minutes - 1) * 60;
  const axis = Array.from({ length: minutes }, (_, i) => first + i * 60);
  const counts: FigureSummary['counts'] = {
    token_responses: {},
    sign_ins: {},
    failed_sign_ins: {},
    lockouts: {},
    errors: {},
  };
  const buckets = axis.map(() => new Array<number>(LATENCY_LABELS.length).fill(0));
  const processes = new Set<string>();
  const activeSessions: (number | null)[] = axis.map(() => null);
  for (const sample of samples) {
    if (sample.minute < first || sample.minute > last) continue;
    const i = (sample.minute - first) / 60;
    if (!Number.isInteger(i)) continue;
    processes.add(sample.processId);
    if (sample.series === ACTIVE_SESSIONS_SERIES) {
      activeSessions[i] = Math.max(activeSessions[i] ?? 0, sample.value);
      continue;
    }
    if (sample.series === 'latency') {
      const b = LATENCY_LABELS.indexOf(sample.label);
      if (b >= 0) (buckets[i] as number[])[b] = ((buckets[i] as number[])[b] ?? 0) + sample.value;
      continue;
    }
    const series = (counts as Record<string, Record<string, number[]>>)[sample.series];
    if (series === undefined) continue;
    const values = (series[sample.label] ??= axis.map(() => 0));
    values[i] = (values[i] ?? 0) + sample.value;
  }
  const toMs = (seconds: number | null) => (seconds === null ? null : Math.round(seconds * 100_000) / 100);
  return {
    minutes: axis,
    processes: processes.size,
    counts,
    requests: buckets.map((b) => b.reduce((sum, n) => sum + n, 0)),
    latencyMs: {
      p50: buckets.map((b) => toMs(bucketQuantile(LATENCY_BUCKETS, b, 0.5))),
      p99: buckets.map((b) => toMs(bucketQuantile(LATENCY_BUCKETS, b, 0.99))),
    },
    activeSessions,
  };
}
