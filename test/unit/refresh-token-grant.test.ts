import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { OAuthError } from '../../src/core/errors.js';
import type { Client, Grant, RefreshToken, User } from '../../src/core/model.js';
import type { TokenResponse } from '../../src/core/tokens/token-issuer.js';
import { sha256 } from '../../src/shared/crypto.js';
import {
  addClient,
  addUser,
  basic,
  expectOAuthError,
  isLive,
  liveClaims,
  pkcePair,
  REDIRECT,
  seedCode,
  type ExpectedError,
} from '../helpers/fakes/fixtures.js';
import {
  START,
  testEngine,
  type TestEngine,
  type TestEngineOverrides,
} from '../helpers/fakes/test-engine.js';

interface Party {
  client: Client;
  secret: string;
}

interface World {
  engine: TestEngine;
  client: Client;
  secret: string;
  /** Other clients registered for refresh_token: one confidential, one public. */
  other: Party;
  otherPublic: Party;
  user: User;
  grant: Grant;
  /** The code redemption's response: the refresh token under test and its access token. */
  first: TokenResponse;
  refreshToken: string;
  /** A rotation made in `before`, if any. */
  rotated?: TokenResponse;
}

interface Row {
  name: string;
  engine?: TestEngineOverrides;
  client?: Partial<Client>;
  grantExpiresAt?: number;
  before?: (w: World) => Promise<void>;
  /** Parameters over the default refresh (grant_type, the refresh token under test). */
  params?: (w: World) => Record<string, string | undefined>;
  /** Who asks; by default the token's client. */
  as?: (w: World) => Party;
  expected: ExpectedError | 'tokens';
  then?: (w: World, response: TokenResponse | undefined) => Promise<void>;
}

/** A refresh by `party` (the token's client by default): HTTP Basic, or client_id for a public client. */
function refresh(
  w: World,
  token: string,
  extra: Record<string, string | undefined> = {},
  party: Party = w,
): Promise<TokenResponse> {
  const params = { grant_type: 'refresh_token', refresh_token: token, ...extra };
  return party.client.isPublic
    ? w.engine.token({ authorization: undefined, params: { ...params, client_id: party.client.id } })
    : w.engine.token({ authorization: basic(party.client.id, party.secret), params });
}

async function stored(w: World, token: string | undefined): Promise<RefreshToken> {
  const record = await w.engine.storage.refreshTokens.get(sha256(token ?? ''));
  assert.ok(record, 'the refresh token is stored');
  return record;
}

async function grantRevokedAt(w: World): Promise<number | null | undefined> {
  return (await w.engine.storage.grants.get(w.grant.id))?.revokedAt;
}

/** The refused request changed nothing: the token is live and the grant stands. */
async function unchanged(w: World): Promise<void> {
  assert.equal((await stored(w, w.refreshToken)).retiredAt, null, 'the refresh token is not retired');
  assert.equal(await grantRevokedAt(w), null, 'the grant stands');
}

async function rotateOnce(w: World): Promise<void> {
  w.rotated = await refresh(w, w.refreshToken);
}

const ALREADY_USED = {
  code: 'invalid_grant',
  status: 400,
  description: 'refresh token already used',
} as const;

const ROWS: Row[] = [
  {
    name: 'rotation: a new refresh token, the presented one retired at once (docs/decisions.md, decision 4)',
    before: async (w) => w.engine.clock.advance(10),
    expected: 'tokens',
    async then(w, response) {
      assert.ok(response?.refresh_token);
      assert.notEqual(response.refresh_token, w.refreshToken);
      assert.equal(response.scope, 'read write');
      assert.equal((await stored(w, w.refreshToken)).retiredAt, START + 10);
      const next = await stored(w, response.refresh_token);
      assert.deepEqual(
        { grantId: next.grantId, scope: next.scope, createdAt: next.createdAt, retiredAt: next.retiredAt },
        { grantId: w.grant.id, scope: ['read', 'write'], createdAt: START + 10, retiredAt: null },
      );
      const claims = await liveClaims(w.engine, response.access_token);
      assert.equal(claims.sub, w.user.id);
      assert.equal(claims.gid, w.grant.id);
      // And the new one rotates in turn.
      assert.notEqual((await refresh(w, response.refresh_token)).refresh_token, response.refresh_token);
    },
  },
  {
    name: 'narrowing: the access token carries less, the new refresh token keeps the grant’s scope (RFC 6749 §6)',
    params: () => ({ scope: 'read' }),
    expected: 'tokens',
    async then(w, response) {
      assert.equal(response?.scope, 'read');
      assert.equal((await liveClaims(w.engine, response?.access_token ?? '')).scope, 'read');
      assert.deepEqual((await stored(w, response?.refresh_token)).scope, ['read', 'write']);
    },
  },
  {
    name: 'scope omitted after a narrowing: the original scope, not the last narrowed one',
    before: async (w) => void (w.rotated = await refresh(w, w.refreshToken, { scope: 'read' })),
    params: (w) => ({ refresh_token: w.rotated?.refresh_token }),
    expected: 'tokens',
    then: async (_w, response) => assert.equal(response?.scope, 'read write'),
  },
  {
    name: 'widening beyond the grant, even to a scope the client has',
    params: () => ({ scope: 'read email' }),
    expected: { code: 'invalid_scope', status: 400, description: 'scope exceeds the original grant' },
    then: unchanged,
  },
  {
    name: 'a scope neither the grant nor the client has',
    params: () => ({ scope: 'admin' }),
    expected: { code: 'invalid_scope', status: 400, description: 'scope exceeds the original grant' },
    then: unchanged,
  },
  {
    name: 'a malformed scope',
    params: () => ({ scope: 'read "write"' }),
    expected: { code: 'invalid_scope', status: 400, description: 'malformed scope name' },
    then: unchanged,
  },
  {
    name: 'another client’s refresh token (RFC 6749 §10.4), which stays usable by its own',
    as: (w) => w.other,
    expected: { code: 'invalid_grant', status: 400, description: 'unknown refresh token' },
    async then(w) {
      await unchanged(w);
      assert.ok((await refresh(w, w.refreshToken)).refresh_token);
    },
  },
  {
    name: 'another public client’s refresh token, presented by client_id alone',
    client: { isPublic: true },
    as: (w) => w.otherPublic,
    expected: { code: 'invalid_grant', status: 400, description: 'unknown refresh token' },
    then: unchanged,
  },
  {
    name: 'a public client refreshes with its client_id alone',
    client: { isPublic: true },
    expected: 'tokens',
    then: async (_w, response) => assert.equal(typeof response?.refresh_token, 'string'),
  },
  {
    name: 'an unknown refresh token',
    params: () => ({ refresh_token: 'rt_unknown' }),
    expected: { code: 'invalid_grant', status: 400, description: 'unknown refresh token' },
  },
  {
    name: 'refresh_token missing',
    params: () => ({ refresh_token: undefined }),
    expected: { code: 'invalid_request', status: 400, description: 'refresh_token is required' },
  },
  // Reuse of a retired token (docs/decisions.md, decision 4; RFC 9700 §4.14)
  {
    name: 'reuse within the grace window: refused, and the grant lives on (a retry, two tabs)',
    async before(w) {
      await rotateOnce(w);
      w.engine.clock.advance(4);
    },
    expected: ALREADY_USED,
    async then(w) {
      assert.equal(await grantRevokedAt(w), null);
      assert.ok((await refresh(w, w.rotated?.refresh_token ?? '')).access_token, 'the successor still works');
    },
  },
  {
    name: 'reuse at the last second of the window (5 seconds) is still a retry',
    async before(w) {
      await rotateOnce(w);
      w.engine.clock.advance(5);
    },
    expected: ALREADY_USED,
    then: async (w) => assert.equal(await grantRevokedAt(w), null),
  },
  {
    name: 'reuse after the window revokes the grant and every token under it',
    async before(w) {
      await rotateOnce(w);
      w.engine.clock.advance(6);
    },
    expected: {
      code: 'invalid_grant',
      status: 400,
      description: 'refresh token reused; the grant is revoked',
    },
    async then(w) {
      assert.equal(await grantRevokedAt(w), START + 6);
      assert.equal(
        (await stored(w, w.rotated?.refresh_token)).retiredAt,
        START + 6,
        'the successor is retired',
      );
      await expectOAuthError(refresh(w, w.rotated?.refresh_token ?? ''), {
        code: 'invalid_grant',
        status: 400,
      });
      assert.equal(await isLive(w.engine, w.rotated?.access_token ?? ''), false);
      assert.equal(await isLive(w.engine, w.first.access_token), false);
    },
  },
  {
    name: 'the grace window is the operator’s: with none, any reuse revokes',
    engine: { refreshReuseGraceSeconds: 0 },
    async before(w) {
      await rotateOnce(w);
      w.engine.clock.advance(1);
    },
    expected: {
      code: 'invalid_grant',
      status: 400,
      description: 'refresh token reused; the grant is revoked',
    },
    then: async (w) => assert.equal(await grantRevokedAt(w), START + 1),
  },
  {
    name: 'another client presenting a retired token sets off nothing',
    async before(w) {
      await rotateOnce(w);
      w.engine.clock.advance(60);
    },
    as: (w) => w.other,
    expected: { code: 'invalid_grant', status: 400, description: 'unknown refresh token' },
    then: async (w) => assert.equal(await grantRevokedAt(w), null),
  },
  // Lifetimes
  {
    name: 'an expired refresh token',
    engine: { refreshTokenTtl: 100 },
    before: async (w) => w.engine.clock.advance(100),
    expected: { code: 'invalid_grant', status: 400, description: 'refresh token expired' },
  },
  {
    name: 'never outlives the grant: the new tokens end when the grant does',
    grantExpiresAt: START + 1800,
    before: async (w) => w.engine.clock.advance(1000),
    expected: 'tokens',
    async then(w, response) {
      assert.equal(response?.expires_in, 800);
      assert.equal((await stored(w, response?.refresh_token)).expiresAt, START + 1800);
    },
  },
  {
    name: 'refused once the grant has ended',
    grantExpiresAt: START + 1800,
    before: async (w) => w.engine.clock.advance(1800),
    expected: { code: 'invalid_grant', status: 400 },
  },
  {
    name: 'a revoked grant',
    before: async (w) => void (await w.engine.storage.grants.revoke(w.grant.id, START)),
    expected: { code: 'invalid_grant', status: 400 },
  },
  // The client's registration now (RFC 6749 §3.3)
  {
    name: 'scopes the client no longer has are dropped from the new tokens',
    before: (w) => reregister(w, { scopes: ['read', 'email'] }),
    expected: 'tokens',
    async then(w, response) {
      assert.equal(response?.scope, 'read');
      assert.deepEqual((await stored(w, response?.refresh_token)).scope, ['read']);
    },
  },
  {
    name: 'asking for a granted scope the client no longer has',
    before: (w) => reregister(w, { scopes: ['read'] }),
    params: () => ({ scope: 'write' }),
    expected: {
      code: 'invalid_scope',
      status: 400,
      description: 'scope is no longer registered for this client',
    },
    then: unchanged,
  },
  {
    name: 'none of the granted scopes left to the client',
    before: (w) => reregister(w, { scopes: ['email'] }),
    expected: {
      code: 'invalid_scope',
      status: 400,
      description: 'none of the granted scopes is registered for this client any more',
    },
    then: unchanged,
  },
  {
    name: 'a client no longer registered for the refresh_token grant',
    before: (w) => reregister(w, { grantTypes: ['authorization_code'] }),
    expected: {
      code: 'unauthorized_client',
      status: 400,
      description: 'this client may not use the refresh_token grant',
    },
    then: unchanged,
  },
];

/** The operator changes the client's registration (settings only; the secret stays). */
async function reregister(w: World, changes: Partial<Client>): Promise<void> {
  w.client = { ...w.client, ...changes };
  assert.ok(await w.engine.storage.clients.update(w.client, 'keep'));
}

async function world(row: Row): Promise<World> {
  const engine = await testEngine(row.engine);
  const registration = { grantTypes: ['authorization_code', 'refresh_token'] as Client['grantTypes'] };
  const { client, secret } = await addClient(engine, {
    ...registration,
    scopes: ['read', 'write', 'email'],
    ...row.client,
  });
  const other = await addClient(engine, registration);
  const otherPublic = await addClient(engine, { ...registration, isPublic: true });
  const user = await addUser(engine);
  const pkce = pkcePair();
  const { code, grant } = await seedCode(engine, client, user, {
    scope: ['read', 'write'],
    grantExpiresAt: row.grantExpiresAt ?? null,
    codeChallenge: pkce.challenge,
    codeChallengeMethod: 'S256',
  });
  const partial = { engine, client, secret, other, otherPublic, user, grant };
  const params = {
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT,
    code_verifier: pkce.verifier,
  };
  const first = client.isPublic
    ? await engine.token({ authorization: undefined, params: { ...params, client_id: client.id } })
    : await engine.token({ authorization: basic(client.id, secret), params });
  assert.ok(first.refresh_token);
  return { ...partial, first, refreshToken: first.refresh_token };
}

describe('refresh_token grant (RFC 6749 §6, RFC 9700 §4.14)', () => {
  for (const row of ROWS) {
    it(row.name, async () => {
      const w = await world(row);
      try {
        await row.before?.(w);
        const request = refresh(w, w.refreshToken, row.params?.(w) ?? {}, row.as?.(w) ?? w);
        let response: TokenResponse | undefined;
        if (row.expected === 'tokens') {
          response = await request;
          await liveClaims(w.engine, response.access_token);
        } else {
          await expectOAuthError(request, row.expected);
        }
        await row.then?.(w, response);
      } finally {
        await w.engine.close();
      }
    });
  }

  it('lets exactly one of 20 concurrent refreshes with one token win; the others are retries', async () => {
    const w = await world({ name: 'race', expected: 'tokens' });
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => refresh(w, w.refreshToken)));
    const won = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const lost = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as OAuthError] : []));
    assert.equal(won.length, 1);
    assert.ok(lost.every((error) => error.code === 'invalid_grant' && error.status === 400));
    assert.equal(lost.length, 19);
    assert.equal(await grantRevokedAt(w), null, 'retries inside the window leave the grant alive');
    assert.ok((await refresh(w, won[0]?.refresh_token ?? '')).refresh_token);
    await w.engine.close();
  });
});
