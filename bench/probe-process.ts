/**
 * The fixed-rate latency probe's own process (forked by bench/lib/probe.ts): each message is one run's
 * spec, each reply its result. The probe measures milliseconds; in the bench's own process its
 * garbage collections (a heap holding every scenario's results, 6-20 ms scavenges) showed up as the
 * server's latency. Here the heap holds the probe alone.
 */
import { runOpenLoop, type OpenLoopSpec } from './lib/open-loop.js';

process.on('message', (spec: OpenLoopSpec) => {
  let firstSuccess: string | undefined;
  runOpenLoop({ ...spec, onFirstSuccess: (body) => (firstSuccess = body) }).then(
    (result) => process.send?.({ result, firstSuccess }),
    (error: unknown) => process.send?.({ error: String(error instanceof Error ? error.message : error) }),
  );
});
