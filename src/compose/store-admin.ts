import type { GatehouseConfig } from '../config.js';
import { systemClock, type Clock } from '../shared/clock.js';
import { describeStoreLocation, storeFile } from '../storage/open-store.js';
import { openStorage } from './gatehouse.js';
import { migrateVerified, verifyServerSecret, type SecretVerdict } from './secret-check.js';

/** The local file (SQLite's) a store location names, or undefined for a store behind a server. */
export function sqliteFileOf(location: { databaseUrl?: string; dataDir: string }): string | undefined {
  return storeFile(location);
}

/** The store as messages name it: its file, or the database. */
export function describeStore(config: GatehouseConfig): string {
  return describeStoreLocation(config);
}

/** `gatehouse migrate`: verifies the secret, applies pending migrations; returns the names applied. */
export async function migrateStore(config: GatehouseConfig, clock: Clock = systemClock): Promise<string[]> {
  const storage = openStorage(config);
  try {
    return await migrateVerified(storage, config.secret, clock);
  } finally {
    await storage.close();
  }
}

/** What `gatehouse check` asks of a store, changing nothing. */
export interface StoreProbe {
  /** Round-trips to the store; throws when it is unreachable. */
  ping(): Promise<void>;
  pendingMigrations(): Promise<string[]>;
  /** How the configured secret was found to be the store's; throws SecretMismatchError when it is not. */
  verifySecret(): Promise<SecretVerdict>;
  close(): Promise<void>;
}

export function openStoreProbe(config: GatehouseConfig): StoreProbe {
  const storage = openStorage(config);
  return {
    ping: () => storage.ping(),
    pendingMigrations: () => storage.pendingMigrations(),
    verifySecret: () => verifyServerSecret(storage, config.secret),
    close: () => storage.close(),
  };
}
