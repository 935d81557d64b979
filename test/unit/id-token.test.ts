import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import type { Client, User } from '../../src/core/model.js';
import type { IdTokenInput } from '../../src/core/tokens/id-token.js';
import { leftHalfHash } from '../../src/core/tokens/id-token.js';
import { addClient, addUser } from '../helpers/fakes/fixtures.js';
import { ISSUER, START, testEngine, type TestEngine } from '../helpers/fakes/test-engine.js';

/** at_hash / c_hash computed here, independently of the module under test (Core §3.3.2.11). */
function expectedHalfHash(value: string): string {
  return createHash('sha256')
    .update(Buffer.from(value, 'ascii'))
    .digest()
    .subarray(0, 16)
    .toString('base64url');
}

interface World {
  engine: TestEngine;
  client: Client;
  es256Client: Client;
  user: User;
}

interface Row {
  name: string;
  /** The input, over the defaults (the RS256 client, the user, scope openid, auth_time and sid). */
  input: (w: World) => Partial<IdTokenInput>;
  /** The exact set of claims names the token carries. */
  claims: string[];
  then?: (w: World, payload: JWTPayload, header: { alg?: string; typ?: string; kid?: string }) => void;
}

const AUTH_TIME = START - 120;
const BASE_CLAIMS = ['iss', 'sub', 'aud', 'exp', 'iat', 'auth_time', 'sid', 'azp'];

const ROWS: Row[] = [
  {
    name: 'the claims every ID token has (Core §2): iss, sub, aud, exp, iat, auth_time, sid, azp',
    input: () => ({ accessToken: 'at' }),
    claims: [...BASE_CLAIMS, 'at_hash'],
    then(w, payload, header) {
      assert.equal(payload.iss, ISSUER);
      assert.equal(payload.sub, w.user.id, 'the same subject as the access token');
      assert.equal(payload.aud, w.client.id);
      assert.equal(payload.azp, w.client.id);
      assert.equal(payload.iat, START);
      assert.equal(payload.exp, START + 3600, 'GATEHOUSE_ID_TOKEN_TTL defaults to an hour');
      assert.equal(payload.auth_time, AUTH_TIME);
      assert.equal(payload.sid, 'sid-1');
      assert.deepEqual(
        { alg: header.alg, typ: header.typ },
        { alg: 'RS256', typ: 'JWT' },
        'RS256 by default (Core §15.1), typ JWT: never taken for an access token (at+jwt)',
      );
    },
  },
  {
    name: 'the nonce, unchanged, when the request had one (Core §3.1.2.1)',
    input: () => ({ nonce: 'n-0S6_WzA2Mj', accessToken: 'at' }),
    claims: [...BASE_CLAIMS, 'nonce', 'at_hash'],
    then: (_w, payload) => assert.equal(payload.nonce, 'n-0S6_WzA2Mj'),
  },
  {
    name: 'at_hash of the access token issued with it: Core Appendix A’s example value',
    input: () => ({ accessToken: 'jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y' }),
    claims: [...BASE_CLAIMS, 'at_hash'],
    then: (_w, payload) => assert.equal(payload.at_hash, '77QmUPtjPfzWtF2AnpK9RQ'),
  },
  {
    name: 'c_hash of the code issued with it: Core Appendix A’s example value',
    input: () => ({ code: 'Qcb0Orv1zh30vL1MPRsbm-diHiMwcLyZvn1arpZv-Jxf_11jnpEX3Tgfvk', nonce: 'n' }),
    claims: [...BASE_CLAIMS, 'nonce', 'c_hash'],
    then: (_w, payload) => assert.equal(payload.c_hash, 'LDktKdoQak3Pk0cnXxCltA'),
  },
  {
    name: 'both hashes for code id_token token, each of its own value (Core §3.3.2.11)',
    input: () => ({ code: 'ac_code', accessToken: 'at_token', nonce: 'n' }),
    claims: [...BASE_CLAIMS, 'nonce', 'at_hash', 'c_hash'],
    then(_w, payload) {
      assert.equal(payload.at_hash, expectedHalfHash('at_token'));
      assert.equal(payload.c_hash, expectedHalfHash('ac_code'));
    },
  },
  {
    name: 'ES256 for a client registered for it; its hash is SHA-256 too (Core §3.3.2.11)',
    input: (w) => ({ client: w.es256Client, accessToken: 'at_token' }),
    claims: [...BASE_CLAIMS, 'at_hash'],
    then(w, payload, header) {
      assert.equal(header.alg, 'ES256');
      assert.equal(header.kid, w.engine.keyRing.activeKidFor('ES256'));
      assert.equal(payload.aud, w.es256Client.id);
      assert.equal(payload.at_hash, expectedHalfHash('at_token'));
    },
  },
  {
    name: 'no access token and no code (response_type=id_token): the scopes’ claims are in the token (Core §5.4)',
    input: () => ({ scope: ['openid', 'profile', 'email'], nonce: 'n' }),
    claims: [...BASE_CLAIMS, 'nonce', 'name', 'preferred_username', 'updated_at', 'email', 'email_verified'],
    then(w, payload) {
      assert.equal(payload.name, 'Alice Example');
      assert.equal(payload.preferred_username, w.user.username);
      assert.equal(payload.updated_at, w.user.updatedAt);
      assert.equal(payload.email, 'alice@example.com');
      assert.equal(payload.email_verified, false, 'Gatehouse never verifies addresses');
    },
  },
  {
    name: 'no access token, scope openid profile: profile’s claims only',
    input: () => ({ scope: ['openid', 'profile'], nonce: 'n' }),
    claims: [...BASE_CLAIMS, 'nonce', 'name', 'preferred_username', 'updated_at'],
  },
  {
    name: 'with an access token, the claims go through UserInfo, not the token (Core §5.4)',
    input: () => ({ scope: ['openid', 'profile', 'email'], accessToken: 'at' }),
    claims: [...BASE_CLAIMS, 'at_hash'],
  },
  {
    name: 'with a code (code id_token), the same: the code leads to an access token',
    input: () => ({ scope: ['openid', 'profile', 'email'], code: 'ac_code', nonce: 'n' }),
    claims: [...BASE_CLAIMS, 'nonce', 'c_hash'],
  },
  {
    name: 'an explicit issue time',
    input: () => ({ now: START + 50, accessToken: 'at' }),
    claims: [...BASE_CLAIMS, 'at_hash'],
    then(_w, payload) {
      assert.equal(payload.iat, START + 50);
      assert.equal(payload.exp, START + 50 + 3600);
    },
  },
];

describe('ID tokens (OpenID Connect Core §2, §3.3.2.11, §5.4): engine.idTokens.issue', () => {
  const w = {} as World;
  before(async () => {
    w.engine = await testEngine();
    w.client = (await addClient(w.engine, { scopes: ['openid', 'profile', 'email'] })).client;
    w.es256Client = (await addClient(w.engine, { idTokenSignedResponseAlg: 'ES256' })).client;
    const user = await addUser(w.engine);
    w.user = { ...user, email: 'alice@example.com', name: 'Alice Example' };
    assert.ok(await w.engine.storage.users.update(w.user));
  });
  after(() => w.engine.close());

  for (const row of ROWS) {
    it(row.name, async () => {
      const token = await w.engine.idTokens.issue({
        client: w.client,
        userId: w.user.id,
        scope: ['openid'],
        authTime: AUTH_TIME,
        sid: 'sid-1',
        ...row.input(w),
      });
      // Verified as a relying party would (Core §3.1.3.7), against the published keys.
      const jwks = createLocalJWKSet(await w.engine.keyRing.publicJwks());
      const audience = (row.input(w).client ?? w.client).id;
      const { payload, protectedHeader } = await jwtVerify(token, jwks, {
        issuer: ISSUER,
        audience,
        currentDate: new Date(START * 1000),
        algorithms: ['RS256', 'ES256'],
      });
      assert.deepEqual(Object.keys(payload).sort(), [...row.claims].sort());
      assert.equal(protectedHeader.kid, decodeProtectedHeader(token).kid);
      row.then?.(w, payload, protectedHeader);
    });
  }

  it('is never accepted as an access token (typ JWT, aud the client)', async () => {
    const token = await w.engine.idTokens.issue({
      client: w.client,
      userId: w.user.id,
      scope: ['openid'],
      authTime: AUTH_TIME,
      sid: 'sid-1',
    });
    await assert.rejects(w.engine.tokens.validator.validate(token));
  });

  it('leftHalfHash is the left-most 128 bits of SHA-256, base64url (Core §3.3.2.11)', () => {
    for (const value of ['', 'a', 'ac_' + 'x'.repeat(43), 'jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y']) {
      for (const alg of ['RS256', 'ES256'] as const) {
        assert.equal(leftHalfHash(value, alg), expectedHalfHash(value), `${alg} ${value}`);
      }
    }
  });
});
