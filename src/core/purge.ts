import type { Clock } from '../shared/clock.js';
import type { PurgeCutoffs, PurgeStore } from './ports.js';

export interface PurgePolicy {
  /** Most rows deleted per statement: small, so no statement holds locks (or SQLite's writer) for long. */
  batchSize: number;
  /**
   * The longest an access token can live. A revoked grant is kept this long (plus a margin) after its
   * revocation, so that every token issued under it has expired before its record goes.
   */
  accessTokenTtl: number;
  /** Revoked access-token ids are kept this long past their expiry, for resource servers with clock leeway. */
  clockSkewSeconds: number;
  /**
   * How long one statement should take. A batch that took longer halves the next one, one that took
   * under half of it grows the next by half (up to `batchSize`): on SQLite a statement holds the one
   * write lock while it runs, so its length is what a writing request may have to wait behind it.
   */
  targetBatchMillis: number;
  /**
   * The share of time a purge working through a backlog spends deleting (by the store's own measure:
   * on SQLite the purge process's CPU time, its checkpoints included); between batches it pauses for
   * the rest, so requests get the store 19 times out of 20. At a tenth, the purge bench's probe p99
   * rose 1.4-2.2 x on SQLite; a million rows still go in about a minute at a twentieth.
   */
  dutyCycle: number;
  /**
   * The most rows a second this process deletes (0: no cap). The duty cycle bounds the purge's share
   * of time, not its rows: on a fast machine a twentieth of the time deleted 38,000 rows a second on
   * SQLite and 14,000 on PostgreSQL, and the requests beside it ran slower for the work each row
   * makes (pages evicted from the core's caches, the log written, the database's own CPU). The cap
   * spaces batches out by the rows they deleted.
   */
  maxRowsPerSecond: number;
  /**
   * The fewest rows a second a run working through a backlog deletes, as far as the store and the CPU
   * allow (capped by `maxRowsPerSecond`). The duty cycle and the batch target pace the purge by how
   * long its statements take, and on a saturated machine every statement looks slow: batches shrank
   * to 10 rows and the pauses grew, 10 rows a second beside two busy loops, while a busy server makes
   * dead rows faster than that. Below this pace the purge stops pausing and stops shrinking batches
   * until it has caught up; the priority it runs at (nice 19) still puts requests first.
   */
  minRowsPerSecond: number;
  /**
   * The longest pause between batches. One slow batch (a cold cache, a wait for another writer, a
   * background thread that yields to requests) shrinks the next; at 19 x its time, the pause after a
   * 0.7 s first batch idled the purge for 13 s. The duty cycle bounds the share over many batches.
   */
  maxPauseMillis: number;
  /** A run ends after this long; the next run carries on where it stopped. */
  maxRunMillis: number;
}

export const DEFAULT_PURGE_POLICY: Omit<PurgePolicy, 'accessTokenTtl'> = {
  batchSize: 500,
  clockSkewSeconds: 300,
  targetBatchMillis: 1,
  dutyCycle: 0.05,
  maxPauseMillis: 1000,
  maxRunMillis: 20_000,
  maxRowsPerSecond: 0,
  minRowsPerSecond: 1000,
};

/**
 * On PostgreSQL a statement waits on a socket, not on this event loop, and its floor is the round trip
 * (about 1 ms here; a 500-row batch takes 3-4 ms). The 1 ms target kept every batch at 10 rows there:
 * the purge-pg bench deleted 742 rows a second, fewer than a busy server makes; at 5 ms, 8,400-9,200,
 * with the probe's p99 unchanged (11-12 ms either way). Batches still shrink when the database is slow,
 * and the duty cycle still bounds the share of a connection, and of the database, the purge takes.
 */
export const POSTGRES_PURGE_PACING: Pick<PurgePolicy, 'targetBatchMillis'> = { targetBatchMillis: 5 };

const SMALLEST_BATCH = 10;

export interface PurgeObserver {
  /** Called after every batch that deleted rows. */
  purged?(table: string, rows: number): void;
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
 * Deletes what can no longer matter: expired codes, refresh tokens, sessions, revocation records and
 * throttle windows, and grants whose tokens are all dead (operations floor: the store never needs a
 * hand-run janitor). Safe to run in every process at once: the store guarantees that concurrent
 * purgers never pick the same rows.
 */
export class Purger {
  /** The size of the next batch, adapted to how long batches take on this store (see targetBatchMillis). */
  private size: number;
  /** Whether the last run stopped at its time limit with dead rows left (the scheduler comes back soon). */
  backlog = false;

  constructor(
    private readonly store: PurgeStore,
    private readonly clock: Clock,
    private readonly policy: PurgePolicy,
    private readonly observer: PurgeObserver = {},
  ) {
    this.size = policy.batchSize;
  }

  cutoffs(): PurgeCutoffs {
    const now = this.clock.now();
    return {
      now,
      revokedAccessTokensExpiredBefore: now - this.policy.clockSkewSeconds,
      grantsRevokedBefore: now - this.policy.accessTokenTtl - this.policy.clockSkewSeconds,
    };
  }

  /**
   * One pass over every table, in the store's order (children before parents). Returns rows deleted per
   * table. An aborted `signal` ends the pass after the batch in progress (the scheduler's stop), leaving
   * `backlog` set so the next run carries on.
   */
  async runOnce(signal?: AbortSignal): Promise<Record<string, number>> {
    const { dutyCycle, maxPauseMillis, maxRunMillis, maxRowsPerSecond } = this.policy;
    const floor =
      maxRowsPerSecond > 0
        ? Math.min(this.policy.minRowsPerSecond, maxRowsPerSecond)
        : this.policy.minRowsPerSecond;
    const started = performance.now();
    const deadline = started + maxRunMillis;
    let rowsInRun = 0;
    const deleted: Record<string, number> = {};
    for (const table of this.store.tables) deleted[table] = 0;
    this.backlog = false;
    for (const table of this.store.tables) {
      for (;;) {
        if (signal?.aborted) {
          this.backlog = true;
          return deleted;
        }
        const size = this.size;
        // Fresh cutoffs per batch: a long run must not delete by a stale clock reading either way.
        const {
          rows,
          millis: took,
          otherMillis = 0,
        } = await this.store.purgeBatch(table, this.cutoffs(), size);
        const behind = floor > 0 && rowsInRun + rows < ((performance.now() - started) / 1000) * floor;
        if (behind) this.size = Math.min(this.policy.batchSize, Math.ceil(this.size * 1.5));
        else this.adapt(took);
        deleted[table] = (deleted[table] ?? 0) + rows;
        if (rows > 0) this.observer.purged?.(table, rows);
        if (rows < size) break;
        if (performance.now() >= deadline) {
          this.backlog = true;
          return deleted;
        }
        rowsInRun += rows;
        let wait =
          dutyCycle < 1 && !behind
            ? Math.min(maxPauseMillis, ((took + otherMillis) * (1 - dutyCycle)) / dutyCycle)
            : 0;
        // The cap over the whole run: the next batch starts no sooner than the rows so far allow.
        if (maxRowsPerSecond > 0)
          wait = Math.max(wait, started + (rowsInRun * 1000) / maxRowsPerSecond - performance.now());
        if (wait > 0) await pause(wait, signal);
      }
    }
    return deleted;
  }

  private adapt(tookMillis: number): void {
    const { targetBatchMillis, batchSize } = this.policy;
    if (tookMillis > targetBatchMillis) this.size = Math.max(SMALLEST_BATCH, Math.floor(this.size / 2));
    else if (tookMillis < targetBatchMillis / 2) this.size = Math.min(batchSize, Math.ceil(this.size * 1.5));
  }

  /** Runs until a pass deletes nothing (or `maxRuns` passes). For operators and tests. */
  async runUntilClean(maxRuns = 1000): Promise<Record<string, number>> {
    const total: Record<string, number> = {};
    for (let run = 0; run < maxRuns; run++) {
      const deleted = await this.runOnce();
      let any = 0;
      for (const [table, rows] of Object.entries(deleted)) {
        total[table] = (total[table] ?? 0) + rows;
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
 * can be closed right after (a run working through a backlog would otherwise hold a shutdown for up
 * to `maxRunMillis`).
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
    // A run cut short by its time limit left a backlog: the next one starts after a breath, not an interval.
    const intervalMs = this.purger.backlog
      ? Math.min(1000, this.schedule.intervalSeconds * 1000)
      : this.schedule.intervalSeconds * 1000;
    const delayMs = intervalMs * (1 + Math.random() * jitter);
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
