import cluster from 'node:cluster';
import { randomBytes, X509Certificate } from 'node:crypto';
import { hostname } from 'node:os';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import type { GatehouseConfig } from '../config.js';
import { createEngine, type Engine } from '../core/engine.js';
import type { AuditSink } from '../core/audit/audit-log.js';
import type { UpstreamProviders } from '../core/federation/upstream.js';
import { deriveServerKeys, enginePolicy } from './engine-policy.js';
import type { KeyRing } from '../core/keys/key-ring.js';
import { DEFAULT_PURGE_PACING, Purger, PurgeScheduler, type PurgePolicy } from '../core/ops/purge.js';
import type { GatehouseMetrics } from '../http/metrics.js';
import { FigureRecorder } from '../core/ops/figures.js';
import { COUNT_LIMIT, Statistics, type ServedCertificate } from '../core/ops/statistics.js';
import { systemClock, type Clock } from '../shared/clock.js';
import type { GatehouseStore } from '../core/ports.js';
import { openStore, storeOpensFromOtherProcesses, type StoreOpenOptions } from '../storage/open-store.js';
import type { PurgeProcess } from './purge-process.js';
import { migrateVerified, openExistingVerified, StoreStateError } from './secret-check.js';
import type { TlsFiles } from './dev-certificate.js';

/** The store `config` names, opened by its URL (src/storage/open-store.ts). */
export function openStorage(config: GatehouseConfig, extra: Partial<StoreOpenOptions> = {}): GatehouseStore {
  return openStore({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    sqliteSynchronous: config.sqliteSynchronous,
    ...extra,
  });
}

export interface Gatehouse {
  app: FastifyInstance;
  /** Everything the server does, over `storage`. */
  engine: Engine;
  /** For operators' and tests' own reads and set-up; the server itself goes through `engine`. */
  storage: GatehouseStore;
  /** The engine's key ring. */
  keyRing: KeyRing;
  /**
   * Deletes dead rows in this process (operators' and tests' runs). Once listening, the timed purge
   * (config.purgeIntervalSeconds) runs in a purge process of its own, or on this purger when
   * `purgeProcess` is off.
   */
  purger: Purger;
  metrics: GatehouseMetrics;
  /**
   * The dashboard's figures of this process (decision 43): flushed to the store every 15 seconds once
   * listening, and at close; tests flush it themselves.
   */
  figures: FigureRecorder;
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
  storage?: GatehouseStore;
  logger?: FastifyServerOptions['logger'];
  /** Process metrics (CPU, memory, event loop) in /metrics: on in `gatehouse serve`. */
  processMetrics?: boolean;
  /**
   * Runs the automatic purge in a process of its own (purge-process.ts). By default it does when
   * Gatehouse opens its own store, on a file or PostgreSQL, and keeps the system's time; with a store
   * or a clock given (tests), the purge runs in this process, on that store and by that clock.
   */
  purgeProcess?: boolean;
  /**
   * Certificates (PEM) trusted for jwks_uri fetches and upstream identity providers beside the system's
   * roots: tests give the CA of their own HTTPS servers. Operators use NODE_EXTRA_CA_CERTS.
   */
  outboundCa?: string;
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
  // The server's own modules (Fastify, metrics, TLS, the purge process) are loaded here, not when
  // this module is: the command line opens engines through openEngine below and needs none of them.
  const [
    { buildApp },
    { createMetrics },
    { clusterMetrics, localMetrics },
    { createJwksFetcher },
    { createClientMetadataFetcher },
    { OpenIdUpstreamProviders, DEFAULT_UPSTREAM_FETCH_POLICY },
    { createLogMailer },
    { startPurgeProcess },
    { loadTls },
  ] = await Promise.all([
    import('../http/app.js'),
    import('../http/metrics.js'),
    import('./cluster-metrics.js'),
    import('../outbound/jwks-fetcher.js'),
    import('../outbound/client-metadata-fetcher.js'),
    import('../outbound/upstream-client.js'),
    import('../outbound/log-mailer.js'),
    import('./purge-process.js'),
    import('./dev-certificate.js'),
  ]);
  const jwksFetcher = createJwksFetcher({
    allowPrivateAddresses: config.allowPrivateJwksUri,
    timeoutMs: config.jwksUriTimeoutMs,
    maxBytes: config.jwksUriMaxBytes,
    ca: options.outboundCa,
  });
  // Decision 46: documents are fetched under jwks_uri's limits, private addresses under their own switch.
  const clientMetadataFetcher = createClientMetadataFetcher({
    allowPrivateAddresses: config.allowPrivateClientMetadata,
    timeoutMs: config.jwksUriTimeoutMs,
    maxBytes: config.jwksUriMaxBytes,
    ca: options.outboundCa,
  });
  // Decision 35: over SMTP when configured (nodemailer is loaded only then), else into the log.
  const mailer =
    config.smtpUrl === undefined
      ? createLogMailer({ info: (fields, message) => app.log.info(fields, message) })
      : (await import('../outbound/smtp-mailer.js')).createSmtpMailer({
          url: config.smtpUrl,
          from: config.mailFrom,
        });
  // Decision 38: upstream identity providers through openid-client, under the outbound limits.
  const upstreamProviders = new OpenIdUpstreamProviders({
    identityProviderKey: deriveServerKeys(config.secret).identityProviderKey,
    policy: { ...DEFAULT_UPSTREAM_FETCH_POLICY, ca: options.outboundCa },
    clock,
  });
  // Decision 43: this process's own rows of the dashboard's figures; the id tells processes apart
  // (two apps in one test process too).
  const figures = new FigureRecorder(
    storage.metricSamples,
    clock,
    `${hostname().slice(0, 40)}/${process.pid}/${randomBytes(4).toString('hex')}`,
    () => storage.browserSessions.countLive(clock.now(), COUNT_LIMIT),
  );
  const engine = createEngine({
    storage,
    clock,
    policy: enginePolicy(config),
    jwksFetcher,
    clientMetadataFetcher,
    mailer,
    upstreamProviders,
    auditSink: {
      emit(event) {
        // Decision 41: one log line per event, once its change committed, for a log pipeline.
        app.log.info({ audit: event }, 'audit event');
        // Decision 43: sign-ins, failures and lockouts are counted from their events.
        figures.auditEvent(event.type);
      },
    },
  });
  await engine.prepare();

  const metrics = createMetrics({ processMetrics: options.processMetrics ?? false, figures });
  const stopObservingQueries = storage.observeOperations((event) =>
    metrics.storeQuery(event.operation, event.durationMs / 1000, event.failed),
  );
  const tls = config.trustProxy && config.tlsCert === undefined ? undefined : await loadTls(config);
  const purgeObserver = {
    purged: (kind: string, rows: number) => metrics.purged(kind, rows),
    failed: (err: unknown) => app.log.warn({ err }, 'purge failed; retrying at the next interval'),
  };
  const purgePolicy: PurgePolicy = {
    ...DEFAULT_PURGE_PACING,
    batchSize: config.purgeBatchSize,
    maxRowsPerSecond: config.purgeMaxRowsPerSecond,
    accessTokenTtl: config.accessTokenTtl,
    unusedOpenClientSeconds: config.dynamicRegistrationUnusedDays * 86_400,
    auditRetentionSeconds: config.auditRetentionDays * 86_400,
  };
  const purger = new Purger(storage.purge, clock, purgePolicy, purgeObserver);
  const statistics = new Statistics({
    clock,
    samples: storage.metricSamples,
    sessions: storage.browserSessions,
    signingKeys: storage.signingKeys,
    pendingMigrations: () => storage.pendingMigrations(),
    purgeBacklog: (limit) => purger.backlog(limit),
    certificate: tls && servedCertificate(tls.cert),
    flushOwn: () => figures.flush(),
  });
  const app = await buildApp({
    statistics,
    engine,
    config,
    health: { ping: () => storage.ping(), pendingMigrations: () => storage.pendingMigrations() },
    rateLimitCounters: storage.rateLimits,
    cookieSecret: deriveServerKeys(config.secret).cookieSecret,
    tls: tls && { key: tls.key, cert: tls.cert },
    logger: options.logger,
    metrics,
    collectMetrics: cluster.isWorker ? clusterMetrics(metrics.registry) : localMetrics(metrics.registry),
  });

  if (config.smtpUrl === undefined) {
    app.log.info(
      'no GATEHOUSE_SMTP_URL: recovery and verification mails are written to this log (decision 35)',
    );
  }

  const stopObservingConnectionErrors = storage.observeConnectionErrors((error) =>
    app.log.warn(
      { err: { message: error.message } },
      'an idle PostgreSQL connection failed; the pool replaces it on demand',
    ),
  );

  const purgeScheduler = new PurgeScheduler(
    purger,
    { intervalSeconds: config.purgeIntervalSeconds },
    purgeObserver,
  );
  const purgeApart =
    options.purgeProcess ??
    (options.storage === undefined && options.clock === undefined && storeOpensFromOtherProcesses(config));
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
          for (const [kind, rows] of Object.entries(purged)) metrics.purged(kind, rows);
          for (const [millis, failed] of statements) metrics.storeQuery('raw', millis / 1000, failed);
          for (const message of failures) {
            app.log.warn({ err: { message } }, 'purge failed; retrying at the next interval');
          }
        },
        lost(reason, restartInMs) {
          if (closing) return;
          app.log.warn({ reason, restartInMs }, 'the purge process is gone; starting another');
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
    await Promise.all([
      purgeScheduler.stop(),
      purgeProcess?.stop(),
      engine.close(),
      figures.stop().catch((err: unknown) => app.log.warn({ err }, 'could not write the last figures')),
    ]);
    stopObservingQueries();
    stopObservingConnectionErrors();
  });

  const { keyRing } = engine;
  return {
    app,
    engine,
    storage,
    keyRing,
    purger,
    metrics,
    figures,
    get purgeProcessPid() {
      return purgeProcess?.pid;
    },
    tls,
    config,
    async listen() {
      await app.listen({ port: config.port, host: config.host });
      startPurge();
      figures.start((err) =>
        app.log.warn({ err }, 'could not write the figures; they are added at the next flush'),
      );
      keyRing.start((err) =>
        app.log.warn({ err }, 'could not re-read the signing keys; retrying at the next interval'),
      );
      const address = app.server.address();
      const port = typeof address === 'object' && address !== null ? address.port : config.port;
      return listenUrl(config, tls !== undefined, port);
    },
    async close() {
      await app.close();
      await storage.close();
    },
  };
}

/** What the dashboard says of the certificate this process serves (decision 43). */
function servedCertificate(pem: string): ServedCertificate | undefined {
  try {
    const certificate = new X509Certificate(pem);
    return { subject: certificate.subject, notAfter: Math.floor(Date.parse(certificate.validTo) / 1000) };
  } catch {
    return undefined;
  }
}

/**
 * Where a server on `config` listens, as a URL: the host it is bound to (a wildcard address, which
 * every interface answers, as localhost), the port and the base path. Not the issuer, which names the
 * server as its clients reach it (a proxy, another host name).
 */
export function listenUrl(
  config: Pick<GatehouseConfig, 'host' | 'basePath'>,
  tls: boolean,
  port: number,
): string {
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  // An IPv6 address is bracketed in a URL (RFC 3986 §3.2.2).
  const authority = host.includes(':') ? `[${host}]` : host;
  return `${tls ? 'https' : 'http'}://${authority}:${port}${config.basePath}`;
}

/** An engine over an existing store, for one command; close() closes the engine, then the store. */
export interface OpenEngine {
  engine: Engine;
  close(): Promise<void>;
}

/**
 * The command line's engine: an existing, current store whose secret is the configured one
 * (openExistingVerified); it never creates or migrates a store (only serve, init and migrate do).
 */
export async function openEngine(
  config: GatehouseConfig,
  options: { clock?: Clock; outboundCa?: string; auditSink?: AuditSink } = {},
): Promise<OpenEngine> {
  const clock = options.clock ?? systemClock;
  const storage = openStorage(config);
  try {
    await openExistingVerified(storage, config.secret, clock);
  } catch (error) {
    await storage.close();
    throw error;
  }
  // `idps create --issuer` discovers the provider; openid-client is loaded only by a command that does.
  const upstreamProviders = lazyUpstreamProviders(async () => {
    const { OpenIdUpstreamProviders, DEFAULT_UPSTREAM_FETCH_POLICY } =
      await import('../outbound/upstream-client.js');
    return new OpenIdUpstreamProviders({
      identityProviderKey: deriveServerKeys(config.secret).identityProviderKey,
      policy: { ...DEFAULT_UPSTREAM_FETCH_POLICY, ca: options.outboundCa },
      clock,
    });
  });
  const engine = createEngine({
    storage,
    clock,
    policy: enginePolicy(config),
    upstreamProviders,
    auditSink: options.auditSink,
  });
  return {
    engine,
    async close() {
      await engine.close();
      await storage.close();
    },
  };
}

/** An upstream client made at its first use (a command line's cold start pays only for what it uses). */
function lazyUpstreamProviders(make: () => Promise<UpstreamProviders>): UpstreamProviders {
  let made: Promise<UpstreamProviders> | undefined;
  const get = () => (made ??= make());
  return {
    discover: async (issuer) => (await get()).discover(issuer),
    begin: async (provider, redirectUri, request) => (await get()).begin(provider, redirectUri, request),
    finish: async (provider, redirectUri, callbackUrl, expected) =>
      (await get()).finish(provider, redirectUri, callbackUrl, expected),
  };
}

/** What initStore did. */
export interface StoreInitialization {
  /** False when a current store was there already (then nothing but a missing built-in was added). */
  created: boolean;
  applied: string[];
  /** The active signing key. */
  kid: string | undefined;
}

/**
 * `gatehouse init`: creates a store (schema, secret check value, built-in scopes, first signing key). A
 * store that exists with pending migrations is refused: upgrading is `gatehouse migrate`'s decision.
 */
export async function initStore(
  config: GatehouseConfig,
  clock: Clock = systemClock,
): Promise<StoreInitialization> {
  const storage = openStorage(config);
  try {
    const pending = await storage.pendingMigrations();
    const exists = await storage.exists();
    if (exists && pending.length > 0) {
      throw new StoreStateError(
        'migrations_pending',
        `a store exists here and its schema is not current (pending: ${pending.join(', ')}): run "gatehouse migrate"`,
      );
    }
    const applied = await migrateVerified(storage, config.secret, clock);
    const engine = createEngine({ storage, clock, policy: enginePolicy(config) });
    await engine.prepare();
    await engine.close();
    return { created: !exists, applied, kid: engine.keyRing.activeKid };
  } finally {
    await storage.close();
  }
}
