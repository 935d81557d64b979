import { createHash, randomBytes } from 'node:crypto';
import { Agent, request } from 'node:https';
import type { LoadResult } from './load.js';

/** One HTTP exchange of a flow: status, headers that matter, and the body. */
export interface Exchange {
  status: number;
  location: string | undefined;
  setCookie: string[];
  body: string;
}

/** A keep-alive HTTPS client for one base URL, trusting only the server's certificate. */
export class FlowClient {
  private readonly agent: Agent;

  constructor(
    private readonly baseUrl: string,
    ca: string,
    maxSockets: number,
  ) {
    // Certificate checks stay on: only the bench's own self-signed certificate is trusted.
    this.agent = new Agent({ keepAlive: true, maxSockets, ca, servername: 'localhost' });
  }

  send(
    method: 'GET' | 'POST',
    path: string,
    headers: Record<string, string>,
    body?: string,
  ): Promise<Exchange> {
    return new Promise((resolve, reject) => {
      const req = request(
        `${this.baseUrl}${path}`,
        {
          method,
          agent: this.agent,
          headers: body === undefined ? headers : { ...headers, 'content-length': Buffer.byteLength(body) },
          timeout: 10_000,
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              location: res.headers.location,
              setCookie: res.headers['set-cookie'] ?? [],
              body: text,
            }),
          );
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', reject);
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** RFC 7636 §4.1-4.2: a fresh verifier and its S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** What one flow ended in: ok, or the step and status where it failed (never a code or token). */
export type FlowOutcome = { ok: true; sample?: string } | { ok: false; failure: string };

export interface FlowLoadSpec {
  /** Worker count: each runs flows one after another over the shared keep-alive agent. */
  workers: number;
  /** Seconds. */
  duration: number;
  /** One flow by worker `i`; resolves with its outcome (failures are counted, not thrown). */
  flow(worker: number): Promise<FlowOutcome>;
  onFirstSuccess?: (sample: string) => void;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/**
 * A bounded-duration closed loop: `workers` flows in flight, each started when the previous one of its
 * worker ended. autocannon cannot chain requests (the code of one response goes into the next), hence
 * this. Latency is per whole flow, in milliseconds; "requests" counts flows.
 */
export async function runFlowLoad(spec: FlowLoadSpec): Promise<LoadResult & { failures: string[] }> {
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  const failures: string[] = [];
  let errors = 0;
  let timeouts = 0;
  let sampled = false;
  const start = process.hrtime.bigint();
  const deadline = Date.now() + spec.duration * 1000;
  await Promise.all(
    Array.from({ length: spec.workers }, async (_, worker) => {
      while (Date.now() < deadline) {
        const began = process.hrtime.bigint();
        let outcome: FlowOutcome;
        try {
          outcome = await spec.flow(worker);
        } catch (error) {
          const message = (error as Error).message;
          errors++;
          if (message === 'timeout') timeouts++;
          outcome = { ok: false, failure: `connection error: ${message}` };
        }
        latencies.push(Number(process.hrtime.bigint() - began) / 1e6);
        if (outcome.ok) {
          statusCodes['200'] = (statusCodes['200'] ?? 0) + 1;
          if (!sampled && outcome.sample !== undefined) {
            sampled = true;
            spec.onFirstSuccess?.(outcome.sample);
          }
        } else {
          statusCodes.failed = (statusCodes.failed ?? 0) + 1;
          if (failures.length < 5) failures.push(outcome.failure);
        }
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const sorted = latencies.sort((a, b) => a - b);
  const round = (value: number) => Math.round(value * 10) / 10;
  const failed = statusCodes.failed ?? 0;
  return {
    rps: (statusCodes['200'] ?? 0) / seconds,
    p50: round(percentile(sorted, 50)),
    p90: round(percentile(sorted, 90)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted.at(-1) ?? NaN),
    requests: latencies.length,
    non2xx: failed - errors,
    errors,
    timeouts,
    statusCodes,
    seconds,
    failures,
  };
}
