import cluster from 'node:cluster';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import type { GatehouseConfig } from '../config.js';
import { KeyRing } from '../core/key-ring.js';
import type { Scope } from '../core/model.js';
import { DEFAULT_PURGE_POLICY, POSTGRES_PURGE_PACING, Purger, PurgeScheduler } from '../core/purge.js';
import { TokenEndpoint } from '../core/token-endpoint.js';
import { TokenIssuer } from '../core/token-issuer.js';
import { buildApp } from '../http/app.js';
import { createMetrics, type GatehouseMetrics } from '../http/metrics.js';
import { clusterMetrics, localMetrics } from './cluster-metrics.js';
import { deriveKey } from '../shared/crypto.js';
import { systemClock, type Clock } from '../shared/clock.js';
import {
  createSqlStorage,
  sqliteFilename,
  type SqlStorage,
  type SqlStorageOptions,
} from '../storage/sql/index.js';
import { startPurgeProcess, type PurgeProcess } from './purge-process.js';
import { migrateVerified } from './secret-check.js';
import { loadTls, type TlsFiles } from './dev-certificate.js';

export const BUILT_IN_SCOPES: ReadonlyArray<Omit<Scope, 'createdAt'>> = [
  { name: 'profile', description: 'See your user name and account details' },
  { name: 'admin', description: 'Manage Gatehouse: clients, users, grants and keys' },
];

/** The purpose-bound keys derived from the one server secret. */
export function deriveServerKeys(secret: Buffer) {
  return {
    keyEncryptionKey: deriveKey(secret, 'signing-key-encryption'),
    macSecret: deriveKey(secret, 'mac-keys'),
    cookieSecret: deriveKey(secret, 'cookies'),
  };
}

export function openStorage(config: GatehouseConfig, extra: Partial<SqlStorageOptions> = {}): SqlStorage {
  return createSqlStorage({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    sqliteSynchronous: config.sqliteSynchronous,
    ...extra,
  });
}

export interface Gatehouse {
  app: FastifyInstance;
  storage: SqlStorage;
  keyRing: KeyRing;
  /**
   * Deletes dead rows in this process (operators' and tests' runs). Once listening, the timed purge
   * (config.purgeIntervalSeconds) runs in a purge process of its own, or on this purger when
   * `purgeProcess` is off.
   */
  purger: Purger;
  metrics: GatehouseMetrics;
  /** The purge process's id while one runs (see GatehouseOptions.purgeProcess). */
  readonly purgeProcessPid: number | undefined;
  tls: TlsFiles | undefined;
  config: GatehouseConfig;
  /** Starts listening; returns the bound URL. */
  listen(): Promise<string>;
  /**
   * Stops accepting connections, lets requests in flight finish, stops the background work (purge,
   * rate-counter merges, key-ring refresh) and waits for it, then closes the store. `app.close()` alone
   * does all of it but the last step, for a caller that owns the store.
   */
  close(): Promise<void>;
}

export interface GatehouseOptions {
  clock?: Clock;
  storage?: SqlStorage;
  logger?: FastifyServerOptions['logger'];
  /** Process metrics (CPU, memory, event loop) in /metrics: on in `gatehouse serve`. */
  processMetrics?: boolean;
  /**
   * Runs the automatic purge in a process of its own (purge-process.ts). By default it does when
   * Gatehouse opens its own store, on a file or PostgreSQL, and keeps the system's time; with a store
   * or a clock given (tests), the purge runs in this process, on that store and by that clock.
   */
  purgeProcess?: boolean;
}

/** The composition root: store, keys, engine and HTTP application, wired from one config. */
export async function createGatehouse(
  config: GatehouseConfig,
  options: GatehouseOptions = {},
): Promise<Gatehouse> {
  const clock = options.clock ?? systemClock;
  const storage = options.storage ?? openStorage(config);
  // The secret is checked before anything is written, the first migration included.
  try {
    await migrateVerified(storage, config.secret, clock);
  } catch (error) {
    // A store opened here is closed again, or its background threads would keep the process alive.
    if (options.storage === undefined) await storage.close();
    throw error;
  }
  const now = clock.now();
  await storage.scopes.ensure(BUILT_IN_SCOPES.map((scope) => ({ ...scope, createdAt: now })));

  const keys = deriveServerKeys(config.secret);
  const keyRing = new KeyRing({
    store: storage.signingKeys,
    keyEncryptionKey: keys.keyEncryptionKey,
    clock,
    algorithm: config.signingAlgorithm,
    retiredKeyRetentionSeconds: config.retiredKeyRetentionSeconds,
    refreshIntervalSeconds: config.keyRefreshIntervalSeconds,
  });
  await keyRing.init();

  const issuer = new TokenIssuer({
    keyRing,
    clock,
    refreshTokens: storage.refreshTokens,
    issuer: config.issuer,
    audience: config.issuer,
    accessTokenTtl: config.accessTokenTtl,
    refreshTokenTtl: config.refreshTokenTtl,
    macSecret: keys.macSecret,
  });
  const tokenEndpoint = new TokenEndpoint({
    storage,
    issuer,
    clock,
    policy: {
      refreshReuseGraceSeconds: config.refreshReuseGraceSeconds,
      passwordFailuresPerUsername: config.passwordFailuresPerUsername,
      passwordFailuresPerSource: config.passwordFailuresPerSource,
      passwordFailureWindowSeconds: config.passwordFailureWindowSeconds,
      accessTokenTtl: config.accessTokenTtl,
      refreshTokenTtl: config.refreshTokenTtl,
      allowPublicPasswordGrant: config.allowPublicPasswordGrant,
    },
  });

  const metrics = createMetrics({ processMetrics: options.processMetrics ?? false });
  const stopObservingQueries = storage.observeQueries((event) =>
    metrics.storeQuery(event.operation, event.durationMs / 1000, event.failed),
  );
  const tls = config.trustProxy && config.tlsCert === undefined ? undefined : await loadTls(config);
  const app = await buildApp({
    config,
    storage,
    keyRing,
    tokenEndpoint,
    issuer,
    clock,
    serverKeys: keys,
    tls: tls && { key: tls.key, cert: tls.cert },
    logger: options.logger,
    metrics,
    collectMetrics: cluster.isWorker ? clusterMetrics(metrics.registry) : localMetrics(metrics.registry),
  });

  const stopObservingConnectionErrors = storage.observeConnectionErrors((error) =>
    app.log.warn(
      { err: { message: error.message } },
      'an idle PostgreSQL connection failed; the pool replaces it on demand',
    ),
  );

  const purgeObserver = {
    purged: (table: string, rows: number) => metrics.purged(table, rows),
    failed: (err: unknown) => app.log.warn({ err }, 'purge failed; retrying at the next interval'),
  };
  const purgePolicy = {
    ...DEFAULT_PURGE_POLICY,
    ...(storage.dialect === 'postgres' ? POSTGRES_PURGE_PACING : {}),
    batchSize: config.purgeBatchSize,
    maxRowsPerSecond: config.purgeMaxRowsPerSecond,
    accessTokenTtl: config.accessTokenTtl,
  };
  const purger = new Purger(storage.purge, clock, purgePolicy, purgeObserver);
  const purgeScheduler = new PurgeScheduler(
    purger,
    { intervalSeconds: config.purgeIntervalSeconds },
    purgeObserver,
  );
  const purgeApart =
    options.purgeProcess ??
    (options.storage === undefined &&
      options.clock === undefined &&
      (storage.dialect === 'postgres' || sqliteFilename(config.databaseUrl, config.dataDir) !== ':memory:'));
  let purgeProcess: PurgeProcess | undefined;
  let closing = false;
  const startPurge = () => {
    if (!purgeApart || config.purgeIntervalSeconds <= 0) {
      purgeScheduler.start();
      return;
    }
    purgeProcess = startPurgeProcess(
      {
        databaseUrl: config.databaseUrl,
        dataDir: config.dataDir,
        sqliteSynchronous: config.sqliteSynchronous,
        intervalSeconds: config.purgeIntervalSeconds,
        policy: purgePolicy,
      },
      {
        report({ purged, statements, failures }) {
          for (const [table, rows] of Object.entries(purged)) metrics.purged(table, rows);
          for (const [millis, failed] of statements) metrics.storeQuery('raw', millis / 1000, failed);
          for (const message of failures) {
            app.log.warn({ err: { message } }, 'purge failed; retrying at the next interval');
          }
        },
        lost(reason) {
          if (closing) return;
          app.log.warn({ reason }, 'the purge process is gone; purging in this process instead');
          purgeProcess = undefined;
          purgeScheduler.start();
        },
      },
    );
  };
  // onClose runs once the server has stopped accepting and its requests have finished; the store is
  // closed only after it. The purge ends after its current batch and the key ring's refresh finishes,
  // both awaited, so nothing started here touches the store once close() has returned (the rate-limit
  // counters are merged one last time by their own hook, registered in buildApp, which runs after this).
  app.addHook('onClose', async function stopBackgroundWork() {
    closing = true;
    await Promise.all([purgeScheduler.stop(), purgeProcess?.stop(), keyRing.close()]);
    stopObservingQueries();
    stopObservingConnectionErrors();
  });

  return {
    app,
    storage,
    keyRing,
    purger,
    metrics,
    get purgeProcessPid() {
      return purgeProcess?.pid;
    },
    tls,
    config,
    async listen() {
      await app.listen({ port: config.port, host: config.host });
      startPurge();
      keyRing.start((err) =>
        app.log.warn({ err }, 'could not re-read the signing keys; retrying at the next interval'),
      );
      const address = app.server.address();
      const port = typeof address === 'object' && address !== null ? address.port : config.port;
      return `${tls ? 'https' : 'http'}://${config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host}:${port}${config.basePath}`;
    },
    async close() {
      await app.close();
      await storage.close();
    },
  };
}
