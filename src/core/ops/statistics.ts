import type { Clock } from '../../shared/clock.js';
import type { BrowserSessionStore, MetricSampleStore, SigningKeyStore } from '../ports.js';
import type { SigningKeyRecord } from '../model.js';
import { minuteOf, summarize, SUMMARY_MINUTES, type FigureSummary } from './figures.js';

/** Rows counted at most, per purge kind and for live sessions: a bounded count, never a whole table. */
export const COUNT_LIMIT = 10_000;

/**
 * Samples read at most: an hour of every series' labels from dozens of processes. Beyond it the
 * oldest minutes are complete and the latest short (the read is in minute order).
 */
const SAMPLE_LIMIT = 50_000;

/** The certificate this process serves (read from the PEM it was given), when it serves TLS itself. */
export interface ServedCertificate {
  subject: string;
  notAfter: number;
}

export interface StatisticsSources {
  clock: Clock;
  samples: MetricSampleStore;
  sessions: Pick<BrowserSessionStore, 'countLive'>;
  signingKeys: Pick<SigningKeyStore, 'list'>;
  /** The store's migrations not applied (StoreLifecycle.pendingMigrations). */
  pendingMigrations(): Promise<string[]>;
  /** Dead records waiting per purge kind, each count stopped at the limit (Purger.backlog). */
  purgeBacklog(limit: number): Promise<Record<string, number>>;
  /** Undefined when a proxy terminates TLS. */
  certificate: ServedCertificate | undefined;
  /**
   * Writes what the answering process counted so far (FigureRecorder.flush), so that its own figures
   * are current; the other processes' are as of their last flush.
   */
  flushOwn?: () => Promise<void>;
}

/** The last hour's figures and the state of things (decision 43), as /v1/statistics answers them. */
export interface StatisticsReport {
  at: number;
  figures: FigureSummary;
  activeSessions: number;
  signingKeys: SigningKeyRecord[];
  pendingMigrations: string[];
  certificate: ServedCertificate | undefined;
  purgeBacklog: Record<string, number>;
  countLimit: number;
}

/** Reads the dashboard's figures of every process and the state of the deployment (decision 43). */
export class Statistics {
  constructor(private readonly sources: StatisticsSources) {}

  async read(): Promise<StatisticsReport> {
    const { clock } = this.sources;
    const at = clock.now();
    const from = minuteOf(at) - (SUMMARY_MINUTES - 1) * 60;
    await this.sources.flushOwn?.();
    const [samples, activeSessions, signingKeys, pendingMigrations, purgeBacklog] = await Promise.all([
      this.sources.samples.since(from, SAMPLE_LIMIT),
      this.sources.sessions.countLive(at, COUNT_LIMIT),
      this.sources.signingKeys.list(),
      this.sources.pendingMigrations(),
      this.sources.purgeBacklog(COUNT_LIMIT),
    ]);
    return {
      at,
      figures: summarize(samples, at),
      activeSessions,
      signingKeys,
      pendingMigrations,
      certificate: this.sources.certificate,
      purgeBacklog,
      countLimit: COUNT_LIMIT,
    };
  }
}
