import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient } from '../../src/core/client-registry.js';
import { DEFAULT_PURGE_POLICY, Purger, PurgeScheduler, type PurgePolicy } from '../../src/core/purge.js';
import { createUser } from '../../src/core/user-registry.js';
import { ManualClock } from '../../src/shared/clock.js';
import type { SqlStorage } from '../../src/storage/sql/index.js';
import type { Database } from '../../src/storage/sql/schema.js';
import { backends, createTestStore, type TestStore } from '../helpers/backends.js';
import { startTestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const ACCESS_TTL = 3600;
const SKEW = DEFAULT_PURGE_POLICY.clockSkewSeconds;

function purger(storage: SqlStorage, clock: ManualClock, batchSize = 500): Purger {
  return new Purger(storage.purge, clock, {
    ...DEFAULT_PURGE_POLICY,
    batchSize,
    // Fixed batch sizes, no pauses: the tests count rows and statements, not time.
    targetBatchMillis: 1e9,
    dutyCycle: 1,
    accessTokenTtl: ACCESS_TTL,
  });
}

async function insertChunked<T extends keyof Database>(
  storage: SqlStorage,
  table: T,
  rows: Record<string, unknown>[],
): Promise<void> {
  for (let i = 0; i < rows.length; i += 200) {
    // Test-only bulk insert; the rows match the table shapes exactly.
    await storage.db
      .insertInto(table)
      .values(rows.slice(i, i + 200) as never)
      .execute();
  }
}

async function keys(storage: SqlStorage, table: keyof Database, column: string): Promise<Set<string>> {
  const rows = (await storage.db
    .selectFrom(table)
    .select(column as never)
    .execute()) as Record<string, string>[];
  return new Set(rows.map((row) => row[column] as string));
}

async function count(storage: SqlStorage, table: keyof Database): Promise<number> {
  const row = await storage.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

interface Fixture {
  /** Keys that must survive, per table. */
  keep: Record<string, Set<string>>;
  /** How many rows must go, per table. */
  dead: Record<string, number>;
}

/** Many dead rows and, next to each kind, the nearly-dead rows that must survive. */
async function seed(storage: SqlStorage, clock: ManualClock, n: number): Promise<Fixture> {
  const now = clock.now();
  const { client } = await createClient(storage, clock, {
    name: 'purge test',
    redirect_uris: ['https://app.test/cb'],
    grant_types: ['authorization_code', 'refresh_token'],
  });
  const user = await createUser(storage, clock, {
    username: `u-${randomUUID()}`,
    password: 'a long password',
  });
  const grant = (id: string, expiresAt: number | null, revokedAt: number | null) => ({
    id,
    client_id: client.id,
    user_id: user.id,
    scope: '',
    created_at: now - 100_000,
    expires_at: expiresAt,
    revoked_at: revokedAt,
  });
  const keep: Fixture['keep'] = {};
  const dead: Fixture['dead'] = {};

  // Grants: live; expiring later; expired; revoked long ago (dead); revoked recently (access tokens may live).
  const liveGrant = 'g-live';
  const grants = [
    grant(liveGrant, null, null),
    grant('g-later', now + 10, null),
    grant('g-revoked-recently', null, now - ACCESS_TTL),
  ];
  keep.grants = new Set(grants.map((g) => g.id));
  const deadGrants = [
    grant('g-expired', now, null),
    grant('g-revoked-long-ago', null, now - ACCESS_TTL - SKEW),
  ];
  for (let i = 0; i < n; i++) deadGrants.push(grant(`g-dead-${i}`, now - 1 - (i % 50), null));
  dead.grants = deadGrants.length;
  await insertChunked(storage, 'grants', [...grants, ...deadGrants]);

  const code = (hash: string, grantId: string, expiresAt: number, consumedAt: number | null) => ({
    hash,
    client_id: client.id,
    user_id: user.id,
    grant_id: grantId,
    redirect_uri: 'https://app.test/cb',
    scope: '',
    code_challenge: null,
    code_challenge_method: null,
    created_at: now - 600,
    expires_at: expiresAt,
    consumed_at: consumedAt,
  });
  const liveCodes = [code('c-live', liveGrant, now + 1, null), code('c-used', liveGrant, now + 300, now - 5)];
  keep.authorization_codes = new Set(liveCodes.map((c) => c.hash));
  const deadCodes = [];
  for (let i = 0; i < n; i++)
    deadCodes.push(code(`c-dead-${i}`, liveGrant, now - (i % 600), i % 2 ? now : null));
  dead.authorization_codes = deadCodes.length;
  await insertChunked(storage, 'authorization_codes', [...liveCodes, ...deadCodes]);

  const token = (hash: string, grantId: string, expiresAt: number | null, retiredAt: number | null) => ({
    hash,
    grant_id: grantId,
    client_id: client.id,
    user_id: user.id,
    scope: '',
    created_at: now - 1000,
    expires_at: expiresAt,
    retired_at: retiredAt,
  });
  const liveTokens = [
    token('rt-live', liveGrant, now + 1, null),
    // Retired but not expired: kept for reuse detection.
    token('rt-retired', liveGrant, now + 100, now - 50),
    token('rt-no-expiry', liveGrant, null, null),
    token('rt-of-recently-revoked', 'g-revoked-recently', now + 100, now - ACCESS_TTL),
  ];
  keep.refresh_tokens = new Set(liveTokens.map((t) => t.hash));
  const deadTokens = [
    // Not expired, but its grant is dead: goes before the grant does.
    token('rt-of-revoked', 'g-revoked-long-ago', now + 1000, now - ACCESS_TTL - SKEW),
    token('rt-of-expired', 'g-expired', null, null),
  ];
  for (let i = 0; i < n; i++)
    deadTokens.push(token(`rt-dead-${i}`, liveGrant, now - (i % 1000), i % 3 ? now : null));
  for (let i = 0; i < 300; i++) deadTokens.push(token(`rt-dead-grant-${i}`, `g-dead-${i}`, now + 1000, null));
  dead.refresh_tokens = deadTokens.length;
  await insertChunked(storage, 'refresh_tokens', [...liveTokens, ...deadTokens]);

  const revoked = [
    { jti: 'j-live', expires_at: now + 60 },
    // Expired, but inside the clock-skew margin a resource server may still allow.
    { jti: 'j-skew', expires_at: now - SKEW + 1 },
  ];
  keep.revoked_access_tokens = new Set(revoked.map((r) => r.jti));
  const deadRevoked = [];
  for (let i = 0; i < n; i++) deadRevoked.push({ jti: `j-dead-${i}`, expires_at: now - SKEW - (i % 100) });
  dead.revoked_access_tokens = deadRevoked.length;
  await insertChunked(storage, 'revoked_access_tokens', [...revoked, ...deadRevoked]);

  const throttle = [{ key: 't-live', count: 3, reset_at: now + 1 }];
  keep.throttle = new Set(['t-live']);
  const deadThrottle = [];
  for (let i = 0; i < n; i++) deadThrottle.push({ key: `t-dead-${i}`, count: 1, reset_at: now - (i % 10) });
  dead.throttle = deadThrottle.length;
  await insertChunked(storage, 'throttle', [...throttle, ...deadThrottle]);

  const sessions = [{ hash: 's-live', user_id: user.id, created_at: now - 10, expires_at: now + 1 }];
  keep.browser_sessions = new Set(['s-live']);
  const deadSessions = [];
  for (let i = 0; i < n; i++) {
    deadSessions.push({
      hash: `s-dead-${i}`,
      user_id: user.id,
      created_at: now - 100,
      expires_at: now - (i % 7),
    });
  }
  dead.browser_sessions = deadSessions.length;
  await insertChunked(storage, 'browser_sessions', [...sessions, ...deadSessions]);

  const nonces = [{ jti: 'j-live', nonce: 'n-live', expires_at: now + 1 }];
  keep.mac_nonces = new Set(['n-live']);
  const deadNonces = [];
  // Several nonces per token id: the key is the pair.
  for (let i = 0; i < n; i++)
    deadNonces.push({ jti: `j-${i % 7}`, nonce: `n-dead-${i}`, expires_at: now - (i % 5) });
  dead.mac_nonces = deadNonces.length;
  await insertChunked(storage, 'mac_nonces', [...nonces, ...deadNonces]);
  return { keep, dead };
}

const KEY_COLUMNS: Record<string, string> = {
  authorization_codes: 'hash',
  refresh_tokens: 'hash',
  browser_sessions: 'hash',
  grants: 'id',
  revoked_access_tokens: 'jti',
  throttle: 'key',
  mac_nonces: 'nonce',
};

/**
 * A store with one table of `rows` dead rows. `timing` says, for each statement (its limit and the rows
 * left before it), how long it takes to answer and how long it reports having held the store.
 */
function fakePurgeStore(
  rows: number,
  timing: (limit: number, left: number) => { waitMs: number; millis: number; otherMillis?: number },
) {
  const state = { remaining: rows, sizes: [] as number[] };
  const store = {
    tables: ['t'],
    async purgeBatch(_table: string, _cutoffs: unknown, limit: number) {
      state.sizes.push(limit);
      const { waitMs, millis, otherMillis } = timing(limit, state.remaining);
      if (waitMs > 0) await sleep(waitMs);
      const deleted = Math.min(limit, state.remaining);
      state.remaining -= deleted;
      return { rows: deleted, millis, otherMillis };
    },
  };
  return { state, store };
}

/**
 * One run over 2,000 dead rows with the shipped pacing (500-row batches, 1 ms target, 5% duty cycle),
 * or with `pacing` instead: the batch sizes asked for and the milliseconds the run took.
 */
async function purgeTwoThousand(
  timing: Parameters<typeof fakePurgeStore>[1],
  pacing: Partial<PurgePolicy> = {},
) {
  const { state, store } = fakePurgeStore(2000, timing);
  const p = new Purger(store, new ManualClock(), {
    ...DEFAULT_PURGE_POLICY,
    batchSize: 500,
    targetBatchMillis: 1,
    dutyCycle: 0.05,
    accessTokenTtl: ACCESS_TTL,
    ...pacing,
  });
  const started = performance.now();
  assert.equal((await p.runOnce()).t, 2000);
  return { sizes: state.sizes, elapsed: performance.now() - started };
}

describe('purge pacing', () => {
  it('shrinks batches that take too long, grows them back, and pauses nine times as long as it works', async () => {
    let busy = 0;
    const { state, store } = fakePurgeStore(3000, (limit) => {
      // A statement's time grows with its size: 0.1 ms per row.
      const ms = limit / 10;
      busy += ms;
      return { waitMs: ms, millis: ms };
    });
    const sizes = state.sizes;
    const clock = new ManualClock();
    const p = new Purger(store, clock, {
      ...DEFAULT_PURGE_POLICY,
      batchSize: 500,
      targetBatchMillis: 10,
      dutyCycle: 0.1,
      // The duty cycle alone (at this pace the run would be near the floor's 1,000 rows a second).
      minRowsPerSecond: 0,
      accessTokenTtl: ACCESS_TTL,
    });
    const started = performance.now();
    const deleted = await p.runOnce();
    const elapsed = performance.now() - started;
    assert.equal(deleted.t, 3000);
    assert.equal(sizes[0], 500);
    // 500 rows take 50 ms > 10: halved until a batch fits, never below the target's reach for long.
    assert.ok(
      sizes.slice(1, 4).every((size, i) => size < (sizes[i] ?? Infinity)),
      `sizes ${sizes.join(',')}`,
    );
    assert.ok(Math.max(...sizes.slice(4)) <= 150, `sizes ${sizes.join(',')}`);
    // Deleting took about a tenth of the time.
    assert.ok(elapsed >= busy * 5, `busy ${busy} ms of ${elapsed} ms`);
  });

  it('paces by the time the store says the statement held it, not by the wait for its answer', async () => {
    // SQLite's purge process yields the core to requests: the answer can come late while the
    // statement itself was short. Waiting longer must not shrink the batches or lengthen the pauses.
    const { sizes, elapsed } = await purgeTwoThousand(() => ({ waitMs: 15, millis: 0.2 }));
    assert.deepEqual(sizes, [500, 500, 500, 500, 500]);
    // Four pauses of 19 x 0.2 ms, not of 19 x 15 ms (over a second).
    assert.ok(elapsed < 500, `${Math.round(elapsed)} ms`);
  });

  it("counts the store's other purge work (a checkpoint) in the pauses, not in the batch size", async () => {
    // Each batch is short (0.2 ms, under the 1 ms target) and is followed by a 5 ms checkpoint, which
    // holds no lock a request waits for: batches keep their size, and the pauses cover both.
    const { sizes, elapsed } = await purgeTwoThousand(() => ({ waitMs: 0, millis: 0.2, otherMillis: 5 }));
    assert.deepEqual(sizes, [500, 500, 500, 500, 500]);
    // Four pauses of 19 x 5.2 ms (about 395 ms); by the statements alone they would be 15 ms in all.
    assert.ok(elapsed >= 350, `${Math.round(elapsed)} ms`);
  });

  it('deletes no more rows a second than maxRowsPerSecond, without shrinking the batches', async () => {
    // Fast statements and no duty-cycle pause: only the cap spaces the batches out.
    const run = (maxRowsPerSecond: number) =>
      purgeTwoThousand(() => ({ waitMs: 0, millis: 0.1 }), {
        targetBatchMillis: 1e9,
        dutyCycle: 1,
        maxRowsPerSecond,
      });
    const capped = await run(4000);
    assert.deepEqual(capped.sizes, [500, 500, 500, 500, 500]);
    // Four full batches at 4,000 rows a second: the last query (which finds nothing) starts 500 ms in.
    assert.ok(capped.elapsed >= 490 && capped.elapsed < 1500, `${Math.round(capped.elapsed)} ms`);
    const uncapped = await run(0);
    assert.ok(uncapped.elapsed < 100, `uncapped: ${Math.round(uncapped.elapsed)} ms`);
  });

  it('keeps minRowsPerSecond when every statement looks slow (a saturated machine)', async () => {
    // Each statement says it held the store 50 ms, fifty times the target: by the duty cycle alone the
    // batches shrink to 10 rows with a 950 ms pause after each, some 10 rows a second.
    const policy = {
      ...DEFAULT_PURGE_POLICY,
      batchSize: 500,
      targetBatchMillis: 1,
      dutyCycle: 0.05,
      maxRunMillis: 60_000,
      accessTokenTtl: ACCESS_TTL,
    };
    const slow = () => ({ waitMs: 0, millis: 50 });
    const floored = fakePurgeStore(2000, slow);
    const p = new Purger(floored.store, new ManualClock(), { ...policy, minRowsPerSecond: 1000 });
    const started = performance.now();
    assert.equal((await p.runOnce()).t, 2000);
    const elapsed = performance.now() - started;
    // Behind the floor the run stops pausing and shrinking: it never falls a pause behind 1,000 rows
    // a second, so 2,000 rows go within two seconds and a pause or two (by the clock, the bound only).
    assert.ok(elapsed < 2000 + 2 * policy.maxPauseMillis + 1000, `${Math.round(elapsed)} ms`);
    assert.ok(Math.max(...floored.state.sizes) === 500, `sizes ${floored.state.sizes.join(',')}`);

    // Without the floor the same run is still shrinking and pausing a second later.
    const unfloored = fakePurgeStore(2000, slow);
    const q = new Purger(unfloored.store, new ManualClock(), {
      ...policy,
      maxRunMillis: 1000,
      minRowsPerSecond: 0,
    });
    await q.runOnce();
    assert.ok(unfloored.state.remaining > 1000, `${unfloored.state.remaining} left`);
  });

  it('pauses no longer than maxPauseMillis after one slow batch', async () => {
    // The first batch says it held the store for 2 s (a cold cache): 19 x that would be 38 s.
    const { store } = fakePurgeStore(300, (_limit, left) => ({
      waitMs: 0,
      millis: left === 300 ? 2000 : 0.1,
    }));
    const p = new Purger(store, new ManualClock(), {
      ...DEFAULT_PURGE_POLICY,
      batchSize: 100,
      targetBatchMillis: 1e9,
      dutyCycle: 0.05,
      maxPauseMillis: 200,
      accessTokenTtl: ACCESS_TTL,
    });
    const started = performance.now();
    assert.equal((await p.runOnce()).t, 300);
    const elapsed = performance.now() - started;
    assert.ok(elapsed >= 190 && elapsed < 2000, `${Math.round(elapsed)} ms`);
  });
});

describe('purge scheduling', () => {
  it('comes back after a second, not an interval, while a run left a backlog', async () => {
    const { state, store } = fakePurgeStore(3000, () => ({ waitMs: 2, millis: 2 }));
    const p = new Purger(store, new ManualClock(), {
      ...DEFAULT_PURGE_POLICY,
      batchSize: 100,
      targetBatchMillis: 1e9,
      dutyCycle: 1,
      maxRunMillis: 25,
      accessTokenTtl: ACCESS_TTL,
    });
    await p.runOnce();
    assert.equal(p.backlog, true);
    assert.ok(state.remaining > 0);
    // With a 30 s interval only the backlog rule can finish this within the test's few seconds.
    const scheduler = new PurgeScheduler(p, { intervalSeconds: 30, jitter: 0 });
    scheduler.start();
    await waitFor(async () => state.remaining === 0, 60_000, 'the backlog was not worked off').finally(() =>
      scheduler.stop(),
    );
    assert.equal(state.remaining, 0);
    assert.equal(p.backlog, false);
  });
});

for (const backend of backends()) {
  describe(`automatic purge (${backend})`, () => {
    let store: TestStore;
    beforeEach(async () => {
      store = await createTestStore(backend);
    });
    afterEach(async () => {
      await store.cleanup();
    });

    it('deletes every dead row in batches and keeps every row that can still matter', async () => {
      const clock = new ManualClock();
      const { keep, dead } = await seed(store.storage, clock, 1300);
      assert.deepEqual([...store.storage.purge.tables].sort(), Object.keys(KEY_COLUMNS).sort());
      const batches: number[] = [];
      const p = new Purger(
        store.storage.purge,
        clock,
        {
          ...DEFAULT_PURGE_POLICY,
          batchSize: 500,
          targetBatchMillis: 1e9,
          dutyCycle: 1,
          accessTokenTtl: ACCESS_TTL,
        },
        { purged: (_table, rows) => batches.push(rows) },
      );
      const deleted = await p.runUntilClean();
      assert.deepEqual(deleted, dead);
      // Never more than one batch's worth per statement.
      assert.ok(batches.every((rows) => rows <= 500));
      assert.ok(batches.length >= 6 * 3);
      for (const [table, column] of Object.entries(KEY_COLUMNS)) {
        assert.deepEqual(await keys(store.storage, table as keyof Database, column), keep[table], table);
      }
      // A second pass finds nothing.
      const again = await p.runOnce();
      assert.equal(
        Object.values(again).reduce((a, b) => a + b, 0),
        0,
      );
    });

    it('two purgers running at once delete each row exactly once', async () => {
      const clock = new ManualClock();
      const other = store.reopen();
      const { dead } = await seed(store.storage, clock, 2000);
      const expected = Object.values(dead).reduce((a, b) => a + b, 0);
      const [a, b] = await Promise.all([
        purger(store.storage, clock, 100).runUntilClean(),
        purger(other, clock, 100).runUntilClean(),
      ]);
      const sum = (r: Record<string, number>) => Object.values(r).reduce((x, y) => x + y, 0);
      assert.equal(sum(a) + sum(b), expected);
      for (const table of Object.keys(dead)) {
        assert.equal((a[table] ?? 0) + (b[table] ?? 0), dead[table], table);
      }
      assert.equal(await count(store.storage, 'authorization_codes'), 2);
      assert.equal(await count(store.storage, 'throttle'), 1);
    });
  });

  describe(`purge timer in the server (${backend})`, () => {
    it('purges by itself once listening, and stops when the server closes', async () => {
      const server = await startTestServer(backend, { purgeIntervalSeconds: 0.1 });
      try {
        const { client } = await server.client({
          redirect_uris: ['https://app.test/cb'],
          grant_types: ['authorization_code'],
        });
        const { user } = await server.user();
        const { code } = await server.seedCode({ client, user });
        assert.equal(await count(server.store.storage, 'authorization_codes'), 1);
        server.clock.advance(601);
        // A failure bound only: the purge runs at nice 19, which a busy machine slows down.
        await waitFor(
          async () => (await count(server.store.storage, 'authorization_codes')) === 0,
          60_000,
          'the expired code was not purged',
        );
        assert.ok(code.length > 0);
      } finally {
        await server.close();
      }
    });
  });
}
