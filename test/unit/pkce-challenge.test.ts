import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  checkCodeChallenge,
  codeChallengeMethodOf,
  isAllowedCodeChallengeMethod,
  type CodeChallengeCheck,
  type CodeChallengeParams,
  type PkceRules,
} from '../../src/core/authorize/pkce.js';

// The authorization request's PKCE rules (RFC 7636 §4.3, §4.4.1; RFC 9700 §2.1.1), as the `pkce`
// step of validateAuthorizationRequest calls them; beside pkce.test.ts, which covers the verifier.

// RFC 7636 Appendix B.
const S256_CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
const PLAIN_CHALLENGE = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';

const CONFIDENTIAL: PkceRules = { isPublic: false, allowPlain: false };
const PUBLIC: PkceRules = { isPublic: true, allowPlain: false };
const PLAIN_ALLOWED: PkceRules = { isPublic: false, allowPlain: true };

interface Row {
  name: string;
  params: CodeChallengeParams;
  rules: PkceRules;
  expected: CodeChallengeCheck;
}

const refused = (description: string): CodeChallengeCheck => ({ ok: false, description });

const ROWS: Row[] = [
  {
    name: 'no challenge from a confidential client: accepted, without one',
    params: { challenge: undefined, method: undefined },
    rules: CONFIDENTIAL,
    expected: { ok: true, challenge: null },
  },
  {
    name: 'no challenge from a public client: refused (RFC 9700 §2.1.1)',
    params: { challenge: undefined, method: undefined },
    rules: PUBLIC,
    expected: refused('public clients must send a code_challenge (S256)'),
  },
  {
    name: 'a method without a challenge: refused, before the public-client rule',
    params: { challenge: undefined, method: 'S256' },
    rules: PUBLIC,
    expected: refused('code_challenge_method without code_challenge'),
  },
  {
    name: 'an S256 challenge',
    params: { challenge: S256_CHALLENGE, method: 'S256' },
    rules: PUBLIC,
    expected: { ok: true, challenge: { challenge: S256_CHALLENGE, method: 'S256' } },
  },
  {
    name: 'an unknown method: refused, before the challenge is looked at',
    params: { challenge: 'x', method: 'S512' },
    rules: PLAIN_ALLOWED,
    expected: refused('code_challenge_method must be S256'),
  },
  {
    name: 'plain where the policy refuses it',
    params: { challenge: PLAIN_CHALLENGE, method: 'plain' },
    rules: CONFIDENTIAL,
    expected: refused('code_challenge_method must be S256'),
  },
  {
    name: 'no method means plain (RFC 7636 §4.3): refused where plain is',
    params: { challenge: S256_CHALLENGE, method: undefined },
    rules: CONFIDENTIAL,
    expected: refused('code_challenge_method must be S256'),
  },
  {
    name: 'no method means plain: accepted as plain where the policy allows it',
    params: { challenge: PLAIN_CHALLENGE, method: undefined },
    rules: PLAIN_ALLOWED,
    expected: { ok: true, challenge: { challenge: PLAIN_CHALLENGE, method: 'plain' } },
  },
  {
    name: 'a malformed S256 challenge (42 characters)',
    params: { challenge: S256_CHALLENGE.slice(1), method: 'S256' },
    rules: CONFIDENTIAL,
    expected: refused('malformed code_challenge'),
  },
  {
    name: 'a malformed plain challenge (a reserved character)',
    params: { challenge: `${PLAIN_CHALLENGE}/`, method: 'plain' },
    rules: PLAIN_ALLOWED,
    expected: refused('malformed code_challenge'),
  },
];

describe('PKCE in the authorization request (RFC 7636 §4.3, §4.4.1)', () => {
  describe('checkCodeChallenge', () => {
    for (const row of ROWS) {
      it(row.name, () => {
        assert.deepEqual(checkCodeChallenge(row.params, row.rules), row.expected);
      });
    }
  });

  describe('codeChallengeMethodOf', () => {
    it('defaults to plain when absent (§4.3)', () => assert.equal(codeChallengeMethodOf(undefined), 'plain'));
    it('names S256 and plain', () => {
      assert.equal(codeChallengeMethodOf('S256'), 'S256');
      assert.equal(codeChallengeMethodOf('plain'), 'plain');
    });
    it('names nothing else, case included', () => {
      for (const method of ['s256', 'PLAIN', 'S512', ''])
        assert.equal(codeChallengeMethodOf(method), undefined);
    });
  });

  describe('isAllowedCodeChallengeMethod', () => {
    it('takes S256 always', () => {
      assert.equal(isAllowedCodeChallengeMethod('S256', false), true);
      assert.equal(isAllowedCodeChallengeMethod('S256', true), true);
    });
    it('takes plain only where the policy allows it', () => {
      assert.equal(isAllowedCodeChallengeMethod('plain', false), false);
      assert.equal(isAllowedCodeChallengeMethod('plain', true), true);
    });
  });
});
