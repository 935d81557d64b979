import type { Clock } from '../shared/clock.js';
import type { PurgeCutoffs, PurgeStore } from './ports.js';

export interface PurgePolicy {
  /** Rows deleted per statement: small, so no statement holds locks (or SQLite's writer) for long. */
  batchSize: number;
  /**
   * The longest an access token can live. A revoked grant is kept this long (plus a margin) after its
   * revocation, so that every token issued under it has expired before its record goes.
   */
  accessTokenTtl: number;
  /** Revoked access-token ids are kept this long past their expiry, for resource servers with clock leeway. */
  clockSkewSeconds: number;
  /** Upper bound on batches per table per run, so one run never monopolises the store. */
  maxBatchesPerRun: number;
  /** Pause between batches, so requests get the store (and, on SQLite, the event loop) in between. */
  pauseBetweenBatchesMs: number;
}

export const DEFAULT_PURGE_POLICY: Omit<PurgePolicy, 'accessTokenTtl'> = {
  batchSize: 500,
  clockSkewSeconds: 300,
  maxBatchesPerRun: 200,
  pauseBetweenBatchesMs: 10,
};

export interface PurgeObserver {
  /** Called after every batch that deleted rows. */
  purged?(table: string, rows: number): void;
  failed?(error: unknown): void;
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Deletes what can no longer matter: expired codes, refresh tokens, sessions, revocation records and
 * throttle windows, and grants whose tokens are all dead (operations floor: the store never needs a
 * hand-run janitor). Safe to run in every process at once: the store guarantees that concurrent
 * purgers never pick the same rows.
 */
export class Purger {
  constructor(
    private readonly store: PurgeStore,
    private readonly clock: Clock,
    private readonly policy: PurgePolicy,
    private readonly observer: PurgeObserver = {},
  ) {}

  cutoffs(): PurgeCutoffs {
    const now = this.clock.now();
    return {
      now,
      revokedAccessTokensExpiredBefore: now - this.policy.clockSkewSeconds,
      grantsRevokedBefore: now - this.policy.accessTokenTtl - this.policy.clockSkewSeconds,
    };
  }

  /** One pass over every table, in the store's order (children before parents). Returns rows deleted per table. */
  async runOnce(): Promise<Record<string, number>> {
    const deleted: Record<string, number> = {};
    for (const table of this.store.tables) {
      deleted[table] = 0;
      for (let batch = 0; batch < this.policy.maxBatchesPerRun; batch++) {
        // Fresh cutoffs per batch: a long run must not delete by a stale clock reading either way.
        const rows = await this.store.purgeBatch(table, this.cutoffs(), this.policy.batchSize);
        deleted[table] += rows;
        if (rows > 0) this.observer.purged?.(table, rows);
        if (rows < this.policy.batchSize) break;
        if (this.policy.pauseBetweenBatchesMs > 0) await pause(this.policy.pauseBetweenBatchesMs);
      }
    }
    return deleted;
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
 * itself, and `stop()` waits for a run in progress so the store can be closed after it.
 */
export class PurgeScheduler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
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
    this.running = this.purger
      .runOnce()
      .catch((error: unknown) => this.observer.failed?.(error))
      .finally(() => {
        this.running = undefined;
        this.arm();
      });
  }
}
