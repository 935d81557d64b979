import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import type { Client, Grant, User } from '../../src/core/model.js';
import type { TokenResponse } from '../../src/core/tokens/token-issuer.js';
import { sha256 } from '../../src/shared/crypto.js';
import {
  addClient,
  addUser,
  expectOAuthError,
  PASSWORD,
  seedCode,
  withBasic,
} from '../helpers/fakes/fixtures.js';
import { ISSUER, START, testEngine, type TestEngine } from '../helpers/fakes/test-engine.js';

/**
 * The token endpoint as an OpenID Provider: the ID token of the code grant (Core §3.1.3.3), of a
 * refresh (Core §12.2), and when a refresh token is issued for an OpenID Connect grant
 * (docs/decisions.md, decision 17). A grant without `openid` is plain OAuth, exactly as before.
 */

const AUTH_TIME = START - 300;
const SID = 'sid-of-the-browser-session';

interface World {
  engine: TestEngine;
  client: Client;
  secret: string;
  user: User;
  grant: Grant;
  code: string;
}

interface Setup {
  /** The code's scope. */
  scope: string[];
  client?: Partial<Client>;
  /** What the authorization endpoint recorded with the code; omitted: as before OpenID Connect. */
  recorded?: { nonce?: string; authTime?: number; sid?: string } | 'nothing';
}

interface Row {
  name: string;
  setup: Setup;
  run: (w: World) => Promise<void>;
}

const halfHash = (value: string) =>
  createHash('sha256').update(Buffer.from(value, 'ascii')).digest().subarray(0, 16).toString('base64url');

async function world(setup: Setup): Promise<World> {
  const engine = await testEngine();
  const { client, secret } = await addClient(engine, {
    scopes: ['openid', 'profile', 'email', 'offline_access', 'read'],
    grantTypes: ['authorization_code', 'refresh_token', 'password'],
    ...setup.client,
  });
  const user = await addUser(engine);
  const recorded =
    setup.recorded === 'nothing' ? {} : (setup.recorded ?? { nonce: 'n-123', authTime: AUTH_TIME, sid: SID });
  const { code, grant } = await seedCode(engine, client, user, { scope: setup.scope, ...recorded });
  return { engine, client, secret, user, grant, code };
}

function redeem(w: World): Promise<TokenResponse> {
  return w.engine.token(
    withBasic(w.client, w.secret, {
      grant_type: 'authorization_code',
      code: w.code,
      redirect_uri: w.client.redirectUris[0],
    }),
  );
}

function refresh(w: World, token: string | undefined, scope?: string): Promise<TokenResponse> {
  assert.ok(token, 'a refresh token was issued');
  return w.engine.token(
    withBasic(w.client, w.secret, { grant_type: 'refresh_token', refresh_token: token, scope }),
  );
}

/** The ID token, verified as a relying party does (Core §3.1.3.7) against the published keys. */
async function idToken(w: World, response: TokenResponse): Promise<JWTPayload> {
  assert.ok(response.id_token, 'an id_token is in the response');
  const { payload } = await jwtVerify(
    response.id_token,
    createLocalJWKSet(await w.engine.keyRing.publicJwks()),
    {
      issuer: ISSUER,
      audience: w.client.id,
      currentDate: new Date(w.engine.clock.now() * 1000),
      typ: 'JWT',
    },
  );
  assert.equal(payload.sub, w.user.id, 'the same sub as the access token (Core §2)');
  assert.equal(payload.azp, w.client.id);
  assert.equal(payload.at_hash, halfHash(response.access_token), 'at_hash of this response’s access token');
  return payload;
}

const ROWS: Row[] = [
  {
    name: 'openid: an ID token with the code’s nonce, auth_time and sid; no refresh token without offline_access',
    setup: { scope: ['openid', 'profile'] },
    async run(w) {
      const response = await redeem(w);
      assert.equal(response.scope, 'openid profile');
      assert.equal(response.refresh_token, undefined, 'Core §11: offline_access was not granted');
      const claims = await idToken(w, response);
      assert.equal(claims.nonce, 'n-123');
      assert.equal(claims.auth_time, AUTH_TIME);
      assert.equal(claims.sid, SID);
      assert.equal(claims.iat, START);
      assert.equal(
        claims.name,
        undefined,
        'profile’s claims come from UserInfo when an access token is issued',
      );
    },
  },
  {
    name: 'openid offline_access: a refresh token too, carrying the sign-in (auth_time, sid) for its refreshes',
    setup: { scope: ['openid', 'offline_access'] },
    async run(w) {
      const response = await redeem(w);
      await idToken(w, response);
      assert.ok(response.refresh_token);
      const stored = await w.engine.storage.refreshTokens.get(sha256(response.refresh_token));
      assert.deepEqual({ authTime: stored?.authTime, sid: stored?.sid }, { authTime: AUTH_TIME, sid: SID });
    },
  },
  {
    name: 'openid offline_access for a client without the refresh_token grant: no refresh token',
    setup: { scope: ['openid', 'offline_access'], client: { grantTypes: ['authorization_code'] } },
    async run(w) {
      const response = await redeem(w);
      await idToken(w, response);
      assert.equal(response.refresh_token, undefined);
    },
  },
  {
    name: 'no openid: plain OAuth as before, a refresh token for a refresh_token client and no ID token',
    setup: { scope: ['read', 'profile'] },
    async run(w) {
      const response = await redeem(w);
      assert.equal(response.id_token, undefined);
      assert.equal(typeof response.refresh_token, 'string');
      const stored = await w.engine.storage.refreshTokens.get(sha256(response.refresh_token ?? ''));
      // Decision 36: the sign-in's time stays for the access tokens (RFC 9470 §4); no session, no ID token.
      assert.deepEqual({ authTime: stored?.authTime, sid: stored?.sid }, { authTime: AUTH_TIME, sid: null });
      const refreshed = await refresh(w, response.refresh_token);
      assert.equal(refreshed.id_token, undefined);
    },
  },
  {
    name: 'no nonce sent: none in the ID token',
    setup: { scope: ['openid'], recorded: { authTime: AUTH_TIME, sid: SID } },
    async run(w) {
      const claims = await idToken(w, await redeem(w));
      assert.equal(claims.nonce, undefined);
    },
  },
  {
    name: 'a code that recorded no sign-in (issued before OpenID Connect): auth_time its issue time, sid its grant',
    setup: { scope: ['openid'], recorded: 'nothing' },
    async run(w) {
      w.engine.clock.advance(5);
      const claims = await idToken(w, await redeem(w));
      assert.equal(claims.auth_time, START);
      assert.equal(claims.sid, w.grant.id);
    },
  },
  {
    name: 'a client registered for ES256 gets an ES256 ID token; the access token keeps its own key',
    setup: { scope: ['openid'], client: { idTokenSignedResponseAlg: 'ES256' } },
    async run(w) {
      const response = await redeem(w);
      await idToken(w, response);
      assert.equal(decodeProtectedHeader(response.id_token ?? '').alg, 'ES256');
      assert.equal(decodeProtectedHeader(response.access_token).typ, 'at+jwt');
    },
  },
  {
    name: 'refresh (Core §12.2): a new ID token, same sub, auth_time and sid, no nonce, a new iat',
    setup: { scope: ['openid', 'profile', 'offline_access'] },
    async run(w) {
      const first = await redeem(w);
      w.engine.clock.advance(600);
      const refreshed = await refresh(w, first.refresh_token);
      const claims = await idToken(w, refreshed);
      assert.equal(claims.auth_time, AUTH_TIME, 'the original authentication’s time');
      assert.equal(claims.sid, SID);
      assert.equal(claims.nonce, undefined);
      assert.equal(claims.iat, START + 600);
      // And again after the rotation: the sign-in travels with each new refresh token.
      w.engine.clock.advance(600);
      const again = await idToken(w, await refresh(w, refreshed.refresh_token));
      assert.deepEqual([again.auth_time, again.sid, again.iat], [AUTH_TIME, SID, START + 1200]);
    },
  },
  {
    name: 'refresh narrowed to a scope without openid: an access token, no ID token',
    setup: { scope: ['openid', 'read', 'offline_access'] },
    async run(w) {
      const refreshed = await refresh(w, (await redeem(w)).refresh_token, 'read');
      assert.equal(refreshed.scope, 'read');
      assert.equal(refreshed.id_token, undefined);
    },
  },
  {
    name: 'after the grant is revoked, a refresh gets nothing: no access token, no ID token',
    setup: { scope: ['openid', 'offline_access'] },
    async run(w) {
      const first = await redeem(w);
      await w.engine.storage.grants.revoke(w.grant.id, w.engine.clock.now());
      await expectOAuthError(refresh(w, first.refresh_token), { code: 'invalid_grant', status: 400 });
    },
  },
  {
    name: 'the password grant stays plain OAuth: no ID token, and its refresh tokens none either',
    setup: { scope: ['read'] },
    async run(w) {
      const response = await w.engine.token(
        withBasic(w.client, w.secret, {
          grant_type: 'password',
          username: w.user.username,
          password: PASSWORD,
          scope: 'openid read',
        }),
      );
      assert.equal(response.id_token, undefined);
      assert.ok(response.refresh_token, 'a refresh_token client gets one, as before');
      assert.equal((await refresh(w, response.refresh_token)).id_token, undefined);
    },
  },
];

describe('token endpoint as an OpenID Provider (Core §3.1.3.3, §11, §12.2)', () => {
  for (const row of ROWS) {
    it(row.name, async () => {
      const w = await world(row.setup);
      try {
        await row.run(w);
      } finally {
        await w.engine.close();
      }
    });
  }
});
