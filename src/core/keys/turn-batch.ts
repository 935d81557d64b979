/**
 * Runs work queued during one turn of the event loop together, one piece after the other, once that
 * turn's I/O callbacks are done (setImmediate). Under load one turn reads many requests; signing their
 * tokens back to back keeps OpenSSL's tables and code in the CPU's caches, where a signature made
 * between two requests' parsing, logging and TLS finds them evicted, and evicts theirs in turn
 * (docs/decisions.md, decision 28; docs/benchmarks.md, History). Introspection makes its answers in
 * one too, so that a turn's answers are written back to back and their reader is woken once for them
 * all. A lone request waits only for the end of its own turn.
 */
export class TurnBatch {
  private queue: (() => void)[] = [];
  private scheduled = false;

  /** `schedule` runs its callback once the current turn's I/O is done; setImmediate but in tests. */
  constructor(private readonly schedule: (flush: () => void) => void = (flush) => setImmediate(flush)) {}

  /** `work`'s result, or its error, once the batch it joined has run. */
  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push(() => {
        try {
          resolve(work());
        } catch (error) {
          reject(error as Error);
        }
      });
      if (!this.scheduled) {
        this.scheduled = true;
        this.schedule(this.flush);
      }
    });
  }

  /** Work queued while this runs (by code its results resume) waits for the next batch. */
  private readonly flush = (): void => {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    for (const item of batch) item();
  };
}
