import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { waitFor } from '../helpers/wait.js';
import BetterSqlite3 from 'better-sqlite3';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { sql } from 'kysely';
import { ClientRegistry } from '../../src/core/clients/client-registry.js';
import type { Client, Grant } from '../../src/core/model.js';
import { UserRegistry } from '../../src/core/users/user-registry.js';
import { systemClock } from '../../src/shared/clock.js';
import { randomToken, sha256 } from '../../src/shared/crypto.js';
import { createSqlStorage, type SqlStorage } from '../../src/storage/sql/index.js';
import { backends, TEST_DATABASE_URL, type Backend } from '../helpers/backends.js';
import { basicAuth, type HttpsClient } from '../helpers/https-client.js';
import { runSql } from '../helpers/store-sql.js';
import { createDatabase, spawnServer, type SpawnOptions } from '../helpers/spawned-server.js';

const ISSUER = 'https://gatehouse.crash.test';
const REDIRECT = 'https://app.test/cb';

interface Fixture {
  storage: SqlStorage;
  options: SpawnOptions;
  cleanup(): Promise<void>;
}

async function fixture(backend: Backend): Promise<Fixture> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-crash-'));
  const database = backend === 'postgres' ? await createDatabase(TEST_DATABASE_URL as string) : undefined;
  const storage = createSqlStorage({ dataDir, databaseUrl: database?.url });
  await storage.migrate();
  return {
    storage,
    options: {
      dataDir,
      databaseUrl: database?.url,
      // The issuer is fixed, so tokens issued before the crash are for the server after it.
      env: { GATEHOUSE_ISSUER: ISSUER, GATEHOUSE_RATE_LIMITS: 'off' },
    },
    async cleanup() {
      await storage.close();
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function seedCodes(storage: SqlStorage, client: Client, userId: string, n: number): Promise<string[]> {
  const codes: string[] = [];
  const now = systemClock.now();
  for (let i = 0; i < n; i++) {
    const grant: Grant = {
      id: randomUUID(),
      clientId: client.id,
      userId,
      scope: ['read'],
      createdAt: now,
      expiresAt: null,
      revokedAt: null,
    };
    await storage.grants.insert(grant);
    const code = randomToken('ac_');
    await storage.codes.insert({
      hash: sha256(code),
      clientId: client.id,
      userId,
      grantId: grant.id,
      redirectUri: REDIRECT,
      scope: ['read'],
      codeChallenge: null,
      codeChallengeMethod: null,
      createdAt: now,
      expiresAt: now + 600,
      consumedAt: null,
      nonce: null,
      authTime: null,
      sid: null,
      resources: [],
      dpopJkt: null,
    });
    codes.push(code);
  }
  return codes;
}

interface Issued {
  access: string[];
  /** The newest refresh token of each chain whose last answer we saw (nothing in flight for it). */
  refresh: string[];
  /** Refresh tokens whose rotation was in flight when the server died: rotated atomically, or not at all. */
  refreshInFlight: string[];
  /** 200s per code before the crash. */
  redeemed: Map<string, number>;
  /** Requests cut off by the kill: proof that it struck mid-load. */
  cut: number;
}

/**
 * Code redemptions, refreshes and client-credentials requests from `concurrency` callers, until the
 * server dies under them (the test kills it after `killAfter` successes).
 */
async function load(
  http: HttpsClient,
  credentials: { id: string; secret: string },
  codes: string[],
  killAfter: number,
  kill: () => void,
): Promise<Issued> {
  const issued: Issued = { access: [], refresh: [], refreshInFlight: [], redeemed: new Map(), cut: 0 };
  const refreshQueue: string[] = [];
  let successes = 0;
  let nextCode = 0;
  let dead = false;
  const succeeded = () => {
    successes++;
    if (successes === killAfter) kill();
  };
  const caller = async (index: number) => {
    for (let step = 0; !dead; step++) {
      const kind =
        refreshQueue.length > 0 && step % 3 === 1
          ? 'refresh'
          : nextCode < codes.length && step % 3 !== 2
            ? 'code'
            : 'cc';
      const form: Record<string, string> =
        kind === 'code'
          ? { grant_type: 'authorization_code', code: codes[nextCode++] as string, redirect_uri: REDIRECT }
          : kind === 'refresh'
            ? { grant_type: 'refresh_token', refresh_token: refreshQueue.shift() as string }
            : { grant_type: 'client_credentials', scope: 'read' };
      try {
        const res = await http.token(form, credentials);
        if (res.status !== 200)
          throw new Error(`caller ${index}: ${kind} answered ${res.status} ${res.text}`);
        const body = res.json as { access_token: string; refresh_token?: string };
        issued.access.push(body.access_token);
        if (kind === 'code') {
          const code = form.code as string;
          issued.redeemed.set(code, (issued.redeemed.get(code) ?? 0) + 1);
        }
        if (body.refresh_token !== undefined) refreshQueue.push(body.refresh_token);
        succeeded();
      } catch (err) {
        if (!/ECONNRESET|socket hang up|ECONNREFUSED|EPIPE/.test((err as Error).message)) throw err;
        dead = true;
        issued.cut++;
        if (kind === 'refresh') issued.refreshInFlight.push(form.refresh_token as string);
      }
    }
  };
  await Promise.all(Array.from({ length: 12 }, (_, i) => caller(i)));
  issued.refresh = refreshQueue;
  return issued;
}

async function introspect(
  http: HttpsClient,
  credentials: { id: string; secret: string },
  token: string,
): Promise<Record<string, unknown>> {
  const res = await http.request('/introspect', {
    form: { token },
    headers: { authorization: basicAuth(credentials.id, credentials.secret) },
  });
  assert.equal(res.status, 200, res.text);
  return res.json as Record<string, unknown>;
}

for (const backend of backends()) {
  describe(`crash safety (${backend})`, () => {
    it('every token answered with 200 survives SIGKILL, no code is redeemed twice, the store is intact', async () => {
      const f = await fixture(backend);
      try {
        const { client, secret } = await new ClientRegistry(f.storage, systemClock).create({
          name: 'crash test',
          redirect_uris: [REDIRECT],
          grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
          scopes: ['read'],
        });
        const credentials = { id: client.id, secret: secret as string };
        const user = await new UserRegistry(f.storage, systemClock).create({
          username: 'crash-user',
          password: 'a long enough password',
        });
        const codes = await seedCodes(f.storage, client, user.id, 240);

        const first = await spawnServer(f.options);
        const issued = await load(first.http, credentials, codes, 150, () => first.child.kill('SIGKILL'));
        await first.exited;
        first.http.close();
        assert.ok(issued.access.length >= 150, `answers before the kill: ${issued.access.length}`);
        assert.ok(issued.cut > 0, 'requests were in flight when the server was killed');

        if (backend === 'sqlite') {
          // The file as the killed process left it (with its write-ahead log), before anything repairs it.
          const raw = new BetterSqlite3(join(f.options.dataDir, 'gatehouse.db'));
          assert.equal(raw.pragma('integrity_check', { simple: true }), 'ok');
          raw.close();
        }

        const second = await spawnServer(f.options);
        try {
          // Keys survived: every access token verifies against the restarted server's JWKS.
          const jwks = createLocalJWKSet((await second.http.request('/jwks')).json as JSONWebKeySet);
          for (const token of issued.access) {
            const { payload } = await jwtVerify(token, jwks, { issuer: ISSUER, typ: 'at+jwt' });
            const revoked = await f.storage.revocations.isAccessTokenRevoked(payload.jti as string);
            assert.equal(revoked, false);
            if (typeof payload.gid === 'string') {
              const grant = await f.storage.grants.get(payload.gid);
              assert.ok(grant !== undefined && grant.revokedAt === null, 'grant live');
            }
            assert.equal((await introspect(second.http, credentials, token)).active, true);
          }
          for (const token of issued.refresh) {
            const stored = await f.storage.refreshTokens.get(sha256(token));
            assert.ok(stored !== undefined && stored.retiredAt === null, 'refresh token stored and live');
            assert.equal((await introspect(second.http, credentials, token)).active, true);
          }
          // A rotation cut by the kill happened whole or not at all: the old token is live, or it is
          // retired and its grant has a newer live token.
          for (const token of issued.refreshInFlight) {
            const old = await f.storage.refreshTokens.get(sha256(token));
            assert.ok(old !== undefined);
            if (old.retiredAt !== null) {
              const successors = sql<{ n: number }>`SELECT count(*) AS n FROM refresh_tokens
                WHERE grant_id = ${old.grantId} AND retired_at IS NULL AND created_at >= ${old.createdAt}`;
              const rows = await runSql(f.storage, successors);
              assert.equal(Number(rows[0]?.n), 1, 'a retired token has exactly one successor');
            }
          }

          // Every code, again: one that answered 200 before never answers 200 again; one that was in
          // flight or never sent may answer 200 now, but only once.
          const again = await Promise.all(
            codes.map(async (code) => {
              const res = await second.http.token(
                { grant_type: 'authorization_code', code, redirect_uri: REDIRECT },
                credentials,
              );
              return [code, res.status] as const;
            }),
          );
          let fresh = 0;
          for (const [code, status] of again) {
            const before = issued.redeemed.get(code) ?? 0;
            assert.ok(before <= 1);
            if (before === 1) assert.equal(status, 400, 'a redeemed code is refused after the restart');
            if (status === 200) fresh++;
            assert.ok(before + (status === 200 ? 1 : 0) <= 1, 'redeemed at most once');
          }
          assert.ok(fresh > 0, 'codes never sent before the crash still work');
          const consumed = await runSql(
            f.storage,
            sql<{ n: number }>`SELECT count(*) AS n FROM authorization_codes WHERE consumed_at IS NULL`,
          );
          assert.equal(Number(consumed[0]?.n), 0, 'every code is consumed now');
        } finally {
          await second.stop();
        }

        if (backend === 'sqlite') {
          const raw = new BetterSqlite3(join(f.options.dataDir, 'gatehouse.db'));
          assert.equal(raw.pragma('integrity_check', { simple: true }), 'ok');
          assert.deepEqual(raw.pragma('foreign_key_check'), []);
          raw.close();
        } else {
          // PostgreSQL: every constraint still validated and no row orphaned.
          const invalid = await runSql(
            f.storage,
            sql<{ n: number }>`SELECT count(*) AS n FROM pg_constraint c
              JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = 'public' AND NOT c.convalidated`,
          );
          assert.equal(Number(invalid[0]?.n), 0);
          const orphans = await runSql(
            f.storage,
            sql<{ n: number }>`SELECT
              (SELECT count(*) FROM refresh_tokens t LEFT JOIN grants g ON g.id = t.grant_id WHERE g.id IS NULL) +
              (SELECT count(*) FROM authorization_codes c LEFT JOIN grants g ON g.id = c.grant_id WHERE g.id IS NULL) AS n`,
          );
          assert.equal(Number(orphans[0]?.n), 0);
        }
      } finally {
        await f.cleanup();
      }
    });
  });
}

/** An HTTP/1.1 request over TLS whose body is sent in two parts, so it is in flight for as long as we like. */
function startSlowRequest(
  port: number,
  ca: string,
  path: string,
  body: string,
  headers: Record<string, string>,
) {
  const socket: TLSSocket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' });
  let response = '';
  const done = new Promise<string>((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => (response += chunk.toString('utf8')));
    socket.on('end', () => resolve(response));
    socket.on('close', () => resolve(response));
    socket.on('error', reject);
  });
  const head =
    `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\n` +
    Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('') +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
  const half = Math.floor(body.length / 2);
  const connected = new Promise<void>((resolve) => socket.once('secureConnect', () => resolve()));
  return {
    async sendFirstHalf() {
      await connected;
      socket.write(head + body.slice(0, half));
    },
    sendRest() {
      socket.write(body.slice(half));
    },
    response: done,
    destroy: () => socket.destroy(),
  };
}

async function connectionRefused(port: number, ca: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => {
      socket.destroy();
      resolve(false);
    });
    socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

describe('graceful shutdown (SIGTERM)', () => {
  it('finishes the request in flight, refuses new connections, exits 0', async () => {
    const f = await fixture('sqlite');
    try {
      const { client, secret } = await new ClientRegistry(f.storage, systemClock).create({
        name: 'drain test',
        grant_types: ['client_credentials'],
      });
      const server = await spawnServer(f.options);
      const slow = startSlowRequest(server.port, server.ca, '/token', 'grant_type=client_credentials', {
        authorization: basicAuth(client.id, secret as string),
      });
      await slow.sendFirstHalf();
      await sleep(200);
      const termAt = Date.now();
      server.child.kill('SIGTERM');
      // A failure bound only: the signal is handled as soon as the process gets the CPU.
      await waitFor(
        () => connectionRefused(server.port, server.ca),
        30_000,
        'new connections were not refused once draining',
      );
      assert.equal(server.child.exitCode, null, 'still running while a request is in flight');
      slow.sendRest();
      const response = await slow.response;
      assert.match(response, /^HTTP\/1\.1 200 /);
      assert.match(response, /"access_token"/);
      const { code } = await server.exited;
      server.http.close();
      assert.equal(code, 0);
      assert.ok(Date.now() - termAt < 10_000, 'exits within the drain bound');
    } finally {
      await f.cleanup();
    }
  });

  it('exits within the bound even when a request never finishes', async () => {
    const f = await fixture('sqlite');
    try {
      const server = await spawnServer(f.options);
      const stuck = startSlowRequest(server.port, server.ca, '/token', 'grant_type=client_credentials', {});
      await stuck.sendFirstHalf();
      await sleep(200);
      const termAt = Date.now();
      server.child.kill('SIGTERM');
      const { code } = await server.exited;
      const took = Date.now() - termAt;
      server.http.close();
      stuck.destroy();
      assert.equal(code, 1, 'a drain cut short says so');
      assert.ok(took >= 9_000 && took < 12_000, `exit after ${took} ms`);
    } finally {
      await f.cleanup();
    }
  });
});
