import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ClientRegistry } from '../../src/core/clients/client-registry.js';
import {
  CLOCK_SKEW_SECONDS,
  DEFAULT_PURGE_PACING,
  pauseAfterBatch,
  Purger,
  PurgeScheduler,
  type PurgePacing,
} from '../../src/core/ops/purge.js';
import { UserRegistry } from '../../src/core/users/user-registry.js';
import { ManualClock } from '../../src/shared/clock.js';
import { ownTimeMillis } from '../../src/shared/own-time.js';
import type { SqlStorage } from '../../src/storage/sql/index.js';
import { backends, createTestStore, type TestStore } from '../helpers/backends.js';
import { startTestServer } from '../helpers/server.js';
import { countRows as count, insertRows, tableRows, type Table } from '../helpers/store-sql.js';
import { waitFor } from '../helpers/wait.js';

const ACCESS_TTL = 3600;
const SKEW = CLOCK_SKEW_SECONDS;
/** How long an anonymous registration may go unused (docs/decisions.md, decision 20). */
const UNUSED = 7 * 86_400;
/** How long audit events are kept (docs/decisions.md, decision 41). */
const RETENTION = 90 * 86_400;
/** No pauses: the tests count rows and statements, not time. */
const UNPACED: PurgePacing = { ...DEFAULT_PURGE_PACING, dutyCycle: 1 };

function purger(storage: SqlStorage, clock: ManualClock, batchSize = 500): Purger {
  return new Purger(storage.purge, clock, {
    ...UNPACED,
    batchSize,
    accessTokenTtl: ACCESS_TTL,
    unusedOpenClientSeconds: UNUSED,
    auditRetentionSeconds: RETENTION,
  });
}

async function insertChunked(
  storage: SqlStorage,
  table: Table,
  rows: Record<string, unknown>[],
): Promise<void> {
  await insertRows(storage, table, rows as never);
}

async function keys(storage: SqlStorage, table: Table, column: string): Promise<Set<string>> {
  const rows = (await tableRows(storage, table)) as unknown as Record<string, string>[];
  return new Set(rows.map((row) => row[column] as string));
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
  const { client } = await new ClientRegistry(storage, clock).create({
    name: 'purge test',
    redirect_uris: ['https://app.test/cb'],
    grant_types: ['authorization_code', 'refresh_token'],
  });
  const user = await new UserRegistry(storage, clock).create({
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

  // Clients: an anonymous registration (RFC 7591) nobody granted anything within UNUSED seconds goes;
  // a younger one, one granted something once, one with a grant, and every other kind stay.
  const registered = (
    id: string,
    registration: 'operator' | 'token' | 'open',
    createdAt: number,
    firstGrantedAt: number | null = null,
  ) => ({
    id,
    name: id,
    secret_hash: null,
    redirect_uris: '["https://app.test/cb"]',
    grant_types: '["authorization_code"]',
    scopes: '',
    token_type: 'bearer',
    is_public: 1,
    created_at: createdAt,
    updated_at: createdAt,
    id_token_signed_response_alg: 'RS256',
    post_logout_redirect_uris: '[]',
    // A public client's method (migration 0009's check: public exactly when none).
    token_endpoint_auth_method: 'none',
    registration,
    registration_access_token_hash: registration === 'operator' ? null : `rat-hash-${id}`,
    first_granted_at: firstGrantedAt,
  });
  const keptClients = [
    registered('cl-open-young', 'open', now - UNUSED + 1),
    registered('cl-open-granted-once', 'open', now - UNUSED - 100, now - UNUSED),
    registered('cl-open-with-grant', 'open', now - UNUSED - 100),
    registered('cl-token-old', 'token', now - UNUSED - 100),
    registered('cl-operator-old', 'operator', now - UNUSED - 100),
  ];
  keep.clients = new Set([client.id, ...keptClients.map((c) => c.id)]);
  const deadClients = [];
  for (let i = 0; i < n; i++) deadClients.push(registered(`cl-dead-${i}`, 'open', now - UNUSED - (i % 100)));
  dead.clients = deadClients.length;
  await insertChunked(storage, 'clients', [...keptClients, ...deadClients]);

  // RFC 7591 §3 initial access tokens go when they expire.
  const initialAccessTokens = [
    {
      id: 'iat-live',
      hash: 'h-live',
      scopes: null,
      created_at: now - 10,
      expires_at: now + 1,
      clients_registered: 3,
    },
  ];
  keep.initial_access_tokens = new Set(['iat-live']);
  const deadInitialAccessTokens = [];
  for (let i = 0; i < n; i++) {
    deadInitialAccessTokens.push({
      id: `iat-dead-${i}`,
      hash: `h-dead-${i}`,
      scopes: 'openid',
      created_at: now - 100_000,
      expires_at: now - (i % 10),
      clients_registered: 0,
    });
  }
  dead.initial_access_tokens = deadInitialAccessTokens.length;
  await insertChunked(storage, 'initial_access_tokens', [...initialAccessTokens, ...deadInitialAccessTokens]);

  // Mail links (decision 35) go when they expire, used or not.
  const mailLink = (hash: string, expiresAt: number, usedAt: number | null = null) => ({
    hash,
    purpose: 'password-reset',
    user_id: user.id,
    address: 'u@example.com',
    created_at: now - 1800,
    expires_at: expiresAt,
    used_at: usedAt,
  });
  const mailLinks = [mailLink('ml-live', now + 1), mailLink('ml-live-used', now + 1, now - 5)];
  keep.mail_links = new Set(mailLinks.map((l) => l.hash));
  const deadMailLinks = [];
  for (let i = 0; i < n; i++)
    deadMailLinks.push(mailLink(`ml-dead-${i}`, now - (i % 10), i % 2 === 0 ? now - 20 : null));
  dead.mail_links = deadMailLinks.length;
  await insertChunked(storage, 'mail_links', [...mailLinks, ...deadMailLinks]);

  // Audit events (decision 41) go once older than the retention; those the registries recorded above
  // (the client and user just created) stay.
  const auditEvent = (id: string, at: number) => ({
    id,
    at,
    type: 'user.updated',
    actor_type: 'cli',
    actor_id: null,
    user_id: user.id,
    client_id: null,
    address: null,
    before: null,
    after: null,
    detail: null,
  });
  const liveEvents = [auditEvent('ae-live', now - RETENTION), auditEvent('ae-new', now)];
  keep.audit_events = new Set([
    ...(await keys(storage, 'audit_events', 'id')),
    ...liveEvents.map((e) => e.id),
  ]);
  const deadEvents = [];
  for (let i = 0; i < n; i++) deadEvents.push(auditEvent(`ae-dead-${i}`, now - RETENTION - 1 - (i % 50)));
  dead.audit_events = deadEvents.length;
  await insertChunked(storage, 'audit_events', [...liveEvents, ...deadEvents]);

  // The dashboard's samples (decision 43) go once their minute is more than two hours old.
  const sample = (label: string, minute: number) => ({
    minute,
    process_id: 'p',
    series: 'errors',
    label,
    value: 1,
  });
  const liveSamples = [sample('ms-kept', now - 7200), sample('ms-new', now)];
  keep.metric_samples = new Set(liveSamples.map((s) => s.label));
  const deadSamples = [];
  for (let i = 0; i < n; i++) deadSamples.push(sample(`ms-dead-${i}`, now - 7201 - (i % 50) * 60));
  dead.metric_samples = deadSamples.length;
  await insertChunked(storage, 'metric_samples', [...liveSamples, ...deadSamples]);

  // Grants: live; expiring later; expired; revoked long ago (dead); revoked recently (access tokens may live).
  const liveGrant = 'g-live';
  const grants = [
    grant(liveGrant, null, null),
    grant('g-later', now + 10, null),
    grant('g-revoked-recently', null, now - ACCESS_TTL),
    { ...grant('g-of-open-client', null, null), client_id: 'cl-open-with-grant' },
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

  // Single-use ids (client assertions' jti): kept until they expire, in any namespace.
  const jtis = [{ namespace: 'client-assertion:c', jti: 'u-live', expires_at: now + 1 }];
  keep.used_jtis = new Set(['u-live']);
  const deadJtis = [];
  for (let i = 0; i < n; i++) {
    deadJtis.push({ namespace: `client-assertion:c${i % 3}`, jti: `u-dead-${i}`, expires_at: now - (i % 5) });
  }
  dead.used_jtis = deadJtis.length;
  await insertChunked(storage, 'used_jtis', [...jtis, ...deadJtis]);
  // Pushed authorization requests (RFC 9126): dead at their expiry, consumed or not.
  const pushed = (hash: string, expiresAt: number, consumedAt: number | null) => ({
    hash,
    client_id: client.id,
    params: 'response_type=code',
    created_at: now - 60,
    expires_at: expiresAt,
    opened_at: null,
    consumed_at: consumedAt,
  });
  const livePushed = [pushed('p-live', now + 1, null), pushed('p-consumed', now + 1, now - 1)];
  keep.pushed_authorization_requests = new Set(livePushed.map((p) => p.hash));
  const deadPushed = [];
  for (let i = 0; i < n; i++)
    deadPushed.push(pushed(`p-dead-${i}`, now - (i % 90), i % 2 ? now - 100 : null));
  dead.pushed_authorization_requests = deadPushed.length;
  await insertChunked(storage, 'pushed_authorization_requests', [...livePushed, ...deadPushed]);

  // Device authorizations (RFC 8628): dead at their expiry, whatever was decided.
  const device = (hash: string, expiresAt: number, status: 'pending' | 'approved' | 'denied') => ({
    hash,
    user_code_hash: `u-${hash}`,
    client_id: client.id,
    scope: 'read',
    resources: '[]',
    created_at: now - 600,
    expires_at: expiresAt,
    poll_interval: 5,
    last_polled_at: null,
    polled_too_soon: 0,
    status,
    user_id: status === 'pending' ? null : user.id,
    grant_id: status === 'approved' ? liveGrant : null,
    auth_time: null,
    sid: null,
    decided_at: status === 'pending' ? null : now - 60,
    consumed_at: null,
  });
  const liveDevices = [device('d-live', now + 1, 'pending'), device('d-approved', now + 1, 'approved')];
  keep.device_authorizations = new Set(liveDevices.map((d) => d.hash));
  const deadDevices = [];
  for (let i = 0; i < n; i++) {
    deadDevices.push(
      device(`d-dead-${i}`, now - (i % 600), i % 3 === 0 ? 'pending' : i % 3 === 1 ? 'approved' : 'denied'),
    );
  }
  dead.device_authorizations = deadDevices.length;
  await insertChunked(storage, 'device_authorizations', [...liveDevices, ...deadDevices]);

  // WebAuthn challenges (decision 33): dead at their expiry, whatever their purpose.
  const challenge = (hash: string, expiresAt: number, purpose: string, userId: string | null) => ({
    hash,
    browser_hash: `b-${hash}`,
    purpose,
    user_id: userId,
    created_at: now - 300,
    expires_at: expiresAt,
  });
  const liveChallenges = [
    challenge('w-live', now + 1, 'sign-in', null),
    challenge('w-register', now + 1, 'register', user.id),
  ];
  keep.webauthn_challenges = new Set(liveChallenges.map((c) => c.hash));
  const deadChallenges = [];
  for (let i = 0; i < n; i++) {
    deadChallenges.push(
      challenge(
        `w-dead-${i}`,
        now - (i % 300),
        i % 2 === 0 ? 'sign-in' : 'register',
        i % 2 === 0 ? null : user.id,
      ),
    );
  }
  dead.webauthn_challenges = deadChallenges.length;
  await insertChunked(storage, 'webauthn_challenges', [...liveChallenges, ...deadChallenges]);
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
  used_jtis: 'jti',
  initial_access_tokens: 'id',
  clients: 'id',
  pushed_authorization_requests: 'hash',
  device_authorizations: 'hash',
  webauthn_challenges: 'hash',
  mail_links: 'hash',
  audit_events: 'id',
  metric_samples: 'label',
};

/**
 * A store with one table of `rows` dead rows, each statement taking `waitMs` (of its limit) to answer,
 * and asking for statements of `statementMillis` (by default: any length, so batches keep their size).
 */
function fakePurgeStore(
  rows: number,
  waitMs: number | ((limit: number) => number),
  statementMillis = Infinity,
) {
  const state = { remaining: rows, sizes: [] as number[] };
  const store = {
    kinds: ['t'],
    batchMillis: statementMillis,
    async purgeBatch(_table: string, _cutoffs: unknown, limit: number) {
      state.sizes.push(limit);
      const ms = typeof waitMs === 'number' ? waitMs : waitMs(limit);
      if (ms > 0) await sleep(ms);
      const deleted = Math.min(limit, state.remaining);
      state.remaining -= deleted;
      return deleted;
    },
    async backlog(_table: string, _cutoffs: unknown, limit: number) {
      return Math.min(limit, state.remaining);
    },
  };
  return { state, store };
}

describe("the purge's own time", () => {
  it('runs on with waits the thread does not spend runnable (a sleep, an answer), never ahead of the clock', async () => {
    const [own, wall] = [ownTimeMillis(), performance.now()];
    await sleep(50);
    const [ownAfter, wallAfter] = [ownTimeMillis(), performance.now()];
    assert.ok(ownAfter > own, 'it advanced');
    // Less only by the time the thread waited for a CPU (after the timer fired, on a busy machine); a
    // preemption between a reading's two clocks may put it a slice ahead.
    assert.ok(ownAfter - own <= wallAfter - wall + 25, `${ownAfter - own} of ${wallAfter - wall} ms`);
  });
});

describe('purge pacing', () => {
  const pacing = (overrides: Partial<PurgePacing>): PurgePacing => ({
    batchSize: 500,
    dutyCycle: 1,
    maxRowsPerSecond: 0,
    minRowsPerSecond: 0,
    ...overrides,
  });

  it('pauses after each batch (1 - dutyCycle) / dutyCycle times as long as the batch took', () => {
    assert.equal(pauseAfterBatch(pacing({ dutyCycle: 0.05 }), 500, 2), 38);
    assert.equal(pauseAfterBatch(pacing({ dutyCycle: 0.5 }), 10, 7), 7);
    assert.equal(pauseAfterBatch(pacing({ dutyCycle: 1 }), 500, 2), 0);
  });

  it('spaces batches out to maxRowsPerSecond, counting the batch itself', () => {
    // 500 rows at 4,000 a second: one batch every 125 ms.
    assert.equal(pauseAfterBatch(pacing({ maxRowsPerSecond: 4000 }), 500, 5), 120);
    // The duty cycle asks for longer: it wins.
    assert.equal(pauseAfterBatch(pacing({ maxRowsPerSecond: 4000, dutyCycle: 0.05 }), 500, 10), 190);
    // A batch slower than the cap: no pause for the cap.
    assert.equal(pauseAfterBatch(pacing({ maxRowsPerSecond: 4000 }), 500, 200), 0);
  });

  it('pauses no longer than minRowsPerSecond allows, and not at all after a batch slower than it', () => {
    // By the duty cycle 19 x 50 ms; at 1,000 rows a second, 500 rows may take 500 ms in all.
    assert.equal(pauseAfterBatch(pacing({ dutyCycle: 0.05, minRowsPerSecond: 1000 }), 500, 50), 450);
    // A saturated machine: the batch alone took longer than the floor allows.
    assert.equal(pauseAfterBatch(pacing({ dutyCycle: 0.05, minRowsPerSecond: 1000 }), 500, 700), 0);
    // Never over the cap: a floor above it yields to it.
    assert.equal(
      pauseAfterBatch(pacing({ dutyCycle: 0.05, minRowsPerSecond: 1000, maxRowsPerSecond: 500 }), 500, 10),
      990,
    );
  });

  it("halves batches that take longer than the store's statement time, and grows them back", async () => {
    // Each batch "takes" the time `cost` gives it on a manual stopwatch: the sizes follow from the
    // times alone, whatever else the machine is doing.
    const timed = (cost: (limit: number) => number, statementMillis: number) => {
      let elapsed = 0;
      const fake = fakePurgeStore(3000, 0, statementMillis);
      const purgeBatch = fake.store.purgeBatch;
      fake.store.purgeBatch = async (table, cutoffs, limit) => {
        elapsed += cost(limit);
        return purgeBatch(table, cutoffs, limit);
      };
      return { ...fake, stopwatch: () => elapsed };
    };
    const policy = { ...pacing({}), accessTokenTtl: ACCESS_TTL };
    // 0.02 ms a row, against 4 ms: 500 rows take 10 ms, 250 take 5 (halved), 125 take 2.5 (kept:
    // over half of 4), and so on.
    const slow = timed((limit) => limit / 50, 4);
    await new Purger(slow.store, new ManualClock(), policy, {}, slow.stopwatch).runOnce();
    assert.deepEqual(
      slow.state.sizes.slice(0, 4),
      [500, 250, 125, 125],
      `sizes ${slow.state.sizes.join(',')}`,
    );
    assert.ok(Math.max(...slow.state.sizes.slice(1)) <= 250, `sizes ${slow.state.sizes.join(',')}`);
    assert.ok(Math.min(...slow.state.sizes) >= 10, `sizes ${slow.state.sizes.join(',')}`);
    // One slow statement (100 ms against 50): halved, then grown back by half per fast one.
    let first = true;
    const once = timed(() => {
      const ms = first ? 100 : 0;
      first = false;
      return ms;
    }, 50);
    await new Purger(once.store, new ManualClock(), policy, {}, once.stopwatch).runOnce();
    assert.deepEqual(once.state.sizes.slice(0, 5), [500, 250, 375, 500, 500]);
  });

  it('keeps the batch size however slow the store when it asks for no statement time, pausing by the time each took', async () => {
    const { state, store } = fakePurgeStore(3000, 10);
    const p = new Purger(store, new ManualClock(), {
      ...pacing({ dutyCycle: 0.5 }),
      accessTokenTtl: ACCESS_TTL,
    });
    const started = performance.now();
    assert.deepEqual(await p.runOnce(), { t: 3000 });
    const elapsed = performance.now() - started;
    // Six full batches and the one that finds the rest gone; a slow store shrinks none of them.
    assert.deepEqual(state.sizes, [500, 500, 500, 500, 500, 500, 500]);
    // Each full batch took at least 10 ms and was followed by a pause as long (a lower bound only).
    assert.ok(elapsed >= 6 * 2 * 10, `${Math.round(elapsed)} ms`);
  });

  it('a stopped scheduler ends the run in progress after its batch, and the next run carries on', async () => {
    // At 1,000 rows a second the run would take 100 s.
    const { state, store } = fakePurgeStore(100_000, 0);
    const paced = new Purger(store, new ManualClock(), {
      ...pacing({ batchSize: 100, maxRowsPerSecond: 1000 }),
      accessTokenTtl: ACCESS_TTL,
    });
    const scheduler = new PurgeScheduler(paced, { intervalSeconds: 0.01, jitter: 0 });
    scheduler.start();
    await waitFor(async () => state.remaining < 100_000, 60_000, 'the run did not start');
    await scheduler.stop();
    const left = state.remaining;
    assert.ok(left > 0, 'the run was cut short');
    await sleep(100);
    assert.equal(state.remaining, left, 'nothing after stop()');
    const unpaced = new Purger(store, new ManualClock(), {
      ...pacing({ batchSize: 100 }),
      accessTokenTtl: ACCESS_TTL,
    });
    assert.deepEqual(await unpaced.runOnce(), { t: left });
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
      assert.deepEqual([...store.storage.purge.kinds].sort(), Object.keys(KEY_COLUMNS).sort());
      const batches: number[] = [];
      const p = new Purger(
        store.storage.purge,
        clock,
        {
          ...UNPACED,
          batchSize: 500,
          accessTokenTtl: ACCESS_TTL,
          unusedOpenClientSeconds: UNUSED,
          auditRetentionSeconds: RETENTION,
        },
        { purged: (_table, rows) => batches.push(rows) },
      );
      // The backlog the dashboard shows (decision 43): what the purge is about to delete, counted up
      // to the limit.
      const backlog = await p.backlog(1000);
      assert.deepEqual(Object.keys(backlog).sort(), Object.keys(KEY_COLUMNS).sort());
      for (const kind of ['audit_events', 'metric_samples', 'browser_sessions', 'mail_links']) {
        assert.equal(backlog[kind], Math.min(1000, dead[kind] ?? 0), kind);
      }
      assert.equal((await p.backlog(5))['metric_samples'], 5);
      const deleted = await p.runUntilClean();
      assert.deepEqual(deleted, dead);
      // Never more than one batch's worth per statement.
      assert.ok(batches.every((rows) => rows <= 500));
      assert.ok(batches.length >= 6 * 3);
      for (const [table, column] of Object.entries(KEY_COLUMNS)) {
        assert.deepEqual(await keys(store.storage, table as Table, column), keep[table], table);
      }
      assert.deepEqual(
        Object.values(await p.backlog(1000)).filter((rows) => rows > 0),
        [],
        'no backlog once clean',
      );
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
      // The timed purge starts with listening.
      const server = await startTestServer(backend, { purgeIntervalSeconds: 0.1 }, { transport: 'https' });
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
