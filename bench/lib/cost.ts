import type { Bracket, Measured } from './types.js';

/**
 * Server CPU microseconds per request. On a shared machine the server may not get its whole core, which
 * lowers requests/s but not the CPU each request costs: this is the noise-resistant cross-check.
 */
export function cpuPerRequest(result: Measured): number {
  if (result.concurrent || result.rps === 0) return NaN;
  return (result.serverCpu / result.rps) * 1e6;
}

/** Requests/s relative to the bracketing bare runs. */
export function throughputRatio(result: Measured, bracket: Bracket | undefined): number {
  return bracket === undefined ? NaN : result.rps / bracket.rps;
}

/** How many bare requests cost the CPU of one of these (inverted: 0.5 = twice as expensive). */
export function costRatio(result: Measured, bracket: Bracket | undefined): number {
  return bracket === undefined ? NaN : bracket.cpuPerRequest / cpuPerRequest(result);
}

/**
 * The bracket run.ts judged each measured result against, once its scenario is over: lets a later
 * scenario compare with an earlier one's rows each by its own bare runs (the peers with cc).
 */
export const bracketOfResult = new WeakMap<Measured, Bracket>();
