import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import {
  AccessTokenValidator,
  InvalidAccessTokenError,
  MAX_ACTOR_DEPTH,
  type AudienceCheck,
} from '../../src/core/tokens/access-token-validation.js';
import type { VerificationJwks } from '../../src/core/keys/key-ring.js';
import type { Storage } from '../../src/core/ports.js';
import { ManualClock } from '../../src/shared/clock.js';

const ISSUER = 'https://as.example';
const NOW = 1_800_000_000;

interface SigningKey {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

async function signingKey(kid: string, alg = 'ES256'): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

/** A key ring's two verification methods: `next` is what a refresh reads (a rotation elsewhere). */
class FakeKeyRing {
  refreshes = 0;
  constructor(
    public current: VerificationJwks,
    public next: VerificationJwks = current,
  ) {}
  verificationJwks(): Promise<VerificationJwks> {
    return Promise.resolve(this.current);
  }
  refresh(): Promise<void> {
    this.refreshes += 1;
    this.current = this.next;
    return Promise.resolve();
  }
}

function claims(overrides: Record<string, unknown> = {}): JWTPayload {
  return {
    iss: ISSUER,
    aud: ISSUER,
    sub: 'user-1',
    client_id: 'client-1',
    jti: 'jti-1',
    scope: 'openid',
    iat: NOW - 10,
    exp: NOW + 300,
    ...overrides,
  };
}

async function sign(
  key: SigningKey,
  payload: JWTPayload,
  header: { typ?: string; alg?: string; kid?: string } = {},
): Promise<string> {
  const body = Object.fromEntries(Object.entries(payload).filter(([, value]) => value !== undefined));
  return new SignJWT(body)
    .setProtectedHeader({ alg: key.alg, typ: 'at+jwt', kid: key.kid, ...header })
    .sign(key.privateKey);
}

function validator(ring: FakeKeyRing, clock = new ManualClock(NOW)): AccessTokenValidator {
  // verify() reads no storage; validate()'s liveness checks are covered by the API tests.
  const storage = {} as Pick<Storage, 'revocations' | 'grants' | 'clients'>;
  return new AccessTokenValidator({ keyRing: ring, storage, clock, issuer: ISSUER });
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

function nested(depth: number): Record<string, unknown> {
  let act: Record<string, unknown> = { sub: `actor-${depth}` };
  for (let level = depth - 1; level > 0; level -= 1) act = { sub: `actor-${level}`, act };
  return act;
}

describe('AccessTokenValidator (synchronous JWS verification)', () => {
  it('accepts a token it signed and returns its claims; the audience check is the caller’s', async () => {
    const key = await signingKey('k1');
    const checker = validator(new FakeKeyRing({ keys: [key.jwk] }));
    const verified = await checker.verify(await sign(key, claims({ cnf: { jkt: 'A'.repeat(43) } })));
    assert.equal(verified.sub, 'user-1');
    assert.deepEqual(verified.cnf, { jkt: 'A'.repeat(43) });

    const forResource = await sign(key, claims({ aud: ['https://rs.example'] }));
    assert.deepEqual((await checker.verify(forResource, 'any')).aud, ['https://rs.example']);
    assert.equal(
      await refusal(checker.verify(forResource, 'issuer')),
      'the access token was issued for another resource (aud)',
    );
  });

  it('accepts EdDSA and RS256 tokens, refuses an algorithm it does not sign with', async () => {
    const ed = await signingKey('ed', 'EdDSA');
    const rs = await signingKey('rs', 'RS256');
    const es384 = await signingKey('es384', 'ES384');
    const checker = validator(new FakeKeyRing({ keys: [ed.jwk, rs.jwk, es384.jwk] }));
    assert.equal((await checker.verify(await sign(ed, claims()))).jti, 'jti-1');
    assert.equal((await checker.verify(await sign(rs, claims()))).jti, 'jti-1');
    assert.equal(await refusal(checker.verify(await sign(es384, claims()))), 'the access token is not valid');
  });

  // Each refusal keeps the description jose's path gave (not valid / expired / malformed claims).
  const refusals: [string, (key: SigningKey) => Promise<string>, string, AudienceCheck?][] = [
    ['expired', (key) => sign(key, claims({ exp: NOW - 1 })), 'the access token has expired'],
    [
      'expiring this second (exp <= now)',
      (key) => sign(key, claims({ exp: NOW })),
      'the access token has expired',
    ],
    ['not yet valid (nbf)', (key) => sign(key, claims({ nbf: NOW + 1 })), 'the access token is not valid'],
    ['typ JWT (an ID token)', (key) => sign(key, claims(), { typ: 'JWT' }), 'the access token is not valid'],
    [
      'another issuer',
      (key) => sign(key, claims({ iss: 'https://evil.example' })),
      'the access token is not valid',
    ],
    ['without scope', (key) => sign(key, claims({ scope: undefined })), 'the access token is not valid'],
    ['without jti', (key) => sign(key, claims({ jti: undefined })), 'the access token is not valid'],
    ['a non-numeric iat', (key) => sign(key, claims({ iat: 'now' })), 'the access token is not valid'],
    ['a numeric scope', (key) => sign(key, claims({ scope: 7 })), 'the access token has malformed claims'],
    [
      'a numeric client_id',
      (key) => sign(key, claims({ client_id: 7 })),
      'the access token has malformed claims',
    ],
    ['a numeric aud', (key) => sign(key, claims({ aud: 7 })), 'the access token has malformed claims', 'any'],
    ['a numeric jti', (key) => sign(key, claims({ jti: 7 })), 'the access token has malformed claims'],
    [
      'a token_type not mac',
      (key) => sign(key, claims({ token_type: 'x' })),
      'the access token has malformed claims',
    ],
    [
      'a cnf with more than jkt',
      (key) => sign(key, claims({ cnf: { jkt: 'A'.repeat(43), x5t: 'y' } })),
      'the access token has malformed claims',
    ],
    [
      'an act nested too deep',
      (key) => sign(key, claims({ act: nested(MAX_ACTOR_DEPTH + 1) })),
      'the access token has malformed claims',
    ],
    [
      'expired, with malformed claims (expiry is checked first, as jose did)',
      (key) => sign(key, claims({ exp: NOW - 1, client_id: 7 })),
      'the access token has expired',
    ],
    [
      'a tampered payload',
      async (key) => {
        const [header, , signature] = (await sign(key, claims())).split('.');
        const payload = Buffer.from(JSON.stringify(claims({ scope: 'admin' }))).toString('base64url');
        return `${header}.${payload}.${signature}`;
      },
      'the access token is not valid',
    ],
    ['two dots only', () => Promise.resolve('a.b'), 'the access token is malformed'],
  ];
  for (const [name, token, description, audience] of refusals) {
    it(`refuses a token: ${name}`, async () => {
      const key = await signingKey('k1');
      const checker = validator(new FakeKeyRing({ keys: [key.jwk] }));
      assert.equal(await refusal(checker.verify(await token(key), audience)), description);
    });
  }

  it('accepts an act chain as deep as the bound', async () => {
    const key = await signingKey('k1');
    const checker = validator(new FakeKeyRing({ keys: [key.jwk] }));
    const verified = await checker.verify(await sign(key, claims({ act: nested(MAX_ACTOR_DEPTH) })));
    assert.equal(verified.act?.sub, 'actor-1');
  });

  it('a kid it does not have: re-reads the ring once, then verifies with the rotated key', async () => {
    const old = await signingKey('old');
    const rotated = await signingKey('new');
    const ring = new FakeKeyRing({ keys: [old.jwk] }, { keys: [old.jwk, rotated.jwk] });
    const checker = validator(ring);
    assert.equal((await checker.verify(await sign(old, claims()))).jti, 'jti-1');
    assert.equal(ring.refreshes, 0, 'a known kid needs no re-read');
    assert.equal((await checker.verify(await sign(rotated, claims({ jti: 'j2' })))).jti, 'j2');
    assert.equal(ring.refreshes, 1);
  });

  it('a kid still unknown after the re-read is refused; a wrong signature is refused without one', async () => {
    const known = await signingKey('k1');
    const stranger = await signingKey('nobody');
    const ring = new FakeKeyRing({ keys: [known.jwk] });
    const checker = validator(ring);
    assert.equal(
      await refusal(checker.verify(await sign(stranger, claims()))),
      'the access token is not valid',
    );
    assert.equal(ring.refreshes, 1);
    // The stranger's signature under the known kid: a key is found, the signature fails, nothing re-read.
    const forged = await sign(stranger, claims(), { kid: 'k1' });
    assert.equal(await refusal(checker.verify(forged)), 'the access token is not valid');
    assert.equal(ring.refreshes, 1);
  });

  it('follows the ring’s set as it changes: a key left out (revoked) stops verifying at once', async () => {
    const a = await signingKey('a');
    const b = await signingKey('b');
    const ring = new FakeKeyRing({ keys: [a.jwk, b.jwk] });
    const checker = validator(ring);
    const token = await sign(a, claims());
    assert.equal((await checker.verify(token)).jti, 'jti-1');
    ring.current = { keys: [b.jwk] };
    ring.next = ring.current;
    assert.equal(await refusal(checker.verify(token)), 'the access token is not valid');
  });

  it('judges expiry by the injected clock', async () => {
    const key = await signingKey('k1');
    const clock = new ManualClock(NOW);
    const checker = validator(new FakeKeyRing({ keys: [key.jwk] }), clock);
    const token = await sign(key, claims({ exp: NOW + 60 }));
    assert.equal((await checker.verify(token)).exp, NOW + 60);
    clock.advance(60);
    assert.equal(await refusal(checker.verify(token)), 'the access token has expired');
  });
});
