import { SIGN_COST, runNodeJson } from './processes.js';
import type { BenchContext, Measured, Row, Target } from './types.js';
import { cpuPerRequest } from './cost.js';

/** What bench/sign-cost.ts prints. */
export interface SignatureCost {
  algorithm: string;
  count: number;
  seconds: number;
  cpuSeconds: number;
  cpuUsPerSignature: number;
}

/** Issue 17: Gatehouse's CPU per request may be this many times (bare Fastify's + one signature). */
const CPU_BUDGET_FACTOR = 1.5;

let measured: Promise<SignatureCost> | undefined;

/**
 * One access-token signature's CPU on the servers' core, measured once per bench run (the first
 * scenario that asks) in a child pinned like the servers, while no load runs.
 */
export function signatureCost(context: BenchContext): Promise<SignatureCost> {
  measured ??= runNodeJson<SignatureCost>(context.serverCpus, [SIGN_COST, '--seconds', '2']);
  return measured;
}

/** The signature loop as a table row: "requests/s" are signatures/s, CPU us/req is CPU per signature. */
export function signatureRow(cost: SignatureCost, scenario: string): Row {
  const result: Measured = {
    rps: cost.count / cost.seconds,
    p50: NaN,
    p90: NaN,
    p99: NaN,
    max: NaN,
    requests: cost.count,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    statusCodes: {},
    seconds: cost.seconds,
    serverCpu: cost.cpuSeconds / cost.seconds,
    loopCpu: NaN,
    driverCpu: NaN,
    warmupNon2xx: 0,
    concurrent: false,
  };
  return {
    scenario,
    label: `one ${cost.algorithm} access-token signature, sync node:crypto (CPU budget's unit), 1 core`,
    result,
    unbracketed: true,
    compare: `${Math.round(1e6 / cost.cpuUsPerSignature).toLocaleString('en')}/CPU-s`,
  };
}

/**
 * Gatehouse's server CPU per request <= 1.5 x (bare Fastify's CPU per request + one signature), both
 * from this run: the token endpoint may cost the HTTP framework, its signature, and half as much again
 * for everything else (client authentication, rate-limit counting, JSON).
 */
export function cpuBudgetTarget(name: string, result: Measured, cost: SignatureCost): Target {
  return {
    name: `${name}: CPU per request <= ${CPU_BUDGET_FACTOR} x (bare + one ${cost.algorithm} signature)`,
    target: `<= ${CPU_BUDGET_FACTOR} x (bare CPU us/req + ${cost.cpuUsPerSignature.toFixed(1)} us)`,
    judge: (bracket) => {
      const budget = CPU_BUDGET_FACTOR * (bracket.cpuPerRequest + cost.cpuUsPerSignature);
      const used = cpuPerRequest(result);
      return {
        measured:
          `${used.toFixed(0)} us vs budget ${budget.toFixed(0)} us ` +
          `(bare ${bracket.cpuPerRequest.toFixed(0)} us + signature ${cost.cpuUsPerSignature.toFixed(1)} us; ` +
          `${(used / budget).toFixed(2)} x budget)`,
        pass: used <= budget,
      };
    },
  };
}
