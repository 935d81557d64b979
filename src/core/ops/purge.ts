import type { Clock } from '../../shared/clock.js';
import { ownTimeMillis } from '../../shared/own-time.js';
import type { PurgeCutoffs, PurgeStore } from '../ports.js';
import { METRIC_SAMPLE_RETENTION_SECONDS } from './figures.js';

/**
 * How the purge paces itself beside requests (docs/decisions.md, decision 5): batches of the
 * length the store asks for (PurgeStore.batchMillis), a share of the time, a cap and a floor in
 * rows a second, each applied after every batch by the time that batch took. Time is the purger's own
 * (ownTimeMillis: the clock less the time it waited for a CPU): on SQLite the batch's CPU time in
 * the purge process, on PostgreSQL the database's answer. Timed by the clock, a purge process at nice
 * 19 preempted by a busy server saw every batch as slow, shrank them to 10 rows and had to be floored.
 *
 * Gone, and why: a longest pause (the floor bounds every pause to what the batch's rows allow at its
 * rate); a longest run (it was the unit the cap and floor were counted over, letting a run bank a
 * deficit and then delete at full speed to make it up; counted per batch nothing is banked, and a run
 * ends when every kind is clean or the scheduler stops it); a per-store pacing table in compose (the
 * store states its batch length); the revoked-token clock leeway as a setting (CLOCK_SKEW_SECONDS,
 * which no configuration ever set).
 */
export interface PurgePacing {
  /**
   * Most rows deleted per batch. A batch that took longer than the store's batchMillis halves the
   * next one, one that took under half of it grows the next by half, up to this.
   */
  batchSize: number;
  /**
   * The share of time a purge working through a backlog spends deleting: after a batch it pauses
   * (1 - dutyCycle) / dutyCycle times as long as the batch took, so requests get the store 19 times
   * out of 20. At a tenth, the purge bench's probe p99 rose 1.4-2.2 x on SQLite.
   */
  dutyCycle: number;
  /**
   * The most rows a second (0: no cap). The duty cycle bounds the purge's share of time, not its
   * rows: on a fast machine a twentieth of the time deleted 38,000 rows a second on SQLite and 14,000
   * on PostgreSQL, and the requests beside it ran slower for the work each row makes (pages evicted
   * from the core's caches, the log written, the database's own CPU).
   */
  maxRowsPerSecond: number;
  /**
   * The fewest rows a second while working through a backlog, as far as the store and the CPU allow
   * (never over `maxRowsPerSecond`): a batch that took longer than its rows allow at this rate is
   * followed by no pause. On a slow machine or store every batch is slow, and by the duty cycle alone
   * the purge fell behind the dead rows a busy server makes; the priority the purge process runs at
   * (nice 19) still puts requests first.
   */
  minRowsPerSecond: number;
}

export interface PurgePolicy extends PurgePacing {
  /**
   * The longest an access token can live. A revoked grant is kept this long (plus CLOCK_SKEW_SECONDS)
   * after its revocation, so that every token issued under it has expired before its record goes.
   */
  accessTokenTtl: number;
  /**
   * A client registered `open` (RFC 7591, no initial access token) that nobody has granted anything
   * this many seconds after it registered is deleted (docs/decisions.md, decision 20); 0 or absent
   * keeps them.
   */
  unusedOpenClientSeconds?: number;
  /**
   * Audit events older than this many seconds are deleted (GATEHOUSE_AUDIT_RETENTION_DAYS; decision
   * 41); 0 or absent keeps them.
   */
  auditRetentionSeconds?: number;
}

export const DEFAULT_PURGE_PACING: PurgePacing = {
  batchSize: 500,
  dutyCycle: 0.05,
  maxRowsPerSecond: 0,
  minRowsPerSecond: 1000,
};

const SMALLEST_BATCH = 10;

/**
 * Revoked access-token ids are kept this long past their expiry, for resource servers that accept a
 * token this late (clock leeway).
 */
export const CLOCK_SKEW_SECONDS = 300;

/** The pause after a batch of `rows` that took `tookMillis`, by `pacing`. */
export function pauseAfterBatch(pacing: PurgePacing, rows: number, tookMillis: number): number {
  const { dutyCycle, maxRowsPerSecond, minRowsPerSecond } = pacing;
  let pause = dutyCycle < 1 ? tookMillis * (1 / dutyCycle - 1) : 0;
  if (minRowsPerSecond > 0) pause = Math.min(pause, (rows * 1000) / minRowsPerSecond - tookMillis);
  // The cap last: the floor never takes the purge over it.
  if (maxRowsPerSecond > 0) pause = Math.max(pause, (rows * 1000) / maxRowsPerSecond - tookMillis);
  return Math.max(0, pause);
}

export interface PurgeObserver {
  /** Called after every batch that deleted rows. */
  purged?(kind: string, rows: number): void;
  failed?(error: unknown): void;
}

/** Waits `ms`, or less when `signal` aborts first. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Deletes what can no longer matter: expired codes, refresh tokens, sessions, revocation records,
 * throttle windows and initial access tokens, grants whose tokens are all dead, and anonymous clients
 * never used (operations floor: the store never needs a hand-run janitor). Safe to run in every
 * process at once: the store guarantees that concurrent purgers never pick the same rows.
 */
export class Purger {
  /** The size of the next batch, adapted to how long batches take on this store (see PurgePacing). */
  private size: number;

  constructor(
    private readonly store: PurgeStore,
    private readonly clock: Clock,
    private readonly policy: PurgePolicy,
    private readonly observer: PurgeObserver = {},
    /** Times each batch; the purge's own time by default (tests give a manual one). */
    private readonly stopwatch: () => number = ownTimeMillis,
  ) {
    this.size = policy.batchSize;
  }

  cutoffs(): PurgeCutoffs {
    const now = this.clock.now();
    return {
      now,
      revokedAccessTokensExpiredBefore: now - CLOCK_SKEW_SECONDS,
      grantsRevokedBefore: now - this.policy.accessTokenTtl - CLOCK_SKEW_SECONDS,
      unusedOpenClientsRegisteredBefore:
        (this.policy.unusedOpenClientSeconds ?? 0) > 0
          ? now - (this.policy.unusedOpenClientSeconds ?? 0)
          : null,
      auditEventsBefore:
        (this.policy.auditRetentionSeconds ?? 0) > 0 ? now - (this.policy.auditRetentionSeconds ?? 0) : null,
      metricSamplesBefore: now - METRIC_SAMPLE_RETENTION_SECONDS,
    };
  }

  /**
   * How many dead records of each kind wait for the purge now, each count stopped at `limit` (the
   * dashboard's purge backlog, decision 43).
   */
  async backlog(limit: number): Promise<Record<string, number>> {
    const cutoffs = this.cutoffs();
    const counts = await Promise.all(
      this.store.kinds.map((kind) => this.store.backlog(kind, cutoffs, limit)),
    );
    return Object.fromEntries(this.store.kinds.map((kind, i) => [kind, counts[i] ?? 0]));
  }

  /**
   * One pass over every kind of record, in the store's order (children before parents), until each
   * has no dead records left. Returns records deleted per kind. An aborted `signal` ends the pass after the batch
   * in progress (the scheduler's stop); the next pass carries on.
   */
  async runOnce(signal?: AbortSignal): Promise<Record<string, number>> {
    const deleted: Record<string, number> = {};
    for (const kind of this.store.kinds) deleted[kind] = 0;
    for (const kind of this.store.kinds) {
      for (;;) {
        if (signal?.aborted) return deleted;
        const size = this.size;
        const started = this.stopwatch();
        // Fresh cutoffs per batch: a long run must not delete by a stale clock reading either way.
        const rows = await this.store.purgeBatch(kind, this.cutoffs(), size);
        const took = this.stopwatch() - started;
        this.adapt(took);
        deleted[kind] = (deleted[kind] ?? 0) + rows;
        if (rows > 0) this.observer.purged?.(kind, rows);
        if (rows < size) break;
        const wait = pauseAfterBatch(this.policy, rows, took);
        if (wait > 0) await pause(wait, signal);
      }
    }
    return deleted;
  }

  private adapt(tookMillis: number): void {
    const target = this.store.batchMillis;
    if (tookMillis > target) this.size = Math.max(SMALLEST_BATCH, Math.floor(this.size / 2));
    else if (tookMillis < target / 2) this.size = Math.min(this.policy.batchSize, Math.ceil(this.size * 1.5));
  }

  /** Runs until a pass deletes nothing (or `maxRuns` passes). For operators and tests. */
  async runUntilClean(maxRuns = 1000): Promise<Record<string, number>> {
    const total: Record<string, number> = {};
    for (let run = 0; run < maxRuns; run++) {
      const deleted = await this.runOnce();
      let any = 0;
      for (const [kind, rows] of Object.entries(deleted)) {
        total[kind] = (total[kind] ?? 0) + rows;
        any += rows;
      }
      if (any === 0) break;
    }
    return total;
  }
}

export interface PurgeSchedule {
  intervalSeconds: number;
  /** Each wait is the interval plus up to this fraction of it, so processes started together drift apart. */
  jitter?: number;
}

/**
 * Runs a purger every interval on an unref'd timer: it never keeps the process alive, never overlaps
 * itself, and `stop()` ends a run in progress after its current batch and waits for it, so the store
 * can be closed right after (a run working through a backlog would otherwise hold a shutdown until
 * the backlog is gone).
 */
export class PurgeScheduler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private abort: AbortController | undefined;
  private stopped = true;

  constructor(
    private readonly purger: Purger,
    private readonly schedule: PurgeSchedule,
    private readonly observer: PurgeObserver = {},
  ) {}

  start(): void {
    if (this.schedule.intervalSeconds <= 0 || !this.stopped) return;
    this.stopped = false;
    this.arm();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.abort?.abort();
    await this.running;
  }

  private arm(): void {
    if (this.stopped) return;
    const jitter = this.schedule.jitter ?? 0.2;
    const delayMs = this.schedule.intervalSeconds * 1000 * (1 + Math.random() * jitter);
    this.timer = setTimeout(() => this.tick(), delayMs);
    this.timer.unref();
  }

  private tick(): void {
    this.timer = undefined;
    const abort = new AbortController();
    this.abort = abort;
    this.running = this.purger
      .runOnce(abort.signal)
      .catch((error: unknown) => this.observer.failed?.(error))
      .finally(() => {
        this.running = undefined;
        this.abort = undefined;
        this.arm();
      });
  }
}
