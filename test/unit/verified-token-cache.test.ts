import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import {
  AccessTokenValidator,
  InvalidAccessTokenError,
} from '../../src/core/tokens/access-token-validation.js';
import type { VerificationJwks } from '../../src/core/keys/key-ring.js';
import type { Client } from '../../src/core/model.js';
import type { Storage } from '../../src/core/ports.js';
import { VerifiedTokenCache } from '../../src/core/tokens/verified-token-cache.js';
import { ManualClock } from '../../src/shared/clock.js';

const ISSUER = 'https://as.example';
const NOW = 1_800_000_000;

async function keyPair(kid: string) {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' };
  const sign = (payload: JWTPayload) =>
    new SignJWT(payload).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid }).sign(privateKey);
  return { jwk, sign };
}

function payload(overrides: JWTPayload = {}): JWTPayload {
  return {
    iss: ISSUER,
    aud: ISSUER,
    sub: 'service',
    client_id: 'client-1',
    jti: 'jti-1',
    scope: 'read',
    iat: NOW - 10,
    exp: NOW + 300,
    ...overrides,
  };
}

class Ring {
  constructor(public current: VerificationJwks) {}
  verificationJwks(): Promise<VerificationJwks> {
    return Promise.resolve(this.current);
  }
  refresh(): Promise<void> {
    return Promise.resolve();
  }
}

/** validate()'s stores for a client_credentials token: revocations, and its client. */
function stores(revoked: Set<string>) {
  return {
    revocations: { isAccessTokenRevoked: (jti: string) => Promise.resolve(revoked.has(jti)) },
    clients: { get: (id: string) => Promise.resolve(id === 'client-1' ? ({ id } as Client) : undefined) },
    grants: { get: () => Promise.resolve(undefined) },
  } as unknown as Pick<Storage, 'revocations' | 'grants' | 'clients'>;
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof InvalidAccessTokenError, `not an InvalidAccessTokenError: ${String(error)}`);
    return error.description;
  }
  assert.fail('the token was accepted');
}

describe('verified-token cache (decision 27)', () => {
  it('a cached token revoked is refused at the next presentation', async () => {
    const key = await keyPair('k1');
    const revoked = new Set<string>();
    const checker = new AccessTokenValidator({
      keyRing: new Ring({ keys: [key.jwk] }),
      storage: stores(revoked),
      clock: new ManualClock(NOW),
      issuer: ISSUER,
    });
    const token = await key.sign(payload());
    assert.equal((await checker.validate(token, 'any')).claims.jti, 'jti-1');
    assert.equal((await checker.validate(token, 'any')).claims.jti, 'jti-1');
    revoked.add('jti-1');
    assert.equal(await refusal(checker.validate(token, 'any')), 'the access token was revoked');
  });

  it('a cached token is held to the clock: refused once expired, and before its nbf', async () => {
    const key = await keyPair('k1');
    const clock = new ManualClock(NOW);
    const checker = new AccessTokenValidator({
      keyRing: new Ring({ keys: [key.jwk] }),
      storage: stores(new Set()),
      clock,
      issuer: ISSUER,
    });
    const token = await key.sign(payload({ exp: NOW + 60, nbf: NOW }));
    assert.equal((await checker.verify(token)).exp, NOW + 60);
    // A clock set back (tests, or a correction) finds nbf in the future: not valid, as the verifier says.
    clock.advance(-1);
    assert.equal(await refusal(checker.verify(token)), 'the access token is not valid');
    clock.advance(1 + 59.9);
    assert.equal((await checker.verify(token)).exp, NOW + 60);
    clock.advance(0.1);
    assert.equal(await refusal(checker.verify(token)), 'the access token has expired');
  });

  it('a key removed from the ring invalidates the tokens cached under it; the audience is checked each time', async () => {
    const a = await keyPair('a');
    const b = await keyPair('b');
    const ring = new Ring({ keys: [a.jwk, b.jwk] });
    const checker = new AccessTokenValidator({
      keyRing: ring,
      storage: stores(new Set()),
      clock: new ManualClock(NOW),
      issuer: ISSUER,
    });
    const token = await a.sign(payload({ aud: 'https://api.example' }));
    assert.equal((await checker.verify(token, 'any')).jti, 'jti-1');
    assert.equal(
      await refusal(checker.verify(token, 'issuer')),
      'the access token was issued for another resource (aud)',
    );
    ring.current = { keys: [b.jwk] };
    assert.equal(await refusal(checker.verify(token, 'any')), 'the access token is not valid');
  });

  it('holds at most its bound, dropping the least recently used first', () => {
    const set = { keys: [] };
    const cache = new VerifiedTokenCache<number, object>(4);
    for (let i = 0; i < 100; i += 1) {
      cache.set(`t${i}`, i, set);
      assert.ok(cache.size <= 4, `size ${cache.size} after ${i + 1} entries`);
    }
    assert.equal(cache.get('t0', set), undefined);
    assert.equal(cache.get('t99', set), 99);
    // t98 is used, so it outlives t97 when the next two entries arrive.
    assert.equal(cache.get('t98', set), 98);
    cache.set('x1', -1, set);
    cache.set('x2', -2, set);
    assert.equal(cache.get('t98', set), 98);
    assert.equal(cache.get('t97', set), undefined);
  });

  it('empties when the key set changes', () => {
    const first = { keys: [] };
    const cache = new VerifiedTokenCache<number, object>(10);
    cache.set('t', 1, first);
    assert.equal(cache.get('t', first), 1);
    assert.equal(cache.get('t', { keys: [] }), undefined);
    assert.equal(cache.size, 0);
    assert.equal(cache.get('t', first), undefined);
  });

  it('refuses a bound below two', () => {
    assert.throws(() => new VerifiedTokenCache(1));
  });
});
