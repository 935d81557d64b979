import type { Histogram, Registry } from 'prom-client';

type Labels = Readonly<Record<string, string>>;

/** One label set's counts: per bucket (not cumulative), and the sum and count of what was observed. */
interface Series {
  labels: Labels;
  buckets: number[];
  sum: number;
  count: number;
}

/** One line, as prom-client's metrics give them to its Registry. */
interface LineValue {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
}

/** A line as getForPromString gives it: `labels` of the line itself, `sharedLabels` of its series. */
interface ExportedValue extends LineValue {
  sharedLabels: Labels;
}

/** A metric as prom-client's get() and getForPromString() answer it. */
interface ExportedMetric<V> {
  name: string;
  help: string;
  type: 'histogram';
  values: V[];
  aggregator: 'sum';
}

/**
 * A Prometheus histogram whose label sets are resolved once (series(labels)) and whose observation is
 * then a walk along the bucket bounds and three additions. prom-client's Histogram hashes and checks
 * the labels on every observation, even through a child from labels(), which showed in the token
 * endpoint's CPU profile. Registered in a prom-client Registry, it is scraped, reset and aggregated
 * across workers like prom-client's own: get() and getForPromString() answer in its format (the
 * series-histogram test holds the text to prom-client's, line for line).
 */
export class SeriesHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly all = new Map<string, Series>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly upperBounds: readonly number[],
    registry: Registry,
  ) {
    // The Registry keeps any object with this shape; its type names only prom-client's classes.
    registry.registerMetric(this as unknown as Histogram);
  }

  /** The observe function of one label set (label values never contain a NUL). */
  series(labels: Labels): (value: number) => void {
    const key = Object.values(labels).join('\u0000');
    let series = this.all.get(key);
    if (series === undefined) {
      series = { labels, buckets: this.upperBounds.map(() => 0), sum: 0, count: 0 };
      this.all.set(key, series);
    }
    const target = series;
    const bounds = this.upperBounds;
    return (value: number) => {
      if (!Number.isFinite(value)) return;
      // Above the last bound: only +Inf (the count), as prom-client does.
      for (let i = 0; i < bounds.length; i++) {
        if (value <= (bounds[i] as number)) {
          target.buckets[i] = (target.buckets[i] as number) + 1;
          break;
        }
      }
      target.sum += value;
      target.count += 1;
    };
  }

  reset(): void {
    for (const series of this.all.values()) {
      series.buckets.fill(0);
      series.sum = 0;
      series.count = 0;
    }
  }

  /** What the Registry formats as text: bucket lines (cumulative), +Inf, _sum, _count per series. */
  async getForPromString(): Promise<ExportedMetric<ExportedValue>> {
    const values: ExportedValue[] = [];
    for (const series of this.all.values()) {
      if (series.count === 0) continue;
      let cumulative = 0;
      this.upperBounds.forEach((bound, i) => {
        cumulative += series.buckets[i] as number;
        values.push(this.value({ le: bound }, cumulative, '_bucket', series.labels));
      });
      values.push(
        this.value({ le: '+Inf' }, series.count, '_bucket', series.labels),
        this.value({}, series.sum, '_sum', series.labels),
        this.value({}, series.count, '_count', series.labels),
      );
    }
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      values,
      aggregator: this.aggregator,
    };
  }

  /** getForPromString with each line's labels merged (the JSON the cluster aggregation reads). */
  async get(): Promise<ExportedMetric<LineValue>> {
    const data = await this.getForPromString();
    return {
      ...data,
      values: data.values.map(({ sharedLabels, labels, ...rest }) => ({
        ...rest,
        labels: { ...labels, ...sharedLabels },
      })),
    };
  }

  private value(
    labels: Record<string, string | number>,
    value: number,
    suffix: string,
    sharedLabels: Labels,
  ): ExportedValue {
    return { labels, sharedLabels, value, metricName: `${this.name}${suffix}` };
  }
}
