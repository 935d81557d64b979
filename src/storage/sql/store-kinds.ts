import type { StoreKind } from '../open-store.js';
import { createSqlStorage, isPostgresUrl, sqliteFilename } from './index.js';

/** PostgreSQL: `postgres://…` or `postgresql://…`. */
export const postgresStoreKind: StoreKind = {
  handles: isPostgresUrl,
  open: (options) => createSqlStorage(options),
  localFile: () => undefined,
  describe: () => 'the PostgreSQL database',
  opensFromOtherProcesses: () => true,
};

/** SQLite: `sqlite:PATH`, or no URL at all (the data directory's gatehouse.db). */
export const sqliteStoreKind: StoreKind = {
  handles: (url) => url === undefined || url === '' || url.startsWith('sqlite:'),
  open: (options) => createSqlStorage(options),
  localFile: (location) => sqliteFilename(location.databaseUrl, location.dataDir),
  describe: (location) => sqliteFilename(location.databaseUrl, location.dataDir),
  opensFromOtherProcesses: (location) =>
    sqliteFilename(location.databaseUrl, location.dataDir) !== ':memory:',
};
