import { join } from 'node:path';
import { Kysely, Migrator, sql } from 'kysely';
import type { GatehouseStore, Storage } from '../../core/ports.js';
import { createPostgresDialect } from './dialects/postgres.js';
import { createSqliteDialect } from './dialects/sqlite.js';
import { checkpointsAfterPurges } from './dialects/sqlite-checkpointer.js';
import { migrationProvider } from './migrations/index.js';
import { createAuthorizationCodeRepository } from './repositories/authorization-codes.js';
import { createBrowserSessionRepository } from './repositories/browser-sessions.js';
import { createPurgeRepository } from './repositories/purge.js';
import { createSecretCheckRepository } from './repositories/secret-check.js';
import { createRateLimitRepository } from './repositories/rate-limits.js';
import { createMacNonceRepository } from './repositories/mac-nonces.js';
import { createSecondFactorRepository } from './repositories/second-factors.js';
import { createUsedJtiRepository } from './repositories/used-jtis.js';
import { createInitialAccessTokenRepository } from './repositories/initial-access-tokens.js';
import { createPushedRequestRepository } from './repositories/pushed-requests.js';
import { createDeviceAuthorizationRepository } from './repositories/device-authorizations.js';
import {
  createFederatedLinkRepository,
  createIdentityProviderRepository,
} from './repositories/identity-providers.js';
import { createPasskeyRepository, createWebAuthnChallengeRepository } from './repositories/passkeys.js';
import { createMailLinkRepository } from './repositories/mail-links.js';
import { createQueryObserver, type QueryListener } from './query-observer.js';
import { createClientRepository } from './repositories/clients.js';
import { createGrantRepository } from './repositories/grants.js';
import { createRefreshTokenRepository } from './repositories/refresh-tokens.js';
import { createResourceRepository } from './repositories/resources.js';
import { createRevocationRepository } from './repositories/revocations.js';
import { createScopeRepository } from './repositories/scopes.js';
import { createUserRepository } from './repositories/users.js';
import { createSigningKeyRepository } from './repositories/signing-keys.js';
import { createThrottleRepository } from './repositories/throttle.js';
import { createAuditEventRepository } from './repositories/audit-events.js';
import { createMetricSampleRepository } from './repositories/metric-samples.js';
import type { Database } from './schema.js';
import type { RequestStatements } from './prepared-query.js';
import { createPostgresStatements } from './dialects/postgres-statements.js';

export interface SqlStorageOptions {
  /** `postgres://…` selects PostgreSQL; anything else (or nothing) the SQLite file in `dataDir`. */
  databaseUrl?: string;
  dataDir: string;
  /** PostgreSQL schema to use instead of `public`. */
  schema?: string;
  poolSize?: number;
  sqliteSynchronous?: 'FULL' | 'NORMAL';
  /**
   * SQLite: the store of the purge process (src/compose/purge-process.ts). No checkpoint thread: the
   * process is already apart from the requests, and its purge checkpoints the WAL pages its deletes
   * wrote itself (checkpointsAfterPurges).
   */
  purgeProcessStore?: boolean;
  /**
   * Milliseconds now, for the client cache's times (CLIENT_CACHE_TTL_MS): the system's by default; a
   * test gives a manual one so that an entry's age does not depend on how busy the machine is.
   */
  nowMs?: () => number;
}

/** The SQL store: the Storage port and its lifecycle (core/ports.ts), on SQLite or PostgreSQL. */
export interface SqlStorage extends GatehouseStore {
  /** Calls `listener` after every statement (observeOperations, by its SQL name). */
  observeQueries(listener: QueryListener): () => void;
  /**
   * The Kysely handle, for tests' own set-up and inspection (test/helpers/store-sql.ts): nothing
   * outside this folder reads it.
   */
  readonly db: Kysely<Database>;
}

/**
 * How long a client record read by a process stays in its memory (docs/decisions.md, decision 7). Client
 * authentication reads it on every token request: a PostgreSQL round trip, or on SQLite a read that
 * costs a tenth of a client_credentials request.
 */
const CLIENT_CACHE_TTL_MS = 1000;

/** The migration that creates a store: a store without it is no Gatehouse store yet. */
const FIRST_MIGRATION = '0001-initial';

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** The SQLite file a store opens (`:memory:` for one that lives in this process only). */
export function sqliteFilename(databaseUrl: string | undefined, dataDir: string): string {
  if (databaseUrl === undefined || databaseUrl === '') return join(dataDir, 'gatehouse.db');
  if (databaseUrl.startsWith('sqlite:')) return databaseUrl.slice('sqlite:'.length).replace(/^\/\//, '');
  throw new Error('unsupported database URL: use postgres://… or sqlite:PATH');
}

export function isPostgresUrl(url: string | undefined): boolean {
  return url !== undefined && /^postgres(ql)?:\/\//.test(url);
}

export function createSqlStorage(options: SqlStorageOptions): SqlStorage {
  let db: Kysely<Database>;
  let statements: RequestStatements | undefined;
  let afterPurgeDeletes: (() => void) | undefined;
  let stopCheckpointer: () => Promise<void> = async () => undefined;
  let kind: 'sqlite' | 'postgres';
  const queries = createQueryObserver();
  const connectionErrorListeners = new Set<(error: Error) => void>();
  if (isPostgresUrl(options.databaseUrl)) {
    if (options.schema !== undefined && !SCHEMA_NAME.test(options.schema)) {
      throw new Error('schema name must be a lower-case SQL identifier');
    }
    const { dialect, pool } = createPostgresDialect({
      connectionString: options.databaseUrl as string,
      schema: options.schema,
      poolSize: options.poolSize,
      onIdleClientError: (error) => {
        for (const listener of connectionErrorListeners) listener(error);
      },
    });
    statements = createPostgresStatements(pool, queries.emit);
    db = new Kysely<Database>({ dialect, log: queries.log });
    kind = 'postgres';
  } else {
    const filename = sqliteFilename(options.databaseUrl, options.dataDir);
    const sqlite = createSqliteDialect({
      filename,
      synchronous: options.sqliteSynchronous,
      checkpointer: options.purgeProcessStore !== true,
    });
    const { dialect, raw, prepare } = sqlite;
    if (options.purgeProcessStore === true) afterPurgeDeletes = checkpointsAfterPurges(raw);
    stopCheckpointer = sqlite.stopCheckpointer;
    statements = {
      kind: 'sqlite',
      get usable() {
        return !raw.inTransaction;
      },
      prepare,
      emit: queries.emit,
    };
    db = new Kysely<Database>({ dialect, log: queries.log });
    kind = 'sqlite';
  }

  // Kysely looks for its migration tables in every schema it can see unless told which one, so a store
  // beside another schema's Gatehouse would take that one's tables for its own: pin the migration tables
  // to the schema this store writes to (the search_path's first, however it was set).
  let migratorPromise: Promise<Migrator> | undefined;
  const migrator = () =>
    (migratorPromise ??= (async () => {
      let migrationTableSchema: string | undefined;
      if (kind === 'postgres') {
        const { rows } = await sql<{ schema: string | null }>`SELECT current_schema() AS schema`.execute(db);
        migrationTableSchema = rows[0]?.schema ?? undefined;
      }
      return new Migrator({ db, provider: migrationProvider, migrationTableSchema });
    })().catch((error: unknown) => {
      migratorPromise = undefined; // an unreachable store is tried again next time
      throw error;
    }));

  /**
   * The names in the migration table, or undefined when it cannot be read (no table yet on a new
   * store, or the store is down). One read, where the Migrator scans every schema's catalog (slow, and
   * it fails when another schema is dropped meanwhile): /readyz asks on every probe, each start once.
   */
  async function appliedMigrationNames(): Promise<Set<string> | undefined> {
    try {
      const { rows } = await sql<{ name: string }>`SELECT name FROM kysely_migration`.execute(db);
      return new Set(rows.map((row) => row.name));
    } catch {
      return undefined;
    }
  }

  async function pendingMigrations(): Promise<string[]> {
    const applied = await appliedMigrationNames();
    if (applied === undefined) {
      const all = await (await migrator()).getMigrations();
      return all.filter((m) => m.executedAt === undefined).map((m) => m.name);
    }
    const known = Object.keys(await migrationProvider.getMigrations());
    return known.filter((name) => !applied.has(name));
  }

  /**
   * The engine's repositories over `handle`: the store's own connection (with the request path's
   * prepared statements and the client cache), or a transaction of Storage.atomically (neither: its
   * statements must run on the transaction's connection, and what it writes is not yet anyone's).
   */
  const repositoriesOver = (
    handle: Kysely<Database>,
    own: boolean,
  ): Omit<Storage, 'atomically' | 'ping' | 'close' | 'purge'> => ({
    clients: own ? clients : createClientRepository(handle),
    users: createUserRepository(handle),
    scopes: createScopeRepository(handle),
    resources: createResourceRepository(handle),
    grants: createGrantRepository(handle, own ? statements : undefined),
    codes: createAuthorizationCodeRepository(handle, own ? statements : undefined),
    refreshTokens: createRefreshTokenRepository(handle),
    revocations: createRevocationRepository(handle, own ? statements : undefined),
    signingKeys: createSigningKeyRepository(handle),
    throttle: createThrottleRepository(handle),
    browserSessions: createBrowserSessionRepository(handle, own ? statements : undefined),
    rateLimits: createRateLimitRepository(handle),
    macNonces: createMacNonceRepository(handle, own ? statements : undefined),
    usedJtis: createUsedJtiRepository(handle, own ? statements : undefined),
    initialAccessTokens: createInitialAccessTokenRepository(handle),
    pushedRequests: createPushedRequestRepository(handle),
    deviceAuthorizations: createDeviceAuthorizationRepository(handle),
    passkeys: createPasskeyRepository(handle),
    webAuthnChallenges: createWebAuthnChallengeRepository(handle),
    mailLinks: createMailLinkRepository(handle),
    secondFactors: createSecondFactorRepository(handle),
    identityProviders: createIdentityProviderRepository(handle),
    federatedLinks: createFederatedLinkRepository(handle),
    auditEvents: createAuditEventRepository(handle),
    metricSamples: createMetricSampleRepository(handle),
  });
  const clients = createClientRepository(db, statements, CLIENT_CACHE_TTL_MS, options.nowMs);
  const purge = createPurgeRepository(db, kind, afterPurgeDeletes);

  /** Storage.atomically (decision 41): the repositories over one Kysely transaction. */
  async function atomically<T>(work: (storage: Storage) => Promise<T>): Promise<T> {
    try {
      return await db.transaction().execute((trx) => {
        const inside: Storage = {
          ...repositoriesOver(trx, false),
          purge,
          atomically: (nested) => nested(inside),
          ping: async () => {
            await sql`SELECT 1`.execute(trx);
          },
          close: () => Promise.reject(new Error('a store is not closed from inside a transaction')),
        };
        return work(inside);
      });
    } finally {
      // A client written inside (committed or not) must not be served from this process's cache as it
      // was read before.
      clients.forgetAll();
    }
  }

  // Read through the returned object, so that a wrapped pendingMigrations (tests' schema lock) is used.
  const store: SqlStorage = {
    db,
    secretCheck: createSecretCheckRepository(db, () => store.pendingMigrations()),
    ...repositoriesOver(db, true),
    purge,
    atomically,
    observeQueries: queries.observe,
    observeOperations: queries.observe,
    observeConnectionErrors(listener) {
      connectionErrorListeners.add(listener);
      return () => connectionErrorListeners.delete(listener);
    },
    async ping() {
      await sql`SELECT 1`.execute(db);
    },
    async close() {
      await stopCheckpointer();
      await db.destroy();
    },
    async migrate() {
      // A schema exactly current (every start but the first after an upgrade) needs nothing more. Any
      // other state, including migrations this code does not know (a newer Gatehouse migrated the
      // store), goes to the Migrator, which applies or refuses.
      const applied = await appliedMigrationNames();
      const known = Object.keys(await migrationProvider.getMigrations());
      if (applied?.size === known.length && known.every((name) => applied.has(name))) return [];
      const { error, results } = await (await migrator()).migrateToLatest();
      if (error) throw error instanceof Error ? error : new Error(String(error));
      return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
    },
    pendingMigrations,
    async exists() {
      return !(await store.pendingMigrations()).includes(FIRST_MIGRATION);
    },
  };
  return store;
}
