import { randomUUID } from 'node:crypto';
import { createGatehouse, type Gatehouse, type GatehouseOptions } from '../../src/compose/gatehouse.js';
import { loadConfig, type ConfigInput } from '../../src/config.js';
import { ClientRegistry, type ClientInput } from '../../src/core/clients/client-registry.js';
import type { Client, Grant, User } from '../../src/core/model.js';
import { hashPassword } from '../../src/core/users/passwords.js';
import {
  validateEmail,
  validateName,
  validatePassword,
  validateUsername,
} from '../../src/core/users/user-registry.js';
import { ManualClock } from '../../src/shared/clock.js';
import { randomToken, sha256 } from '../../src/shared/crypto.js';
import { createTestStore, type Backend, type TestStore } from './backends.js';
import { seedDevCertificate } from './dev-certificate.js';
import { HttpsClient, type TestHttpClient } from './https-client.js';
import { InjectClient, noAddressError } from './inject-client.js';
import { seedSigningKeys } from './signing-keys.js';

/**
 * How tests reach the server. 'inject' (the default) hands each request to the app in process: no
 * socket, no TLS, no listening, and no background work (the timed purge and the key ring's refresh
 * start with listening). 'https' listens on a free port with the development certificate: for what
 * needs a socket (real third-party clients, a browser, other processes, TLS, connection limits,
 * keep-alive and draining) or the background work.
 */
export type TestTransport = 'inject' | 'https';

export interface TestServerOptions extends Pick<GatehouseOptions, 'logger' | 'outboundCa'> {
  transport?: TestTransport;
}

export interface TestServer {
  gatehouse: Gatehouse;
  store: TestStore;
  clock: ManualClock;
  transport: TestTransport;
  http: TestHttpClient;
  /** Another client of the same transport whose requests come from `address` (per-source limits). */
  httpFrom(address: string): TestHttpClient;
  /** Where the server listens; on 'inject', reading it throws (nothing listens). */
  readonly url: string;
  /** The development certificate (PEM) to trust; on 'inject', reading it throws. */
  readonly ca: string;
  /** Registers a client; returns it with its one-time secret. */
  client(input: Partial<ClientInput> & { name?: string }): Promise<{ client: Client; secret: string }>;
  user(
    username?: string,
    password?: string,
    claims?: { email?: string; name?: string },
  ): Promise<{ user: User; password: string }>;
  /** Stores a grant and an authorization code for it, as /authorize would. */
  seedCode(options: {
    client: Client;
    user: User;
    redirectUri?: string;
    scope?: string[];
    codeChallenge?: string;
    codeChallengeMethod?: 'S256' | 'plain';
    grantExpiresAt?: number | null;
    /** What /authorize records for an OpenID Connect request (Core §3.1.2.1, §2). */
    nonce?: string;
    authTime?: number;
    sid?: string;
    /** The resources the authorization request named (RFC 8707), canonical URIs. */
    resources?: string[];
  }): Promise<{ code: string; grant: Grant }>;
  /**
   * Closes the server (its requests, then its background work: purge, rate-counter merges, key-ring
   * refresh, all awaited), and only then the store and its schema.
   */
  close(): Promise<void>;
}

/**
 * One argon2id hash per test password for the whole test process, made by the server's own
 * hashPassword at production cost. A hash takes 20-50 ms of a free core, but the password threads run
 * at nice 10 (passwords.ts), so beside a busy test process it takes seconds; most test users share
 * one password. Verifying a sign-in still costs a real verify.
 */
const passwordHashes = new Map<string, Promise<string>>();

function testPasswordHash(password: string): Promise<string> {
  let hash = passwordHashes.get(password);
  if (hash === undefined) {
    hash = hashPassword(password);
    passwordHashes.set(password, hash);
  }
  return hash;
}

/**
 * A user as createUser (user-registry.ts) makes one, with the same validation, but with the process's
 * hash of the password (testPasswordHash) instead of a fresh one: users with one password share a hash.
 */
async function createTestUser(
  storage: TestStore['storage'],
  clock: ManualClock,
  input: { username: string; password: string; email?: string; name?: string },
): Promise<User> {
  const now = clock.now();
  const user: User = {
    id: randomUUID(),
    username: validateUsername(input.username),
    passwordHash: await testPasswordHash(validatePassword(input.password)),
    email: input.email === undefined ? null : validateEmail(input.email),
    name: input.name === undefined ? null : validateName(input.name),
    admin: false,
    emailVerified: false,
    createdAt: now,
    updatedAt: now,
  };
  if (!(await storage.users.insert(user))) throw new Error(`user name already taken: ${user.username}`);
  return user;
}

/**
 * Starts a real Gatehouse on a fresh store, with a clock the test moves, reached in process (the
 * default) or over HTTPS on a free port (TestTransport).
 */
export async function startTestServer(
  backend: Backend,
  overrides: ConfigInput = {},
  options: TestServerOptions = {},
): Promise<TestServer> {
  const transport = options.transport ?? 'inject';
  const store = await createTestStore(backend);
  const clock = new ManualClock();
  const config = loadConfig(
    {
      dataDir: store.dataDir,
      databaseUrl: store.databaseUrl,
      port: 0,
      host: '127.0.0.1',
      issuer: 'https://gatehouse.test',
      secret: Buffer.alloc(32, 7),
      logLevel: 'silent',
      ...overrides,
    },
    {},
  );
  let gatehouse: Gatehouse | undefined;
  let url: string | undefined;
  try {
    // This process's fixed first keys (signing-keys.ts): the server's start then generates none.
    await seedSigningKeys(store.storage.signingKeys, {
      secret: config.secret,
      algorithm: config.signingAlgorithm,
      now: clock.now(),
    });
    // And its development certificate, unless the test configures one (or none: behind a proxy). The
    // server loads it at start whichever the transport, so it is seeded for both.
    if (config.tlsCert === undefined && !config.trustProxy) await seedDevCertificate(config.dataDir);
    gatehouse = await createGatehouse(config, {
      clock,
      storage: store.storage,
      logger: options.logger,
      outboundCa: options.outboundCa,
    });
    if (transport === 'https') url = await gatehouse.listen();
    else await gatehouse.app.ready();
  } catch (error) {
    // A set-up that fails halfway leaves no server running against a schema about to be dropped.
    await gatehouse?.app.close().catch(() => undefined);
    await store.cleanup();
    throw error;
  }
  const ca = gatehouse.tls?.cert ?? '';
  const app = gatehouse.app;
  const listening = url;
  const clientFrom = (address?: string): TestHttpClient =>
    listening === undefined
      ? new InjectClient(app, config.basePath, address)
      : new HttpsClient(listening.replace('localhost', '127.0.0.1'), ca, address);
  const http = clientFrom();
  const others: TestHttpClient[] = [];
  const storage = store.storage;
  return {
    gatehouse,
    store,
    clock,
    transport,
    http,
    httpFrom(address) {
      const other = clientFrom(address);
      others.push(other);
      return other;
    },
    get url() {
      if (listening === undefined) throw noAddressError('server.url');
      return listening;
    },
    get ca() {
      if (listening === undefined) throw noAddressError('server.ca');
      return ca;
    },
    async client(input) {
      const { client, secret } = await new ClientRegistry(storage, clock).create({
        name: input.name ?? 'test client',
        ...input,
      });
      return { client, secret: secret ?? '' };
    },
    async user(
      username = `user-${randomUUID().slice(0, 8)}`,
      password = 'correct horse battery',
      claims: { email?: string; name?: string } = {},
    ) {
      const user = await createTestUser(storage, clock, { username, password, ...claims });
      return { user, password };
    },
    async seedCode(options) {
      const now = clock.now();
      const scope = options.scope ?? options.client.scopes;
      const grant: Grant = {
        id: randomUUID(),
        clientId: options.client.id,
        userId: options.user.id,
        scope,
        createdAt: now,
        expiresAt: options.grantExpiresAt ?? null,
        revokedAt: null,
      };
      await storage.grants.insert(grant);
      const code = randomToken('ac_');
      await storage.codes.insert({
        hash: sha256(code),
        clientId: options.client.id,
        userId: options.user.id,
        grantId: grant.id,
        redirectUri: options.redirectUri ?? options.client.redirectUris[0] ?? '',
        scope,
        codeChallenge: options.codeChallenge ?? null,
        codeChallengeMethod: options.codeChallengeMethod ?? null,
        createdAt: now,
        expiresAt: now + config.authorizationCodeTtl,
        consumedAt: null,
        nonce: options.nonce ?? null,
        authTime: options.authTime ?? null,
        sid: options.sid ?? null,
        resources: options.resources ?? [],
        dpopJkt: null,
      });
      return { code, grant };
    },
    async close() {
      http.close();
      for (const other of others.splice(0)) other.close();
      try {
        await gatehouse.app.close();
      } finally {
        await store.cleanup();
      }
    },
  };
}
