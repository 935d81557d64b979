import { httpsRequest } from './https.js';
import type { ServerProcess } from './processes.js';
import type { MemorySample } from './types.js';

/**
 * V8 heap used by a Gatehouse process, from its own GET /metrics (prom-client's default process
 * metrics, which Gatehouse serves to a scraper on loopback); NaN if it cannot be read.
 */
export async function gatehouseHeapUsed(server: ServerProcess, ca: string): Promise<number> {
  try {
    const response = await httpsRequest(`${server.url}/metrics`, { ca });
    if (response.status !== 200) return NaN;
    const match = /^gatehouse_nodejs_heap_size_used_bytes(?:\{[^}]*\})? (\S+)/m.exec(response.body);
    return match?.[1] === undefined ? NaN : Number(match[1]);
  } catch {
    return NaN;
  }
}

/** A Gatehouse server's RSS and heap now. */
export async function gatehouseMemory(
  server: ServerProcess,
  ca: string,
  name: string,
  when: string,
): Promise<MemorySample> {
  const heapUsedBytes = await gatehouseHeapUsed(server, ca);
  return { server: name, when, rssBytes: server.rssBytes(), heapUsedBytes };
}

export const mib = (bytes: number | undefined) =>
  bytes === undefined || !Number.isFinite(bytes) ? '-' : (bytes / 2 ** 20).toFixed(1);
