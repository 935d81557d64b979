import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  bucketQuantile,
  FigureRecorder,
  LATENCY_BUCKETS,
  minuteOf,
  OTHER_LABEL,
  summarize,
} from '../../src/core/ops/figures.js';
import { Statistics } from '../../src/core/ops/statistics.js';
import type { MetricSample, MetricSampleStore } from '../../src/core/ports.js';
import { ManualClock } from '../../src/shared/clock.js';
import { memoryStorage } from '../helpers/fakes/memory-storage.js';

/** The start of a minute, so that `NOW + s` for s < 60 stays in it. */
const NOW = 1_800_000_000 - (1_800_000_000 % 60);

/** Counts for LATENCY_BUCKETS' buckets and the unbounded one, all zero but those given. */
function buckets(given: Record<number, number>): number[] {
  const counts = new Array<number>(LATENCY_BUCKETS.length + 1).fill(0);
  for (const [i, n] of Object.entries(given)) counts[Number(i)] = n;
  return counts;
}

describe('dashboard figures: latency quantiles from buckets (decision 43)', () => {
  // LATENCY_BUCKETS: 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, then +Inf.
  const cases: { name: string; counts: number[]; q: number; expected: number | null }[] = [
    { name: 'no requests', counts: buckets({}), q: 0.5, expected: null },
    // 100 in (0.005, 0.01]: the median is halfway through the bucket.
    { name: 'one bucket, median', counts: buckets({ 3: 100 }), q: 0.5, expected: 0.0075 },
    { name: 'one bucket, p99', counts: buckets({ 3: 100 }), q: 0.99, expected: 0.00995 },
    // The first bucket starts at zero.
    { name: 'first bucket', counts: buckets({ 0: 10 }), q: 0.5, expected: 0.0005 },
    // 90 fast and 10 slow: the median among the fast, p99 among the slow ones.
    {
      name: 'two buckets, median',
      counts: buckets({ 2: 90, 8: 10 }),
      q: 0.5,
      expected: 0.0025 + 0.0025 * (50 / 90),
    },
    {
      name: 'two buckets, p99',
      counts: buckets({ 2: 90, 8: 10 }),
      q: 0.99,
      expected: 0.25 + 0.25 * (9 / 10),
    },
    // Past the last bound: the last bound is all a histogram can say.
    { name: 'unbounded bucket', counts: buckets({ 12: 5 }), q: 0.99, expected: 5 },
  ];
  for (const { name, counts, q, expected } of cases) {
    it(name, () => {
      const got = bucketQuantile(LATENCY_BUCKETS, counts, q);
      if (expected === null) assert.equal(got, null);
      else assert.ok(got !== null && Math.abs(got - expected) < 1e-12, `${got} ≠ ${expected}`);
    });
  }

  it('merges the buckets of several processes before taking the quantile, not the quantiles', () => {
    // One process all fast, one all slow: the median of the merged buckets sits at their boundary,
    // where averaging each process's median would give a latency no request had.
    const summary = summarize(
      [
        { processId: 'a', minute: NOW, series: 'latency', label: '0.001', value: 60 },
        { processId: 'b', minute: NOW, series: 'latency', label: '1', value: 40 },
      ],
      NOW,
    );
    assert.equal(summary.requests.at(-1), 100);
    // Rank 50 of 60 in (0, 1 ms]: 50/60 of a millisecond.
    assert.equal(summary.latencyMs.p50.at(-1), Math.round((50 / 60) * 100) / 100);
    // Rank 99 is the 39th of 40 in (0.5 s, 1 s].
    assert.equal(summary.latencyMs.p99.at(-1), 500 + Math.round(500 * (39 / 40) * 100) / 100);
  });
});

describe('dashboard figures: summing processes per minute', () => {
  const sample = (processId: string, ago: number, series: string, label: string, value: number) => ({
    processId,
    minute: NOW - ago * 60,
    series,
    label,
    value,
  });

  it('sums every process per minute and label, oldest minute first, the current one last', () => {
    const summary = summarize(
      [
        sample('a', 0, 'token_responses', 'client_credentials', 3),
        sample('b', 0, 'token_responses', 'client_credentials', 4),
        sample('b', 0, 'token_responses', 'authorization_code', 1),
        sample('a', 2, 'sign_ins', '', 2),
        sample('b', 2, 'sign_ins', '', 5),
        sample('a', 59, 'errors', 'invalid_grant', 1),
        // Outside the hour, or a series this version does not know: left out.
        sample('c', 60, 'errors', 'invalid_grant', 100),
        sample('a', 0, 'a_later_series', 'x', 9),
      ],
      NOW + 30,
    );
    assert.equal(summary.minutes.length, 60);
    assert.equal(summary.minutes.at(-1), NOW);
    assert.equal(summary.minutes[0], NOW - 59 * 60);
    assert.equal(summary.processes, 2);
    assert.equal(summary.counts.token_responses['client_credentials']?.at(-1), 7);
    assert.equal(summary.counts.token_responses['authorization_code']?.at(-1), 1);
    assert.equal(summary.counts.sign_ins['']?.at(-3), 7);
    assert.deepEqual(summary.counts.errors['invalid_grant']?.slice(0, 2), [1, 0]);
    assert.equal(
      summary.counts.errors['invalid_grant']?.reduce((a, b) => a + b),
      1,
      'the sample an hour old is not in',
    );
    assert.deepEqual(summary.counts.lockouts, {});
    assert.ok(summary.latencyMs.p50.every((value) => value === null));
  });
});

/** A store whose writes can be made to fail, recording what reached it. */
function flakyStore(): {
  store: MetricSampleStore;
  written: MetricSample[];
  failNext: () => void;
} {
  const written: MetricSample[] = [];
  let fail = false;
  return {
    written,
    failNext: () => (fail = true),
    store: {
      async add(samples) {
        if (fail) {
          fail = false;
          throw new Error('store unavailable');
        }
        written.push(...samples);
      },
      async since() {
        return written;
      },
    },
  };
}

describe('dashboard figures: the live sessions, a level read once a minute', () => {
  it('reads the level at the first flush of each minute only, even with nothing counted', async () => {
    const clock = new ManualClock(NOW + 10);
    const { store, written } = flakyStore();
    let live = 7;
    let reads = 0;
    const recorder = new FigureRecorder(store, clock, 'p1', async () => {
      reads++;
      return live;
    });
    await recorder.flush();
    await recorder.flush();
    live = 9;
    clock.advance(60);
    await recorder.flush();
    const by = (s: MetricSample) => `${s.minute - NOW} ${s.series}=${s.value}`;
    assert.deepEqual(written.map(by), ['0 active_sessions=7', '60 active_sessions=9']);
    assert.equal(reads, 2);
  });

  it('two flushes at once (the timer and a read of /v1/statistics) write the reading once', async () => {
    const clock = new ManualClock(NOW + 10);
    const { store, written } = flakyStore();
    const recorder = new FigureRecorder(store, clock, 'p1', async () => 7);
    recorder.count('token_responses', 'client_credentials');
    await Promise.all([recorder.flush(), recorder.flush(), recorder.flush()]);
    const by = (s: MetricSample) => `${s.minute - NOW} ${s.series} ${s.label}=${s.value}`;
    assert.deepEqual(written.map(by).sort(), [
      '0 active_sessions =7',
      '0 token_responses client_credentials=1',
    ]);
  });

  it('takes the highest reading of a minute across processes, never their sum; null where none read', () => {
    const sample = (processId: string, minute: number, value: number): MetricSample => ({
      processId,
      minute,
      series: 'active_sessions',
      label: '',
      value,
    });
    const summary = summarize(
      [sample('a', NOW, 5), sample('b', NOW, 6), sample('a', NOW + 120, 4)],
      NOW + 120,
      3,
    );
    assert.deepEqual(summary.activeSessions, [6, null, 4]);
    assert.equal(
      summary.requests.reduce((sum, n) => sum + n, 0),
      0,
      'a level is no request',
    );
  });
});

describe('dashboard figures: one process counting and flushing', () => {
  it('counts by minute in memory and writes only at a flush', async () => {
    const clock = new ManualClock(NOW + 10);
    const { store, written } = flakyStore();
    const recorder = new FigureRecorder(store, clock, 'p1');
    recorder.count('token_responses', 'client_credentials');
    recorder.count('token_responses', 'client_credentials');
    recorder.request(0.004);
    recorder.request(7);
    recorder.auditEvent('sign-in.failed');
    recorder.auditEvent('client.created');
    clock.advance(60);
    recorder.auditEvent('sign-in.locked-out');
    assert.equal(written.length, 0, 'nothing is written per request');
    await recorder.flush();
    const by = (s: MetricSample) => `${s.minute - NOW} ${s.series} ${s.label}=${s.value}`;
    assert.deepEqual(written.map(by).sort(), [
      '0 failed_sign_ins =1',
      '0 latency +Inf=1',
      '0 latency 0.005=1',
      '0 token_responses client_credentials=2',
      '60 lockouts =1',
    ]);
    assert.ok(written.every((s) => s.processId === 'p1'));
    await recorder.flush();
    assert.equal(written.length, 5, 'a flush with nothing counted writes nothing');
  });

  it('keeps what a failed write took, adding what came meanwhile, for the next flush', async () => {
    const clock = new ManualClock(NOW);
    const { store, written, failNext } = flakyStore();
    const recorder = new FigureRecorder(store, clock, 'p1');
    recorder.count('errors', 'invalid_client', 2);
    failNext();
    await assert.rejects(recorder.flush(), /store unavailable/);
    recorder.count('errors', 'invalid_client');
    await recorder.flush();
    assert.deepEqual(
      written.map((s) => [s.label, s.value]),
      [['invalid_client', 3]],
    );
  });

  it('bounds the labels of a series: past 32, the rest count as other', async () => {
    const clock = new ManualClock(NOW);
    const { store, written } = flakyStore();
    const recorder = new FigureRecorder(store, clock, 'p1');
    for (let i = 0; i < 40; i++) recorder.count('errors', `code_${i}`);
    recorder.count('errors', 'code_0');
    recorder.count('errors', 'x'.repeat(500));
    await recorder.flush();
    assert.equal(written.length, 33);
    assert.equal(written.find((s) => s.label === OTHER_LABEL)?.value, 9);
    assert.equal(written.find((s) => s.label === 'code_0')?.value, 2);
  });

  it('adds, never overwrites: two processes and two flushes of one minute sum in the store', async () => {
    const clock = new ManualClock(NOW);
    const storage = memoryStorage();
    const a = new FigureRecorder(storage.metricSamples, clock, 'a');
    const b = new FigureRecorder(storage.metricSamples, clock, 'b');
    a.count('token_responses', 'refresh_token');
    await a.flush();
    a.count('token_responses', 'refresh_token', 2);
    b.count('token_responses', 'refresh_token', 4);
    await Promise.all([a.flush(), b.flush()]);
    const rows = await storage.metricSamples.since(minuteOf(NOW), 100);
    assert.deepEqual(rows.map((r) => [r.processId, r.value]).sort(), [
      ['a', 3],
      ['b', 4],
    ]);
    const statistics = new Statistics({
      clock,
      samples: storage.metricSamples,
      sessions: storage.browserSessions,
      signingKeys: storage.signingKeys,
      pendingMigrations: async () => [],
      purgeBacklog: async () => ({}),
      certificate: undefined,
    });
    const report = await statistics.read();
    assert.equal(report.figures.counts.token_responses['refresh_token']?.at(-1), 7);
    assert.equal(report.figures.processes, 2);
  });
});
