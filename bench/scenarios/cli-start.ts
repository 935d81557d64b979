import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GATEHOUSE_MAIN, nodeCommand } from '../lib/processes.js';
import type { BenchContext, Scenario, Target } from '../lib/types.js';

/** The floor a store-reading command cannot go below: node, the store opened, one row read. */
const STORE_OPEN_FLOOR = fileURLToPath(new URL('../store-open-floor.js', import.meta.url));
/** Cold starts of each command; the median is reported (one slow or lucky run must not move it). */
const RUNS = 5;
/** Issue 26: a command costs at most twice its floor. */
const MAX_RATIO = 2;

interface Timed {
  label: string;
  args: string[];
}

/**
 * One cold start of `node args`: the child's user + system CPU seconds, as the kernel counts them. A
 * command that fails throws, which fails the run (a figure of a refusal would be no figure).
 */
function cpuSeconds(cpus: string | undefined, args: string[], scratch: string): number {
  const out = join(scratch, 'time');
  const command = nodeCommand(cpus, args);
  const result = spawnSync('/usr/bin/time', ['-f', '%U %S', '-o', out, command.file, ...command.args], {
    encoding: 'utf8',
    env: { ...process.env, GATEHOUSE_LOG_LEVEL: 'warn' },
  });
  if (result.status !== 0) {
    throw new Error(`${args.slice(1).join(' ')} failed (${result.status}): ${result.stderr.slice(-1000)}`);
  }
  const [user, system] = readFileSync(out, 'utf8').trim().split('\n').at(-1)!.split(' ').map(Number);
  return (user ?? NaN) + (system ?? NaN);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * Issue 26: the CPU of a command's cold start (`gatehouse --version`, `clients list`, `clients
 * create`), the whole process timed from outside by /usr/bin/time, next to `node -e 0` and to the
 * floor of a command that reads the store (node, the store opened, one row read: store-open-floor.ts).
 * The commands run in turn, round after round, on the servers' core, so drift touches each alike.
 */
export const cliStartScenario: Scenario = {
  id: 'cli-start',
  title: 'command-line cold start CPU (--version, clients list, clients create)',
  async run(context: BenchContext) {
    const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-cli-'));
    try {
      const store = ['--data-dir', dataDir];
      // Sealed with the bench's secret (run.ts sets GATEHOUSE_SECRET_FILE), which the commands inherit.
      const init = spawnSync(process.execPath, [GATEHOUSE_MAIN, 'init', ...store], { encoding: 'utf8' });
      if (init.status !== 0) throw new Error(`gatehouse init failed: ${init.stderr}`);
      const commands: Timed[] = [
        { label: 'node -e 0', args: ['-e', '0'] },
        { label: 'store floor', args: [STORE_OPEN_FLOOR, dataDir] },
        { label: 'gatehouse --version', args: [GATEHOUSE_MAIN, '--version'] },
        { label: 'gatehouse clients list', args: [GATEHOUSE_MAIN, 'clients', 'list', ...store] },
        {
          label: 'gatehouse clients create',
          args: [GATEHOUSE_MAIN, 'clients', 'create', '--name', 'bench-cli', ...store],
        },
      ];
      const samples = commands.map(() => [] as number[]);
      // One warm-up round (file cache), then RUNS rounds measured.
      for (let round = -1; round < RUNS; round++) {
        for (const [i, command] of commands.entries()) {
          const seconds = cpuSeconds(context.serverCpus, command.args, dataDir);
          if (round >= 0) samples[i]!.push(seconds);
        }
      }
      const [node, floor, version, list, create] = samples.map(median) as [
        number,
        number,
        number,
        number,
        number,
      ];
      context.log(
        `  cpu (median of ${RUNS}): node -e 0 ${node.toFixed(3)} s, store floor ${floor.toFixed(3)} s, ` +
          `--version ${version.toFixed(3)} s, clients list ${list.toFixed(3)} s, clients create ${create.toFixed(3)} s`,
      );
      const target = (name: string, cpu: number, base: number, baseName: string): Target => ({
        name: `cold start CPU, ${name}`,
        target: `<= ${MAX_RATIO} x ${baseName}`,
        judge: () => ({
          measured:
            `${cpu.toFixed(3)} s = ${(cpu / base).toFixed(2)} x ${baseName} (${base.toFixed(3)} s)` +
            (base === node ? '' : `; ${(cpu / node).toFixed(1)} x node -e 0`),
          pass: cpu <= MAX_RATIO * base,
        }),
      });
      return {
        rows: [],
        targets: [
          target('gatehouse --version', version, node, 'node -e 0'),
          target('gatehouse clients list', list, floor, 'the store floor'),
          target('gatehouse clients create', create, floor, 'the store floor'),
        ],
        notes: [
          'cli-start: user + system CPU of each whole process (/usr/bin/time), median of ' +
            `${RUNS} cold starts; the store floor is node opening the SQLite store and reading one row ` +
            '(bench/store-open-floor.ts), which every command that reads the store pays.',
        ],
      };
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
};
