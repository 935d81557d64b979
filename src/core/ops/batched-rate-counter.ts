import type { RateLimitStore } from '../ports.js';

interface CounterState {
  windowStart: number;
  /** The total across every process, as of this process's last flush. */
  shared: number;
  /** Counted here and not yet sent to the store. */
  pending: number;
  /** Sent to the store, answer not yet back. */
  inflight: number;
}

export interface BatchedRateCounterOptions {
  store: RateLimitStore;
  windowSeconds: number;
  /** How often local counts are merged into the store. */
  flushIntervalMs: number;
  onError?: (error: unknown) => void;
}

/**
 * Fixed-window request counters shared by every process through the store, without a store
 * round-trip on the request path: each process counts locally and merges its counts into the store
 * every `flushIntervalMs`, learning the other processes' counts in the same statement. A single
 * process is exact; across processes a limit may be overshot by what the others counted since their
 * last merge (at most one interval's worth of traffic).
 */
export class BatchedRateCounter {
  private readonly counters = new Map<string, CounterState>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private stopped = false;
  private lastNow = 0;

  constructor(private readonly options: BatchedRateCounterOptions) {}

  /** Counts one request for `key` at `now`; returns the count in this window and when it ends. */
  hit(key: string, now: number): { count: number; resetAt: number } {
    const { windowSeconds } = this.options;
    this.lastNow = Math.max(this.lastNow, now);
    const windowStart = Math.floor(now / windowSeconds) * windowSeconds;
    let state = this.counters.get(key);
    if (state === undefined || state.windowStart !== windowStart) {
      state = { windowStart, shared: 0, pending: 0, inflight: 0 };
      this.counters.set(key, state);
    }
    state.pending += 1;
    this.schedule();
    return { count: state.shared + state.inflight + state.pending, resetAt: windowStart + windowSeconds };
  }

  /** Sends every local count to the store now (also used on shutdown). */
  async flush(): Promise<void> {
    while (this.flushing !== undefined) await this.flushing;
    this.flushing = this.flushOnce().finally(() => {
      this.flushing = undefined;
    });
    await this.flushing;
  }

  /**
   * No more background merges, for good: neither a new count nor a failed flush arms the timer again,
   * so nothing reaches the store after its owner has closed it. `flush()` still sends what is left.
   */
  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.timer !== undefined || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush().catch((error: unknown) => this.options.onError?.(error));
    }, this.options.flushIntervalMs);
    this.timer.unref();
  }

  private async flushOnce(): Promise<void> {
    const { windowSeconds } = this.options;
    const batch: { key: string; delta: number; resetAt: number; state: CounterState }[] = [];
    const nowWindow = Math.floor(this.lastNow / windowSeconds) * windowSeconds;
    for (const [key, state] of this.counters) {
      if (state.windowStart + windowSeconds <= nowWindow) {
        // A window that has ended: send what is left of it, then forget it.
        if (state.pending === 0) {
          if (state.inflight === 0) this.counters.delete(key);
          continue;
        }
      }
      // Keys of the current window with nothing new still go out (delta 0) to learn the other
      // processes' counts.
      batch.push({
        key: `${key}@${state.windowStart}`,
        delta: state.pending,
        resetAt: state.windowStart + windowSeconds,
        state,
      });
      state.inflight += state.pending;
      state.pending = 0;
    }
    if (batch.length === 0) return;
    try {
      const totals = new Map(
        (await this.options.store.add(batch.map(({ key, delta, resetAt }) => ({ key, delta, resetAt })))).map(
          (row) => [row.key, row.count],
        ),
      );
      for (const entry of batch) {
        entry.state.inflight -= entry.delta;
        entry.state.shared = totals.get(entry.key) ?? entry.state.shared + entry.delta;
      }
    } catch (error) {
      // Keep the counts: they go out with the next flush.
      for (const entry of batch) {
        entry.state.inflight -= entry.delta;
        entry.state.pending += entry.delta;
      }
      this.schedule();
      throw error;
    }
  }
}
