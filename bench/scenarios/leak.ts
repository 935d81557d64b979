import { runLoad } from '../lib/load.js';
import { gatehouseHeapUsed, mib } from '../lib/memory.js';
import { clientCredentialsRequest } from '../lib/token-requests.js';
import type { Measured, Scenario, Target } from '../lib/types.js';

/** Seconds between two memory samples (issue 17); the heap is read every second in between. */
const SAMPLE_EVERY_SECONDS = 10;

/**
 * How much the last third's median may exceed the first third's. Not zero: even each period's lowest
 * heap reading holds the old generation's garbage since the last mark-compact, which V8 lets grow
 * between collections by several MiB, and RSS keeps pages the allocator has freed; two medians of a
 * few samples each differ by a few MiB with no leak at all. 10% of the 30-45 MiB a Gatehouse heap
 * holds is 3-5 MiB: above that noise, and still what a leak of a few bytes per request adds between
 * the thirds (10 minutes at 2,000/s: ~800,000 requests between the thirds' middles, so 4 MiB is
 * ~5 bytes a request).
 */
const GROWTH_MARGIN = 0.1;

export interface Sample {
  second: number;
  rssBytes: number;
  heapUsedBytes: number;
}

const median = (values: number[]): number => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** "No growth": the last third's median within GROWTH_MARGIN of the first third's. */
export function growthTarget(what: string, samples: Sample[], pick: (s: Sample) => number): Target {
  const third = Math.floor(samples.length / 3);
  const first = median(samples.slice(0, third).map(pick));
  const last = median(samples.slice(samples.length - third).map(pick));
  const growth = last / first - 1;
  const judged = third >= 1 && Number.isFinite(growth);
  return {
    name: `leak check: ${what} does not grow under steady load`,
    target: `last third's median <= ${(1 + GROWTH_MARGIN).toFixed(2)} x the first third's`,
    judge: () =>
      judged
        ? {
            measured:
              `${mib(first)} -> ${mib(last)} MiB (${growth >= 0 ? '+' : ''}${(growth * 100).toFixed(1)}%; ` +
              `medians of ${third} of ${samples.length} samples, every ${SAMPLE_EVERY_SECONDS} s)`,
            pass: growth <= GROWTH_MARGIN,
          }
        : { measured: `not judged: ${samples.length} sample(s), too few`, pass: true, reported: true },
  };
}

/**
 * Issue 17's leak check: Gatehouse (SQLite, rate limits counted, a server of its own, pinned) under
 * client_credentials at a steady open-loop rate for --leak-minutes, its RSS (/proc) and V8 heap used
 * (its /metrics) sampled every 10 s after the warm-up; judged on the thirds' medians.
 */
export const leakScenario: Scenario = {
  id: 'leak',
  title: 'leak check: client_credentials at a steady rate, RSS and heap sampled',
  async run(context) {
    const { leakMinutes, leakRate, warmup } = context.options;
    const server = await context.startGatehouse({ label: 'gatehouse-leak', cpus: context.serverCpus });
    try {
      const name = 'Gatehouse (SQLite, rate limits counted), leak-check server';
      const idle = {
        server: name,
        when: 'idle, just started',
        rssBytes: server.rssBytes(),
        heapUsedBytes: await gatehouseHeapUsed(server, context.ca),
      };
      // The warm-up is sent on the same connections without a break (open-loop.ts, leadInSeconds);
      // samples taken during it are not judged. At least one sampling period, so JIT and caches settle.
      const leadInSeconds = Math.max(warmup, SAMPLE_EVERY_SECONDS);
      const seconds = Math.round(leakMinutes * 60);
      const samples: Sample[] = [];
      // The heap is read every second and each sample keeps the period's lowest reading: the heap just
      // after a scavenge, what survived, rather than a random point on the young generation's sawtooth.
      const started = performance.now();
      let polls = 0;
      let lowestHeap = Infinity;
      let polling = Promise.resolve();
      const timer = setInterval(() => {
        polling = polling.then(async () => {
          lowestHeap = Math.min(lowestHeap, await gatehouseHeapUsed(server, context.ca));
          if (++polls % SAMPLE_EVERY_SECONDS !== 0) return;
          const second = (performance.now() - started) / 1000;
          if (second > leadInSeconds) {
            samples.push({ second, rssBytes: server.rssBytes(), heapUsedBytes: lowestHeap });
          }
          lowestHeap = Infinity;
        });
      }, 1000);
      const cpuBefore = server.cpuSeconds();
      const loopBefore = server.mainThreadCpuSeconds();
      const wallBefore = performance.now();
      let result;
      try {
        result = await runLoad({
          ...clientCredentialsRequest(context.clients.clientCredentials),
          url: server.url,
          ca: context.ca,
          connections: context.options.connections,
          duration: seconds,
          overallRate: leakRate,
          leadInSeconds,
        });
      } finally {
        clearInterval(timer);
      }
      await polling;
      const wall = (performance.now() - wallBefore) / 1000;
      const measured: Measured = {
        ...result,
        // Over the lead-in too: the rate is the same throughout, so CPU per request is still per request.
        serverCpu: (server.cpuSeconds() - cpuBefore) / wall,
        loopCpu: (server.mainThreadCpuSeconds() - loopBefore) / wall,
        driverCpu: NaN,
        warmupNon2xx: 0,
        concurrent: false,
      };
      const end = {
        server: name,
        when: `after ${leakMinutes} min at ${leakRate.toLocaleString('en')}/s`,
        rssBytes: server.rssBytes(),
        heapUsedBytes: await gatehouseHeapUsed(server, context.ca),
      };
      const series = (pick: (s: Sample) => number) => samples.map((s) => mib(pick(s))).join(', ');
      return {
        rows: [
          {
            scenario: 'leak',
            label: `client_credentials at a steady ${leakRate.toLocaleString('en')}/s for ${leakMinutes} min (leak check), SQLite, 1 core, rate limits counted`,
            result: measured,
            unbracketed: true,
            compare: `RSS ${mib(samples[0]?.rssBytes)} -> ${mib(samples.at(-1)?.rssBytes)} MiB, heap ${mib(samples[0]?.heapUsedBytes)} -> ${mib(samples.at(-1)?.heapUsedBytes)} MiB`,
          },
        ],
        memory: [idle, end],
        checks: [
          {
            name: 'leak: every response 200',
            pass: result.non2xx === 0 && result.errors === 0,
            detail: `${result.requests} responses measured (status codes with the warm-up: ${Object.entries(
              result.statusCodes,
            )
              .map(([code, count]) => `${code}: ${count}`)
              .join(', ')}), ${result.errors} errors`,
          },
        ],
        targets: [
          growthTarget('RSS', samples, (s) => s.rssBytes),
          growthTarget('V8 heap used', samples, (s) => s.heapUsedBytes),
        ],
        notes: [
          `leak: samples every ${SAMPLE_EVERY_SECONDS} s after a ${leadInSeconds} s warm-up at the same rate; ` +
            `RSS MiB: ${series((s) => s.rssBytes)}; V8 heap used MiB (lowest of each period's readings, one a second): ` +
            `${series((s) => s.heapUsedBytes)}. Latencies run from when each request was due (open loop), so a stalled ` +
            'driver or a busy core 0 shows in them; only memory is judged here. ' +
            'A fixed-rate load: requests/s is the rate sent, so no ratio to bare Fastify; CPU per request is over the warm-up too.',
        ],
      };
    } finally {
      await server.stop();
    }
  },
};
