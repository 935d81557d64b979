import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { isValidCodeChallenge, verifyCodeVerifier } from '../../src/core/authorize/pkce.js';

// RFC 7636 Appendix B: the example verifier and its S256 challenge.
const RFC_VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const RFC_CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
// Another verifier's challenge (RFC_VERIFIER with its last character changed), for mismatches.
const OTHER_VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXl';

/** A string of `length` characters: `fill` repeated, with `special` in the middle. */
const made = (length: number, special = '', fill = 'a') =>
  fill.repeat(Math.floor((length - special.length) / 2)) +
  special +
  fill.repeat(length - special.length - Math.floor((length - special.length) / 2));

interface VerifierRow {
  name: string;
  verifier: string;
  challenge: string;
  method: 'S256' | 'plain';
  expected: boolean;
}

const VERIFIER_ROWS: VerifierRow[] = [
  // S256 (RFC 7636 §4.6): BASE64URL(SHA256(ASCII(code_verifier))) == code_challenge.
  {
    name: 'S256: the RFC 7636 Appendix B verifier matches its challenge',
    verifier: RFC_VERIFIER,
    challenge: RFC_CHALLENGE,
    method: 'S256',
    expected: true,
  },
  {
    name: 'S256: a verifier one character off does not',
    verifier: OTHER_VERIFIER,
    challenge: RFC_CHALLENGE,
    method: 'S256',
    expected: false,
  },
  {
    name: 'S256: the challenge itself sent as the verifier (a plain downgrade) does not',
    verifier: RFC_CHALLENGE,
    challenge: RFC_CHALLENGE,
    method: 'S256',
    expected: false,
  },
  {
    name: 'S256: the verifier sent where the challenge was stored (hashing skipped) does not',
    verifier: RFC_VERIFIER,
    challenge: RFC_VERIFIER,
    method: 'S256',
    expected: false,
  },
  // plain (RFC 7636 §4.6): code_verifier == code_challenge.
  {
    name: 'plain: the verifier equal to the challenge matches',
    verifier: RFC_VERIFIER,
    challenge: RFC_VERIFIER,
    method: 'plain',
    expected: true,
  },
  {
    name: 'plain: a different verifier does not',
    verifier: OTHER_VERIFIER,
    challenge: RFC_VERIFIER,
    method: 'plain',
    expected: false,
  },
  {
    name: 'plain: the S256 challenge of the verifier does not (methods are not interchangeable)',
    verifier: RFC_VERIFIER,
    challenge: RFC_CHALLENGE,
    method: 'plain',
    expected: false,
  },
  // RFC 7636 §4.1: code-verifier = 43*128unreserved. With plain and an equal challenge, only these bounds decide.
  {
    name: 'length 42 is too short',
    verifier: made(42),
    challenge: made(42),
    method: 'plain',
    expected: false,
  },
  {
    name: 'length 43 is the minimum',
    verifier: made(43),
    challenge: made(43),
    method: 'plain',
    expected: true,
  },
  {
    name: 'length 128 is the maximum',
    verifier: made(128),
    challenge: made(128),
    method: 'plain',
    expected: true,
  },
  {
    name: 'length 129 is too long',
    verifier: made(129),
    challenge: made(129),
    method: 'plain',
    expected: false,
  },
  {
    name: 'every unreserved character is allowed: ALPHA DIGIT - . _ ~',
    verifier: made(66, 'AZaz09-._~'),
    challenge: made(66, 'AZaz09-._~'),
    method: 'plain',
    expected: true,
  },
  ...['+', '/', '=', ' ', '%', '!', '*', ':', 'é', '\u0000'].map((special) => ({
    name: `a reserved or non-ASCII character (${JSON.stringify(special)}) is refused`,
    verifier: made(50, special),
    challenge: made(50, special),
    method: 'plain' as const,
    expected: false,
  })),
  {
    name: 'S256 applies the same bounds: a 42-character verifier is refused even when its hash matches',
    verifier: made(42),
    challenge: createHash('sha256').update(made(42)).digest('base64url'),
    method: 'S256',
    expected: false,
  },
];

interface ChallengeRow {
  name: string;
  challenge: string;
  method: 'S256' | 'plain';
  expected: boolean;
}

const CHALLENGE_ROWS: ChallengeRow[] = [
  {
    name: 'S256: the RFC 7636 Appendix B challenge',
    challenge: RFC_CHALLENGE,
    method: 'S256',
    expected: true,
  },
  { name: 'S256: 42 characters', challenge: RFC_CHALLENGE.slice(1), method: 'S256', expected: false },
  { name: 'S256: 44 characters', challenge: `${RFC_CHALLENGE}A`, method: 'S256', expected: false },
  {
    name: 'S256: with base64 padding',
    challenge: `${RFC_CHALLENGE.slice(0, 42)}=`,
    method: 'S256',
    expected: false,
  },
  { name: 'S256: with a "." (not base64url)', challenge: made(43, '.'), method: 'S256', expected: false },
  {
    name: 'S256: with a "+" (base64, not base64url)',
    challenge: made(43, '+'),
    method: 'S256',
    expected: false,
  },
  { name: 'plain: 43 unreserved characters', challenge: made(43, '-._~'), method: 'plain', expected: true },
  { name: 'plain: 128 characters', challenge: made(128), method: 'plain', expected: true },
  { name: 'plain: 42 characters', challenge: made(42), method: 'plain', expected: false },
  { name: 'plain: 129 characters', challenge: made(129), method: 'plain', expected: false },
  { name: 'plain: a reserved character', challenge: made(43, '/'), method: 'plain', expected: false },
];

describe('PKCE (RFC 7636)', () => {
  describe('verifyCodeVerifier', () => {
    for (const row of VERIFIER_ROWS) {
      it(row.name, () => {
        assert.equal(verifyCodeVerifier(row.verifier, row.challenge, row.method), row.expected);
      });
    }
  });

  describe('isValidCodeChallenge', () => {
    for (const row of CHALLENGE_ROWS) {
      it(row.name, () => {
        assert.equal(isValidCodeChallenge(row.challenge, row.method), row.expected);
      });
    }
  });
});
