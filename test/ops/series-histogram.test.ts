import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AggregatorRegistry, Histogram, Registry } from 'prom-client';
import { SeriesHistogram } from '../../src/http/series-histogram.js';

const NAME = 'test_request_duration_seconds';
const HELP = 'Time per request, by route and method';
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** Values on, between, below and above the bounds, a few per series. */
const OBSERVATIONS: [Record<string, string>, number][] = [
  [{ route: '/token', method: 'POST' }, 0.0004],
  [{ route: '/token', method: 'POST' }, 0.001],
  [{ route: '/token', method: 'POST' }, 0.0031],
  [{ route: '/jwks', method: 'GET' }, 7.5],
  [{ route: '/token', method: 'POST' }, 0.25],
  [{ route: '/jwks', method: 'GET' }, 0.02],
  [{ route: 'unmatched', method: 'GET' }, 0],
];

function both() {
  const reference = new Registry();
  const ours = new Registry();
  const histogram = new Histogram({
    name: NAME,
    help: HELP,
    labelNames: ['route', 'method'],
    buckets: BUCKETS,
    registers: [reference],
  });
  const series = new SeriesHistogram(NAME, HELP, BUCKETS, ours);
  const observe = (labels: Record<string, string>, value: number) => {
    histogram.observe(labels, value);
    series.series(labels)(value);
  };
  return { reference, ours, observe };
}

/** prom-client's JSON without its exemplar fields, which a histogram without exemplars leaves empty. */
async function json(registry: Registry) {
  return (await registry.getMetricsAsJSON()).map((metric) => ({
    ...metric,
    values: metric.values.map(({ value, labels, metricName }: Record<string, unknown>) => ({
      value,
      labels,
      metricName,
    })),
  }));
}

describe('SeriesHistogram, scraped as prom-client scrapes its own Histogram', () => {
  it('gives the same text, line for line, and the same JSON', async () => {
    const { reference, ours, observe } = both();
    for (const [labels, value] of OBSERVATIONS) observe(labels, value);
    assert.equal(await ours.metrics(), await reference.metrics());
    assert.deepEqual(await json(ours), await json(reference));
  });

  it('aggregates across workers like prom-client (the --workers /metrics)', async () => {
    const { reference, ours, observe } = both();
    for (const [labels, value] of OBSERVATIONS) observe(labels, value);
    const fromWorkers = async (registry: Registry) => {
      const one = await registry.getMetricsAsJSON();
      return AggregatorRegistry.aggregate([one, one]).metrics();
    };
    assert.equal(await fromWorkers(ours), await fromWorkers(reference));
  });

  it('is emptied by the registry reset, and counts again from zero', async () => {
    const { reference, ours, observe } = both();
    for (const [labels, value] of OBSERVATIONS) observe(labels, value);
    reference.resetMetrics();
    ours.resetMetrics();
    assert.equal(await ours.metrics(), await reference.metrics());
    observe({ route: '/token', method: 'POST' }, 0.002);
    assert.equal(await ours.metrics(), await reference.metrics());
    assert.match(await ours.metrics(), /_count\{route="\/token",method="POST"\} 1$/m);
  });
});
