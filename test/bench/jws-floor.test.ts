import assert from 'node:assert/strict';
import { generateKeyPairSync, hash, sign, type KeyObject } from 'node:crypto';
import { describe, it } from 'node:test';
import { bareCheck, decodedCheck, decodedDpopCheck, type FloorAlgorithm } from '../../bench/lib/jws-floor.js';

// The floors the library is judged against must verify for real: a floor that accepted anything (or
// nothing) would make every ratio of the rs-jwt and rs-dpop scenarios meaningless.

const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

function keyPair(alg: FloorAlgorithm): { privateKey: KeyObject; publicKey: KeyObject } {
  if (alg === 'RS256') return generateKeyPairSync('rsa', { modulusLength: 2048 });
  if (alg === 'ES256') return generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return generateKeyPairSync('ed25519');
}

function jws(alg: FloorAlgorithm, privateKey: KeyObject, claims: Record<string, unknown>): string {
  const input = `${encode({ alg, typ: 'at+jwt' })}.${encode(claims)}`;
  const data = Buffer.from(input);
  const signature =
    alg === 'ES256'
      ? sign('sha256', data, { key: privateKey, dsaEncoding: 'ieee-p1363' })
      : sign(alg === 'RS256' ? 'sha256' : null, data, privateKey);
  return `${input}.${signature.toString('base64url')}`;
}

/** The same JWS with one claim changed and the signature kept. */
function tampered(token: string): string {
  const [header, , signature] = token.split('.');
  return `${header}.${encode({ sub: 'someone else' })}.${signature}`;
}

describe('the floors of the resource-server benchmarks (bench/lib/jws-floor.ts)', () => {
  for (const alg of ['ES256', 'RS256', 'EdDSA'] as const) {
    it(`${alg}: the bare and the decoded check accept the signed token and refuse it altered`, () => {
      const { privateKey, publicKey } = keyPair(alg);
      const token = jws(alg, privateKey, { sub: 'user-1', iat: 1 });
      assert.equal(bareCheck(alg, token, publicKey)(), true);
      assert.equal(bareCheck(alg, tampered(token), publicKey)(), false);
      const decoded = decodedCheck(alg, publicKey);
      assert.equal(decoded(token), true);
      assert.equal(decoded(tampered(token)), false);
      const other = keyPair(alg).publicKey;
      assert.equal(decodedCheck(alg, other)(token), false, 'another key');
    });
  }

  it('the decoded check refuses claims that are not a JSON object', () => {
    const { privateKey, publicKey } = keyPair('ES256');
    const input = `${encode({ alg: 'ES256' })}.${encode('a string')}`;
    const signature = sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' });
    assert.equal(decodedCheck('ES256', publicKey)(`${input}.${signature.toString('base64url')}`), false);
  });

  it('the decoded DPoP floor needs both signatures and the token’s hash as ath', () => {
    const tokenKeys = keyPair('ES256');
    const proofKeys = keyPair('ES256');
    const token = jws('ES256', tokenKeys.privateKey, { sub: 'user-1' });
    const proof = jws('ES256', proofKeys.privateKey, { jti: 'a', htm: 'GET' });
    const tokenCheck = decodedCheck('ES256', tokenKeys.publicKey);
    const proofCheck = decodedCheck('ES256', proofKeys.publicKey);
    const ath = hash('sha256', token, 'base64url');
    assert.equal(decodedDpopCheck(token, tokenCheck, proofCheck, ath)(proof), true);
    assert.equal(decodedDpopCheck(token, tokenCheck, proofCheck, ath)(tampered(proof)), false);
    assert.equal(decodedDpopCheck(tampered(token), tokenCheck, proofCheck, ath)(proof), false);
    assert.equal(decodedDpopCheck(token, tokenCheck, proofCheck, 'another-hash')(proof), false);
  });
});
