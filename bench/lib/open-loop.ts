import { Agent, request } from 'node:https';
import type { LoadResult, LoadSpec } from './load.js';

/** A load spec with the rate the probe sends at. */
export type OpenLoopSpec = LoadSpec & { overallRate: number };

/** A request that has had no answer this long counts as a timeout (autocannon's default too). */
const TIMEOUT_MS = 10_000;

/** The value below which `share` of the sorted samples lie (nearest rank). */
export function percentile(sorted: Float64Array, share: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(share * sorted.length) - 1));
  return sorted[rank]!;
}

/** Sends one request per connection at once and waits for all: the agent then holds that many open sockets. */
async function openConnections(url: URL, spec: LoadSpec, agent: Agent): Promise<void> {
  const one = () =>
    new Promise<void>((resolve) => {
      const req = request(url, { method: spec.method, agent, headers: spec.headers, timeout: TIMEOUT_MS });
      req.on('response', (res) => {
        res.resume();
        res.on('end', resolve);
        res.on('error', () => resolve());
      });
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', () => resolve());
      req.end(spec.bodies?.[0] ?? spec.body);
    });
  await Promise.all(Array.from({ length: spec.connections }, one));
}

/**
 * The p99 of the requests due in each whole second of the run, in order. Over many seconds their
 * median is the p99 of a typical second: a steady cost (a purge at work) shows in every one, where one
 * stall of the shared machine moves a run's own p99 by several times and a second's p99 only once.
 */
function perSecondP99(
  latencies: Float64Array,
  dueSecond: Uint32Array,
  count: number,
  seconds: number,
): number[] {
  const buckets: number[][] = Array.from({ length: seconds }, () => []);
  for (let i = 0; i < count; i++) buckets[dueSecond[i]!]?.push(latencies[i]!);
  return buckets
    .filter((bucket) => bucket.length > 0)
    .map((bucket) => roundMs(percentile(Float64Array.from(bucket).sort(), 0.99)));
}

/** Rounds a latency for the report: 0.1 ms below 100 ms, whole milliseconds above. */
const roundMs = (value: number) => (value < 100 ? Math.round(value * 10) / 10 : Math.round(value));

/**
 * A fixed-rate latency probe (open loop, as wrk2 measures): request i is due at start + i / rate,
 * whatever happened to the ones before it, and its latency runs from when it was due to its last
 * byte, so time spent queued behind a stall counts in full.
 *
 * Why not autocannon's `overallRate`: it gives each connection a quota per second, sent back to back
 * from the start of each second (the server saturated for part of every second, then idle), and it
 * "corrects" for coordinated omission by adding a synthetic sample for every millisecond a response
 * took beyond one. Its p99 is then mostly the driver's own burst; the bare Fastify peer showed a p99 of
 * 9-21 ms at a rate it serves in under one.
 *
 * Sends are paced by the event loop's timers (about 1 ms resolution): a request leaves up to a
 * millisecond after it was due, and that wait is part of every run's figures alike.
 */
export function runOpenLoop(spec: OpenLoopSpec): Promise<LoadResult> {
  const { connections, overallRate: rate } = spec;
  const leadIn = Math.round(rate * (spec.leadInSeconds ?? 0));
  const measured = Math.max(1, Math.round(rate * spec.duration));
  const total = leadIn + measured;
  const intervalMs = 1000 / rate;
  const agent = new Agent({ keepAlive: true, maxSockets: connections, ca: spec.ca, servername: 'localhost' });
  const url = new URL(spec.path, spec.url);
  const latencies = new Float64Array(measured);
  /** Which measured second each answered request was due in. */
  const dueSecond = new Uint32Array(measured);
  const statusCodes: Record<string, number> = {};
  let answered = 0;
  let non2xx = 0;
  let errors = 0;
  let timeouts = 0;
  let finished = 0;
  let sampled = false;

  const run = () =>
    new Promise<LoadResult>((resolve) => {
      const start = performance.now();
      const measuredFrom = start + leadIn * intervalMs;
      let sent = 0;

      const settle = () => {
        if (++finished < total) return;
        agent.destroy();
        const sorted = latencies.slice(0, answered).sort();
        const seconds = (performance.now() - measuredFrom) / 1000;
        resolve({
          rps: answered / seconds,
          p50: roundMs(percentile(sorted, 0.5)),
          p90: roundMs(percentile(sorted, 0.9)),
          p99: roundMs(percentile(sorted, 0.99)),
          max: roundMs(percentile(sorted, 1)),
          requests: answered,
          non2xx,
          errors,
          timeouts,
          statusCodes,
          seconds,
          secondP99s: perSecondP99(latencies, dueSecond, answered, Math.floor(spec.duration)),
        });
      };

      const send = (index: number) => {
        const due = start + index * intervalMs;
        let done = false;
        const finish = () => {
          if (done) return;
          done = true;
          settle();
        };
        const body = spec.bodies ? spec.bodies[index % spec.bodies.length] : spec.body;
        const req = request(url, { method: spec.method, agent, headers: spec.headers, timeout: TIMEOUT_MS });
        req.on('response', (res) => {
          // Only the first 2xx body is wanted (onFirstSuccess); the rest are read and dropped.
          const chunks: Buffer[] = [];
          if (!sampled && spec.onFirstSuccess) res.on('data', (chunk: Buffer) => chunks.push(chunk));
          else res.resume();
          res.on('end', () => {
            if (index >= leadIn) {
              dueSecond[answered] = Math.floor((due - measuredFrom) / 1000);
              latencies[answered++] = performance.now() - due;
            }
            const status = res.statusCode ?? 0;
            statusCodes[status] = (statusCodes[status] ?? 0) + 1;
            if (status < 200 || status >= 300) non2xx++;
            else if (!sampled && spec.onFirstSuccess) {
              sampled = true;
              spec.onFirstSuccess(Buffer.concat(chunks).toString('utf8'));
            }
            finish();
          });
          res.on('error', () => {
            if (!done) errors++;
            finish();
          });
        });
        req.on('timeout', () => {
          timeouts++;
          req.destroy(new Error('timeout'));
        });
        req.on('error', () => {
          if (!done) errors++;
          finish();
        });
        req.end(body);
      };

      const pump = () => {
        const due = Math.min(total, Math.floor((performance.now() - start) / intervalMs) + 1);
        while (sent < due) send(sent++);
        if (sent < total) setTimeout(pump, Math.max(0, start + sent * intervalMs - performance.now()));
      };
      pump();
    });
  // Every connection is open (TLS handshake done) before the clock starts: a run measures the server
  // in its steady state, not twenty handshakes queued at its first millisecond.
  return openConnections(url, spec, agent).then(run);
}
