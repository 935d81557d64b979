import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, release } from 'node:os';

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
  // cpus(), not availableParallelism(): the latter shrinks to 1 once this process has pinned itself.
  return { nproc: cpus().length, cpuModel, node: process.version, kernel: release() };
}

/** The 1-minute load average: how busy the shared machine was around the run. */
export function loadAverage(): string {
  return loadavg()
    .map((value) => value.toFixed(2))
    .join(' / ');
}

/** The code measured: `git describe --always --dirty` of the repository, or "unknown". */
export function codeVersion(repo: string): string {
  const result = spawnSync('git', ['describe', '--always', '--dirty'], { cwd: repo, encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() : 'unknown';
}
