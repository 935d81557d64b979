import type { GatehouseStore } from '../core/ports.js';
import { postgresStoreKind, sqliteStoreKind } from './sql/store-kinds.js';

/** Where a store is: a URL naming it, or else the data directory's default (a SQLite file). */
export interface StoreLocation {
  databaseUrl?: string | undefined;
  dataDir: string;
}

/** How to open a store, beside its location. Each kind of store uses what applies to it. */
export interface StoreOpenOptions extends StoreLocation {
  /** SQLite's `synchronous` pragma. */
  sqliteSynchronous?: 'FULL' | 'NORMAL';
  /** Connections a pooled store keeps at most. */
  poolSize?: number;
  /**
   * The store of the purge process (compose/purge-process-entry.ts): one that does the purge's own
   * upkeep (SQLite: checkpoints the WAL its deletes wrote) and runs no background work of its own.
   */
  purgeProcessStore?: boolean;
}

/**
 * One kind of store (docs/architecture.md, "Stores"): which locations it opens, and how. Another
 * store is a folder under src/storage with one of these, added to KINDS below.
 */
export interface StoreKind {
  /** Whether this kind opens `databaseUrl` (undefined or empty: the data directory's default). */
  handles(databaseUrl: string | undefined): boolean;
  open(options: StoreOpenOptions): GatehouseStore;
  /** The file the store lives in, when it is a local file (the CLI checks it exists); else undefined. */
  localFile(location: StoreLocation): string | undefined;
  /** The store as messages name it. */
  describe(location: StoreLocation): string;
  /** Whether another process can open the same store (the purge process does). */
  opensFromOtherProcesses(location: StoreLocation): boolean;
}

/** First match wins: SQLite takes the default location, so it comes last. */
const KINDS: readonly StoreKind[] = [postgresStoreKind, sqliteStoreKind];

function kindOf(databaseUrl: string | undefined): StoreKind {
  const kind = KINDS.find((candidate) => candidate.handles(databaseUrl));
  if (kind === undefined) throw new Error('unsupported database URL: use postgres://… or sqlite:PATH');
  return kind;
}

/** Opens the store `options` locate (it is neither created nor migrated here: see StoreLifecycle). */
export function openStore(options: StoreOpenOptions): GatehouseStore {
  return kindOf(options.databaseUrl).open(options);
}

/** The local file the store is kept in, or undefined for a store behind a server. */
export function storeFile(location: StoreLocation): string | undefined {
  return kindOf(location.databaseUrl).localFile(location);
}

/** The store as messages name it: its file, or the database. */
export function describeStoreLocation(location: StoreLocation): string {
  return kindOf(location.databaseUrl).describe(location);
}

/** Whether another process can open the store at `location` (SQLite's `:memory:` cannot be). */
export function storeOpensFromOtherProcesses(location: StoreLocation): boolean {
  return kindOf(location.databaseUrl).opensFromOtherProcesses(location);
}
