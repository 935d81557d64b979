import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLocalJWKSet, decodeJwt, jwtVerify } from 'jose';
import type { Authentication } from '../../src/core/sign-in/assurance.js';
import type {
  DeviceAuthorizationResponse,
  UserCodeCheck,
} from '../../src/core/device/device-authorization.js';
import {
  formatUserCode,
  newUserCode,
  normaliseUserCode,
  USER_CODE_ALPHABET,
  userCodeHash,
} from '../../src/core/device/user-code.js';
import type { OAuthErrorCode } from '../../src/core/errors.js';
import { DEVICE_CODE_GRANT_TYPE, type Client, type User } from '../../src/core/model.js';
import type { TokenResponse } from '../../src/core/tokens/token-issuer.js';
import { sha256 } from '../../src/shared/crypto.js';
import {
  addClient,
  addUser,
  expectOAuthError,
  isLive,
  liveClaims,
  withBasic,
} from '../helpers/fakes/fixtures.js';
import { ISSUER, START, testEngine, type TestEngine } from '../helpers/fakes/test-engine.js';

// RFC 8628 through the engine's public entry points: DeviceAuthorizationService (start, check, find,
// approve, deny) and TokenEndpoint.handle, on the in-memory fakes and a manual clock.

const ADDRESS = '203.0.113.7';
const OTHER_ADDRESS = '198.51.100.9';
const DEVICE_GRANTS: Client['grantTypes'] = [DEVICE_CODE_GRANT_TYPE, 'refresh_token'];

interface World {
  engine: TestEngine;
  client: Client;
  user: User;
  started: DeviceAuthorizationResponse;
}

async function world(
  options: { client?: Partial<Client>; scope?: string; resources?: string[] } = {},
): Promise<World> {
  const engine = await testEngine();
  const { client } = await addClient(engine, {
    isPublic: true,
    redirectUris: [],
    grantTypes: DEVICE_GRANTS,
    scopes: ['read', 'write', 'openid', 'profile', 'offline_access'],
    ...options.client,
  });
  const user = await addUser(engine);
  const started = await engine.engine.deviceAuthorization.start(client, {
    scope: options.scope ?? 'read write',
    resources: options.resources ?? [],
  });
  return { engine, client, user, started };
}

/** A poll of the token endpoint (RFC 8628 §3.4) by the world's public client. */
function poll(
  w: World,
  params: Record<string, string> = {},
  client: Client = w.client,
): Promise<TokenResponse> {
  return w.engine.token({
    authorization: undefined,
    params: {
      grant_type: DEVICE_CODE_GRANT_TYPE,
      client_id: client.id,
      device_code: w.started.device_code,
      ...params,
    },
  });
}

const pollError = (w: World, code: OAuthErrorCode, description?: string | RegExp) =>
  expectOAuthError(poll(w), { code, status: 400, ...(description !== undefined ? { description } : {}) });

const signIn = (w: World): Authentication => ({ userId: w.user.id, authTime: START - 60, sid: 'sid-1' });

async function approve(
  w: World,
  decision: { scope?: string[]; lifetime?: number | null } = {},
  session: Authentication = signIn(w),
): Promise<void> {
  const found = await w.engine.engine.deviceAuthorization.find(w.started.user_code);
  assert.equal(found.outcome, 'pending');
  if (found.outcome !== 'pending') return;
  const answer = await w.engine.engine.deviceAuthorization.approve(w.started.user_code, session, {
    scope: decision.scope ?? found.request.scope,
    lifetime: decision.lifetime === undefined ? 3600 : decision.lifetime,
  });
  assert.equal(answer, 'approved');
}

describe('RFC 8628 user codes (§6.1)', () => {
  it('are eight letters of the alphabet without vowels or look-alikes, shown as XXXX-XXXX', () => {
    assert.equal(USER_CODE_ALPHABET.length, 20);
    assert.doesNotMatch(USER_CODE_ALPHABET, /[AEIOUY0-9]/);
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const code = newUserCode();
      assert.match(code, /^[BCDFGHJKLMNPQRSTVWXZ]{8}$/);
      seen.add(code);
      assert.match(formatUserCode(code), /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    }
    // 2000 draws from 20^8 codes: a repeat would mean the generator is broken.
    assert.equal(seen.size, 2000);
    // Every letter turns up: no letter of the alphabet is left out by a biased draw.
    const letters = new Set([...seen].join(''));
    assert.equal(letters.size, 20);
  });

  const NORMALISATION: [string, string | undefined][] = [
    ['BCDF-GHJK', 'BCDFGHJK'],
    ['bcdf-ghjk', 'BCDFGHJK'],
    ['bcdfghjk', 'BCDFGHJK'],
    ['  BCDF GHJK ', 'BCDFGHJK'],
    ['BC-DF-GH-JK', 'BCDFGHJK'],
    ['bCdF\tgHjK', 'BCDFGHJK'],
    ['BCDF-GHJ', undefined],
    ['BCDF-GHJKL', undefined],
    ['BCDF-GHJA', undefined],
    ['BCDF-GHJ0', undefined],
    ['BCDF_GHJK', undefined],
    ['BCDF—GHJK', undefined],
    ['', undefined],
    [`${'-'.repeat(60)}BCDFGHJK`, undefined],
  ];
  for (const [typed, normal] of NORMALISATION) {
    it(`${JSON.stringify(typed)} is ${normal === undefined ? 'not a code' : normal}`, () => {
      assert.equal(normaliseUserCode(typed), normal);
    });
  }

  it('are stored as a hash of the normal form, whatever was typed', () => {
    const forms = ['BCDF-GHJK', 'bcdf ghjk', 'bcdfghjk'].map((typed) =>
      userCodeHash(normaliseUserCode(typed) ?? ''),
    );
    assert.equal(new Set(forms).size, 1);
    assert.notEqual(forms[0], userCodeHash('BCDFGHJL'));
  });
});

describe('POST /device_authorization (§3.1, §3.2)', () => {
  it('answers a device code of 256 bits, a user code, the verification URIs, expires_in and interval; stores only hashes', async () => {
    const w = await world();
    const { started } = w;
    assert.deepEqual(Object.keys(started).sort(), [
      'device_code',
      'expires_in',
      'interval',
      'user_code',
      'verification_uri',
      'verification_uri_complete',
    ]);
    assert.match(started.device_code, /^dc_[A-Za-z0-9_-]{43}$/);
    assert.match(started.user_code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    assert.equal(started.verification_uri, `${ISSUER}/device`);
    assert.equal(started.verification_uri_complete, `${ISSUER}/device?user_code=${started.user_code}`);
    assert.equal(started.expires_in, 600);
    assert.equal(started.interval, 5);
    const stored = await w.engine.storage.deviceAuthorizations.getByUserCode(
      userCodeHash(normaliseUserCode(started.user_code) ?? ''),
    );
    assert.ok(stored);
    assert.equal(stored.hash, sha256(started.device_code));
    const text = JSON.stringify(stored);
    assert.ok(!text.includes(started.device_code) && !text.includes(started.user_code.replace('-', '')));
    assert.deepEqual(
      { scope: stored.scope, status: stored.status, expiresAt: stored.expiresAt, interval: stored.interval },
      { scope: ['read', 'write'], status: 'pending', expiresAt: START + 600, interval: 5 },
    );
  });

  interface StartRow {
    name: string;
    client?: Partial<Client>;
    scope?: string;
    resources?: string[];
    expected: { code: OAuthErrorCode; description?: RegExp } | { scope: string[]; resources?: string[] };
  }
  const ROWS: StartRow[] = [
    {
      name: 'a client not registered for the device grant: unauthorized_client',
      client: { grantTypes: ['authorization_code'], redirectUris: ['https://app.example/cb'] },
      expected: { code: 'unauthorized_client', description: /device authorization grant/ },
    },
    {
      name: 'a scope the client lacks: invalid_scope',
      scope: 'read admin',
      expected: { code: 'invalid_scope' },
    },
    { name: 'a malformed scope: invalid_scope', scope: 'read "x"', expected: { code: 'invalid_scope' } },
    {
      name: 'an unregistered resource: invalid_target',
      resources: ['https://unknown.example'],
      expected: { code: 'invalid_target' },
    },
    {
      name: 'a resource with a fragment: invalid_target',
      resources: ['https://api.example/#x'],
      expected: { code: 'invalid_target' },
    },
    { name: 'no scope: the client’s scopes', scope: '', expected: { scope: ['read', 'write'] } },
    {
      name: 'openid: address and phone, which Gatehouse does not keep, are ignored; offline_access kept',
      client: { scopes: ['read', 'openid', 'offline_access'] },
      scope: 'openid address phone offline_access',
      expected: { scope: ['openid', 'offline_access'] },
    },
    {
      name: 'a registered resource: its scopes only, and the request bound to it',
      scope: 'read',
      resources: ['https://API.example/'],
      expected: { scope: ['read'], resources: ['https://api.example'] },
    },
  ];
  for (const row of ROWS) {
    it(row.name, async () => {
      const engine = await testEngine();
      await engine.storage.resources.insert({
        uri: 'https://api.example',
        name: null,
        scopes: ['read'],
        createdAt: START,
      });
      const { client } = await addClient(engine, {
        isPublic: true,
        redirectUris: [],
        grantTypes: DEVICE_GRANTS,
        scopes: ['read', 'write'],
        ...row.client,
      });
      const start = engine.engine.deviceAuthorization.start(client, {
        scope: row.scope === '' ? undefined : (row.scope ?? 'read'),
        resources: row.resources ?? [],
      });
      if ('code' in row.expected) {
        await expectOAuthError(start, { status: 400, ...row.expected });
        return;
      }
      const started = await start;
      const stored = await engine.storage.deviceAuthorizations.getByUserCode(
        userCodeHash(normaliseUserCode(started.user_code) ?? ''),
      );
      assert.deepEqual(stored?.scope, row.expected.scope);
      assert.deepEqual(stored?.resources, row.expected.resources ?? []);
    });
  }

  it('draws another user code when the one drawn is taken', async () => {
    const w = await world();
    const store = w.engine.storage.deviceAuthorizations;
    const insert = store.insert.bind(store);
    let refused = 0;
    store.insert = async (authorization) => {
      if (refused < 3) {
        refused++;
        return false;
      }
      return insert(authorization);
    };
    const started = await w.engine.engine.deviceAuthorization.start(w.client, {
      scope: 'read',
      resources: [],
    });
    assert.equal(refused, 3);
    assert.equal((await w.engine.engine.deviceAuthorization.find(started.user_code)).outcome, 'pending');
  });
});

describe('the verification page’s check of a code (§3.3), throttled per source (§5.1)', () => {
  it('finds the pending request by the code however it is typed, naming the client and scope', async () => {
    const w = await world();
    for (const typed of [
      w.started.user_code,
      w.started.user_code.toLowerCase(),
      w.started.user_code.replace('-', ' '),
    ]) {
      const check = await w.engine.engine.deviceAuthorization.check(typed, ADDRESS);
      assert.equal(check.outcome, 'pending');
      if (check.outcome !== 'pending') continue;
      assert.equal(check.request.userCode, w.started.user_code);
      assert.equal(check.request.client.id, w.client.id);
      assert.deepEqual(check.request.scope, ['read', 'write']);
      assert.equal(check.request.openid, false);
    }
  });

  interface CheckRow {
    name: string;
    arrange?: (w: World) => Promise<void>;
    typed: (w: World) => string;
    outcome: UserCodeCheck['outcome'];
    /** Whether it counts as a wrong code of the source. */
    counted: boolean;
  }
  const ROWS: CheckRow[] = [
    { name: 'pending', typed: (w) => w.started.user_code, outcome: 'pending', counted: false },
    {
      name: 'malformed: not looked up, not counted',
      typed: () => 'HELLO',
      outcome: 'malformed',
      counted: false,
    },
    { name: 'unknown', typed: () => 'ZZZZ-ZZZZ', outcome: 'unknown', counted: true },
    {
      name: 'expired',
      arrange: async (w) => w.engine.clock.advance(600),
      typed: (w) => w.started.user_code,
      outcome: 'expired',
      counted: true,
    },
    {
      name: 'approved already',
      arrange: (w) => approve(w),
      typed: (w) => w.started.user_code,
      outcome: 'decided',
      counted: true,
    },
    {
      name: 'denied already',
      arrange: async (w) => {
        assert.equal(
          await w.engine.engine.deviceAuthorization.deny(w.started.user_code, w.user.id),
          'denied',
        );
      },
      typed: (w) => w.started.user_code,
      outcome: 'decided',
      counted: true,
    },
  ];
  for (const row of ROWS) {
    it(`${row.name}${row.counted ? ': counted as a wrong code' : ''}`, async () => {
      const w = await world();
      await row.arrange?.(w);
      const check = await w.engine.engine.deviceAuthorization.check(row.typed(w), ADDRESS);
      assert.equal(check.outcome, row.outcome);
      const counted = await w.engine.storage.throttle.peek(
        `device:user-code:${ADDRESS}`,
        w.engine.clock.now(),
      );
      assert.equal(counted.count, row.counted ? 1 : 0);
    });
  }

  it('10 wrong codes in 15 minutes: then nothing is looked up from that source, even a right code, until the window ends', async () => {
    const w = await world();
    const device = w.engine.engine.deviceAuthorization;
    for (let i = 0; i < 10; i++) {
      assert.equal((await device.check('ZZZZ-ZZZZ', ADDRESS)).outcome, 'unknown');
      w.engine.clock.advance(30);
    }
    const refused = await device.check(w.started.user_code, ADDRESS);
    assert.deepEqual(refused, { outcome: 'throttled', retryAfter: 900 - 300 });
    // Another source is not held back, and a right code does not lift the count.
    assert.equal((await device.check(w.started.user_code, OTHER_ADDRESS)).outcome, 'pending');
    assert.equal((await device.check('ZZZZ-ZZZZ', ADDRESS)).outcome, 'throttled');
    // An IPv6 source counts by its /64: the next address of the prefix is the same source.
    for (let i = 0; i < 10; i++) await device.check('ZZZZ-ZZZZ', `2001:db8::${i}`);
    assert.equal((await device.check(w.started.user_code, '2001:db8::ffff')).outcome, 'throttled');
    w.engine.clock.advance(600);
    assert.equal((await device.check(w.started.user_code, ADDRESS)).outcome, 'expired');
  });

  it('the window ends: the source may try again', async () => {
    const w = await world({});
    const device = w.engine.engine.deviceAuthorization;
    for (let i = 0; i < 10; i++) await device.check('ZZZZ-ZZZZ', ADDRESS);
    assert.equal((await device.check(w.started.user_code, ADDRESS)).outcome, 'throttled');
    w.engine.clock.advance(899);
    assert.deepEqual(await device.check(w.started.user_code, ADDRESS), {
      outcome: 'throttled',
      retryAfter: 1,
    });
    w.engine.clock.advance(1);
    // The request itself expired meanwhile (ten minutes): a new one is found.
    const again = await device.start(w.client, { scope: 'read', resources: [] });
    assert.equal((await device.check(again.user_code, ADDRESS)).outcome, 'pending');
  });
});

describe('polling the token endpoint (§3.4, §3.5)', () => {
  it('pending: authorization_pending; sooner than the interval: slow_down, and the interval grows by 5 s each time', async () => {
    const w = await world();
    // [seconds since the last poll, answer, interval after it]
    const steps: [number, OAuthErrorCode, number][] = [
      [0, 'authorization_pending', 5],
      [5, 'authorization_pending', 5],
      [4, 'slow_down', 10],
      [9, 'slow_down', 15],
      [15, 'authorization_pending', 15],
      [0, 'slow_down', 20],
      [20, 'authorization_pending', 20],
      [25, 'authorization_pending', 20],
    ];
    for (const [wait, code, interval] of steps) {
      w.engine.clock.advance(wait);
      const error = await pollError(w, code);
      if (code === 'slow_down') assert.match(error.description, new RegExp(`at least ${interval} seconds`));
      const stored = await w.engine.storage.deviceAuthorizations.getByUserCode(
        userCodeHash(normaliseUserCode(w.started.user_code) ?? ''),
      );
      assert.equal(stored?.interval, interval, `after waiting ${wait} s`);
      assert.equal(stored?.lastPolledAt, w.engine.clock.now());
    }
  });

  interface PollRow {
    name: string;
    arrange?: (w: World) => Promise<void>;
    params?: (w: World) => Record<string, string>;
    as?: (w: World) => Promise<Client>;
    expected: { code: OAuthErrorCode; status?: number; description?: RegExp };
  }
  const ROWS: PollRow[] = [
    {
      name: 'no device_code: invalid_request',
      params: () => ({ device_code: '' }),
      expected: { code: 'invalid_request', description: /device_code is required/ },
    },
    {
      name: 'an unknown device_code: invalid_grant',
      params: () => ({ device_code: 'dc_nonsense' }),
      expected: { code: 'invalid_grant', description: /unknown device_code/ },
    },
    {
      name: 'another client’s device_code: invalid_grant, as an unknown one',
      as: async (w) =>
        (await addClient(w.engine, { isPublic: true, redirectUris: [], grantTypes: DEVICE_GRANTS })).client,
      expected: { code: 'invalid_grant', description: /unknown device_code/ },
    },
    {
      name: 'a client not registered for the grant: unauthorized_client',
      as: async (w) =>
        (await addClient(w.engine, { isPublic: true, grantTypes: ['authorization_code'] })).client,
      expected: { code: 'unauthorized_client' },
    },
    {
      name: 'denied: access_denied',
      arrange: async (w) => {
        await w.engine.engine.deviceAuthorization.deny(w.started.user_code, w.user.id);
      },
      expected: { code: 'access_denied', description: /denied/ },
    },
    {
      name: 'expired: expired_token',
      arrange: async (w) => w.engine.clock.advance(600),
      expected: { code: 'expired_token' },
    },
    {
      name: 'approved, but expired before the device came back: expired_token',
      arrange: async (w) => {
        await approve(w);
        w.engine.clock.advance(600);
      },
      expected: { code: 'expired_token' },
    },
    {
      name: 'approved, then the grant revoked (Connected apps) before the poll: invalid_grant',
      arrange: async (w) => {
        await approve(w);
        const [grant] = await w.engine.storage.grants.listByUser(w.user.id);
        await w.engine.storage.grants.revoke(grant?.id ?? '', w.engine.clock.now());
      },
      expected: { code: 'invalid_grant', description: /revoked/ },
    },
    {
      name: 'approved, a resource the request did not name: invalid_target',
      arrange: (w) => approve(w),
      params: () => ({ resource: 'https://api.example' }),
      expected: { code: 'invalid_target' },
    },
  ];
  for (const row of ROWS) {
    it(row.name, async () => {
      const w = await world();
      await w.engine.storage.resources.insert({
        uri: 'https://api.example',
        name: null,
        scopes: [],
        createdAt: START,
      });
      await row.arrange?.(w);
      const client = row.as ? await row.as(w) : w.client;
      const { resource, ...params } = row.params?.(w) ?? {};
      await expectOAuthError(
        w.engine.tokenEndpoint.handle({
          authorization: undefined,
          params: {
            grant_type: DEVICE_CODE_GRANT_TYPE,
            client_id: client.id,
            device_code: w.started.device_code,
            ...params,
          },
          resources: resource === undefined ? [] : [resource],
        }),
        { status: 400, ...row.expected },
      );
    });
  }

  it('approved: tokens for what the user allowed, under a grant of the lifetime they chose; then the code is spent', async () => {
    const w = await world();
    await pollError(w, 'authorization_pending');
    await approve(w, { scope: ['read'], lifetime: 86400 });
    w.engine.clock.advance(5);
    const tokens = await poll(w);
    assert.equal(tokens.token_type, 'bearer');
    assert.equal(tokens.scope, 'read');
    assert.equal(tokens.id_token, undefined);
    assert.equal(typeof tokens.refresh_token, 'string');
    const claims = await liveClaims(w.engine, tokens.access_token);
    assert.equal(claims.sub, w.user.id);
    assert.equal(claims.client_id, w.client.id);
    assert.equal(claims.aud, ISSUER);
    const [grant] = await w.engine.storage.grants.listByUser(w.user.id);
    assert.deepEqual(
      { id: claims.gid, scope: grant?.scope, expiresAt: grant?.expiresAt },
      { id: grant?.id, scope: ['read'], expiresAt: START + 86400 },
    );
    // Redeemed once: the next poll is refused, and what was issued stands.
    w.engine.clock.advance(5);
    await pollError(w, 'invalid_grant', 'the device code was already used');
    assert.ok(await isLive(w.engine, tokens.access_token));
    // The refresh token works as any other (RFC 6749 §6).
    const refreshed = await w.engine.token({
      authorization: undefined,
      params: {
        grant_type: 'refresh_token',
        client_id: w.client.id,
        refresh_token: tokens.refresh_token ?? '',
      },
    });
    assert.equal(refreshed.scope, 'read');
  });

  it('no refresh token for a client not registered for refresh_token', async () => {
    const w = await world({ client: { grantTypes: [DEVICE_CODE_GRANT_TYPE] } });
    await approve(w);
    const tokens = await poll(w);
    assert.equal(tokens.refresh_token, undefined);
  });

  it('a confidential client authenticates as at the token endpoint', async () => {
    const engine = await testEngine();
    const { client, secret } = await addClient(engine, { grantTypes: DEVICE_GRANTS, redirectUris: [] });
    const user = await addUser(engine);
    const started = await engine.engine.deviceAuthorization.start(client, { scope: 'read', resources: [] });
    const w: World = { engine, client, user, started };
    await expectOAuthError(poll(w), { code: 'invalid_client', status: 401 });
    await approve(w);
    const tokens = await engine.token(
      withBasic(client, secret, { grant_type: DEVICE_CODE_GRANT_TYPE, device_code: started.device_code }),
    );
    assert.equal(tokens.scope, 'read');
  });

  it('resources: the token is for the resource the request named, or the one of them the poll names', async () => {
    const engine = await testEngine();
    for (const uri of ['https://a.example', 'https://b.example']) {
      await engine.storage.resources.insert({ uri, name: null, scopes: [], createdAt: START });
    }
    const { client } = await addClient(engine, {
      isPublic: true,
      redirectUris: [],
      grantTypes: DEVICE_GRANTS,
    });
    const user = await addUser(engine);
    const started = await engine.engine.deviceAuthorization.start(client, {
      scope: 'read',
      resources: ['https://a.example', 'https://b.example'],
    });
    const w: World = { engine, client, user, started };
    await approve(w);
    const tokens = await engine.tokenEndpoint.handle({
      authorization: undefined,
      params: { grant_type: DEVICE_CODE_GRANT_TYPE, client_id: client.id, device_code: started.device_code },
      resources: ['https://b.example'],
    });
    // For another resource than the issuer: Gatehouse's own validator refuses it (decision 19).
    assert.equal(decodeJwt(tokens.access_token).aud, 'https://b.example');
    const stored = await engine.storage.refreshTokens.get(sha256(tokens.refresh_token ?? ''));
    assert.deepEqual(stored?.resources, ['https://a.example', 'https://b.example']);
  });

  it('OpenID Connect: an ID token for the sign-in that approved it; a refresh token only with offline_access', async () => {
    for (const [scope, refresh] of [
      ['openid profile', false],
      ['openid profile offline_access', true],
    ] as const) {
      const w = await world({ scope });
      await approve(w);
      const tokens = await poll(w);
      assert.equal(tokens.refresh_token !== undefined, refresh, scope);
      const jwks = createLocalJWKSet(await w.engine.keyRing.publicJwks());
      const { payload } = await jwtVerify(tokens.id_token ?? '', jwks, {
        issuer: ISSUER,
        audience: w.client.id,
      });
      assert.equal(payload.sub, w.user.id);
      assert.equal(payload.auth_time, START - 60);
      assert.equal(payload.sid, 'sid-1');
      assert.equal(payload.nonce, undefined);
      assert.equal(typeof payload.at_hash, 'string');
    }
  });

  it('an OpenID Connect request is approved by a sign-in, not a bare user id', async () => {
    const w = await world({ scope: 'openid' });
    await assert.rejects(
      w.engine.engine.deviceAuthorization.approve(
        w.started.user_code,
        { userId: w.user.id },
        {
          scope: ['openid'],
          lifetime: 3600,
        },
      ),
      /sign-in/,
    );
  });

  it('of 20 concurrent polls after approval exactly one gets tokens; the others invalid_grant', async () => {
    const w = await world();
    await approve(w);
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => poll(w)));
    const won = results.filter((r) => r.status === 'fulfilled');
    assert.equal(won.length, 1);
    for (const result of results) {
      if (result.status === 'rejected') {
        const reason = result.reason as { code?: string };
        assert.ok(['invalid_grant', 'slow_down'].includes(reason.code ?? ''), String(result.reason));
      }
    }
  });
});

describe('the consent (§3.3): decided once, never remembered', () => {
  it('approving or denying an answered or expired request changes nothing', async () => {
    const w = await world();
    const device = w.engine.engine.deviceAuthorization;
    assert.equal(await device.deny(w.started.user_code, w.user.id), 'denied');
    assert.equal(
      await device.approve(w.started.user_code, signIn(w), { scope: ['read'], lifetime: 3600 }),
      'gone',
    );
    assert.deepEqual(await w.engine.storage.grants.listByUser(w.user.id), []);
    assert.equal(await device.deny(w.started.user_code, w.user.id), 'gone');
    await pollError(w, 'access_denied');

    const late = await world();
    late.engine.clock.advance(600);
    assert.equal(
      await late.engine.engine.deviceAuthorization.approve(late.started.user_code, signIn(late), {
        scope: ['read'],
        lifetime: 3600,
      }),
      'gone',
    );
    assert.deepEqual(await late.engine.storage.grants.listByUser(late.user.id), []);
  });

  it('two tabs allowing at once: one answer; the grant of the other is revoked', async () => {
    const w = await world();
    const device = w.engine.engine.deviceAuthorization;
    const answers = await Promise.all(
      [3600, 86400].map((lifetime) =>
        device.approve(w.started.user_code, signIn(w), { scope: ['read', 'write'], lifetime }),
      ),
    );
    assert.deepEqual(answers.sort(), ['approved', 'gone']);
    const live = (await w.engine.storage.grants.listByUser(w.user.id)).filter((g) => g.revokedAt === null);
    assert.equal(live.length, 1);
  });

  it('an earlier grant to the client that the new consent overrules is revoked, as at /authorize', async () => {
    const first = await world();
    await approve(first, { scope: ['read', 'write'], lifetime: null });
    const started = await first.engine.engine.deviceAuthorization.start(first.client, {
      scope: 'read write',
      resources: [],
    });
    await approve({ ...first, started }, { scope: ['read'], lifetime: 3600 });
    const grants = await first.engine.storage.grants.listByUser(first.user.id);
    const state = (scope: string) => grants.find((g) => g.scope.join(' ') === scope)?.revokedAt === null;
    assert.deepEqual([state('read write'), state('read')], [false, true]);
  });

  it('find() reads a request again without counting it as a wrong code', async () => {
    const w = await world();
    for (let i = 0; i < 20; i++) await w.engine.engine.deviceAuthorization.find('ZZZZ-ZZZZ');
    assert.equal(
      (await w.engine.engine.deviceAuthorization.check(w.started.user_code, ADDRESS)).outcome,
      'pending',
    );
  });
});
