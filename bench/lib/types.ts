import type { LoadResult, LoadSpec } from './load.js';
import type { ServerProcess } from './processes.js';

export interface BenchOptions {
  /** Seconds measured per load run. */
  duration: number;
  /** Seconds of the same load, discarded, before each measurement. */
  warmup: number;
  connections: number;
  /** Requests/s of the client_credentials probe that runs beside the password flood. */
  probeRate: number;
  /** Start the pinned Gatehouse with --cpu-prof and summarise the profile at the end. */
  profile: boolean;
  /** Minutes the leak scenario keeps its steady load up. */
  leakMinutes: number;
  /** Requests/s of the leak scenario's steady (open-loop) load. */
  leakRate: number;
  /**
   * Purge-off and purge-on runs of the purge scenarios, this many of each (5 for the recorded figures;
   * CI runs 1: its checks of correctness need one, and its ratio is only reported).
   */
  rounds: number;
}

export interface Credentials {
  id: string;
  secret: string;
}

/** A load result with the CPU each side used while it ran (1.0 = one core fully busy). */
export interface Measured extends LoadResult {
  serverCpu: number;
  /** The server's main thread (event loop) alone; for --workers N, the primary's, which serves nothing. */
  loopCpu: number;
  driverCpu: number;
  /** Non-2xx responses during the warm-up, which is not otherwise reported. */
  warmupNon2xx: number;
  /** Measured beside another load on the same server, so serverCpu is shared and not per request. */
  concurrent: boolean;
}

/** The bare peer around a scenario: the mean of the runs just before and just after it. */
export interface Bracket {
  rps: number;
  /** Server CPU microseconds per request. */
  cpuPerRequest: number;
}

/** What a load run targets; url, certificate, duration and connections default from the context. */
export type RunSpec = Omit<LoadSpec, 'url' | 'ca' | 'duration' | 'connections'> &
  Partial<Pick<LoadSpec, 'connections'>>;

export interface StartOptions {
  label: string;
  /** Cores to run on, e.g. "0"; undefined = every core. */
  cpus: string | undefined;
  databaseUrl?: string;
  workers?: number;
  nodeFlags?: string[];
  /** Extra environment; default: rate limits counted but out of reach (see rate-limits.ts). */
  env?: NodeJS.ProcessEnv;
}

export interface BenchContext {
  options: BenchOptions;
  ca: string;
  dataDir: string;
  /** Gatehouse on SQLite, pinned to core 0, rate limits counted (out of reach). */
  gatehouse: ServerProcess;
  /** Credentials made with `gatehouse clients create` / `users create` in dataDir's store. */
  clients: { clientCredentials: Credentials; password: Credentials };
  /** Password-grant users, one per connection (the first made with `gatehouse users create`). */
  users: Array<{ username: string; password: string }>;
  /** Base PostgreSQL URL (a fresh database is created beside it), or undefined when unreachable. */
  pgBaseUrl: string | undefined;
  log(line: string): void;
  /** Runs the specs together (warm-up, then measured), against one server. */
  measure(server: ServerProcess, specs: RunSpec[]): Promise<Measured[]>;
  /**
   * The same for a load autocannon cannot drive (chained requests): `load(seconds)` runs it for the
   * warm-up, then for the measured duration, while the server's and the driver's CPU are read.
   */
  measureCustom<T extends LoadResult>(
    server: ServerProcess,
    load: (seconds: number, phase: 'warmup' | 'measured') => Promise<T>,
  ): Promise<T & Measured>;
  startGatehouse(options: StartOptions): Promise<ServerProcess>;
  /** Cores the servers are pinned to ("0"), or undefined when nothing is pinned. */
  serverCpus: string | undefined;
}

/** One line of the results table. */
export interface Row {
  scenario: string;
  label: string;
  result: Measured;
  /** Rows of the bare peer, measured between scenarios. */
  baseline?: boolean;
  /** The bare peer around this row's scenario (filled in by run.ts): the reference of its ratios. */
  bracket?: Bracket;
  /** A comparison more telling than the ratio to bare Fastify (e.g. 2 workers vs 1). */
  compare?: string;
  /** Not an HTTP load (an in-process loop): no ratio to bare Fastify's requests is shown. */
  unbracketed?: boolean;
  note?: string;
}

/** A budget from the issues, judged against the bare peer measured around its scenario. */
export interface Target {
  name: string;
  target: string;
  /** `reported`: a comparison the issues ask for without a threshold (shown, never a miss). */
  judge(bracket: Bracket): { measured: string; pass: boolean; reported?: boolean };
}

/** Correctness of what was measured: a failure fails the whole run, loudly. */
export interface Check {
  name: string;
  pass: boolean;
  detail: string;
}

/** A server's resident memory at one moment (issue 17: idle, and at the end of a loaded run). */
export interface MemorySample {
  server: string;
  when: string;
  rssBytes: number;
  /** V8 heap used, where the server exposes it (Gatehouse's /metrics). */
  heapUsedBytes?: number;
}

export interface ScenarioOutcome {
  rows: Row[];
  memory?: MemorySample[];
  targets?: Target[];
  checks?: Check[];
  notes?: string[];
}

export interface Scenario {
  /** Selected with --only id1,id2. */
  id: string;
  title: string;
  /** Runs on a fresh PostgreSQL database: run.ts looks for a reachable one first (see pgBaseUrl). */
  postgres?: boolean;
  run(context: BenchContext): Promise<ScenarioOutcome>;
}
