import cluster from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';
import type { MetricsCollector } from '../http/observability.js';

// With `serve --workers N` a scrape lands on one worker, whose counters are a fraction of the truth.
// The worker asks the primary, which gathers every worker's registry over the cluster's IPC channel
// (prom-client's AggregatorRegistry) and answers with the sums.
const REQUEST = 'gatehouse:metrics-request';
const REPLY = 'gatehouse:metrics-reply';
const TIMEOUT_MS = 5000;

interface MetricsRequest {
  type: typeof REQUEST;
  id: number;
}
interface MetricsReply {
  type: typeof REPLY;
  id: number;
  body?: string;
  error?: string;
}

const isMessage = <T extends { type: string }>(message: unknown, type: string): message is T =>
  typeof message === 'object' && message !== null && (message as { type?: unknown }).type === type;

/** In the primary of a cluster: answers workers' requests for the whole cluster's metrics. */
export function serveClusterMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: unknown) => {
    if (!isMessage<MetricsRequest>(message, REQUEST)) return;
    aggregator.clusterMetrics().then(
      (body) => worker.send({ type: REPLY, id: message.id, body } satisfies MetricsReply),
      (err: Error) => worker.send({ type: REPLY, id: message.id, error: err.message } satisfies MetricsReply),
    );
  });
}

/** This process's metrics only. */
export function localMetrics(registry: Registry): MetricsCollector {
  return async () => ({ contentType: registry.contentType, body: await registry.metrics() });
}

/** In a cluster worker: metrics summed over every worker, through the primary. */
export function clusterMetrics(registry: Registry): MetricsCollector {
  AggregatorRegistry.setRegistries([registry]);
  // Constructing one registers the worker's side: answering the primary's collection requests.
  new AggregatorRegistry();
  const pending = new Map<number, (reply: MetricsReply) => void>();
  let nextId = 0;
  process.on('message', (message: unknown) => {
    if (isMessage<MetricsReply>(message, REPLY)) pending.get(message.id)?.(message);
  });
  return () =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error('cluster metrics: the primary did not answer'));
      }, TIMEOUT_MS);
      pending.set(id, (reply) => {
        clearTimeout(timer);
        pending.delete(id);
        if (reply.body === undefined) reject(new Error(`cluster metrics: ${reply.error ?? 'no body'}`));
        else resolve({ contentType: registry.contentType, body: reply.body });
      });
      process.send?.({ type: REQUEST, id } satisfies MetricsRequest);
    });
}
