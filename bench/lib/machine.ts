import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg, release } from 'node:os';

export interface Machine {
  nproc: number;
  cpuModel: string;
  node: string;
  kernel: string;
}

export function describeMachine(): Machine {
  let cpuModel = 'unknown';
  try {
    const match = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (match?.[1]) cpuModel = match[1].trim();
  } catch {
    // Not Linux.
  }
  return { nproc: availableParallelism(), cpuModel, node: process.version, kernel: release() };
}

/** The 1-minute load average: how busy the shared machine was around the run. */
export function loadAverage(): string {
  return loadavg()
    .map((value) => value.toFixed(2))
    .join(' / ');
}
