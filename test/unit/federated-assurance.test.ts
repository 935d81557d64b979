import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SessionAuthentication } from '../../src/core/model.js';
import {
  ACR_MULTI_FACTOR,
  ACR_PHISHING_RESISTANT,
  ACR_SINGLE_FACTOR,
  assurance,
  type Assurance,
} from '../../src/core/sign-in/assurance.js';
import { federatedAuthentication } from '../../src/core/federation/federation.js';

const AT = 1_800_000_000;
const fed = (upstream?: SessionAuthentication['upstream']): SessionAuthentication => ({
  method: 'federated',
  at: AT,
  provider: 'corp',
  ...(upstream !== undefined ? { upstream } : {}),
});

interface Row {
  name: string;
  record: SessionAuthentication[];
  expected: Omit<Assurance, 'authTime'>;
}

/** Decision 40: what a federated sign-in is worth, with and without a trusted upstream's amr and acr. */
const ROWS: Row[] = [
  {
    name: 'federated alone: fed, one factor, single-factor',
    record: [fed()],
    expected: { amr: ['fed'], acr: ACR_SINGLE_FACTOR },
  },
  {
    name: 'a trusted upstream’s password: fed and pwd, still one factor',
    record: [fed({ amr: ['pwd'] })],
    expected: { amr: ['fed', 'pwd'], acr: ACR_SINGLE_FACTOR },
  },
  {
    name: 'a trusted upstream’s password and code: two kinds, mfa, multi-factor',
    record: [fed({ amr: ['pwd', 'otp'] })],
    expected: { amr: ['fed', 'pwd', 'otp', 'mfa'], acr: ACR_MULTI_FACTOR },
  },
  {
    name: 'a trusted upstream’s mfa alone counts as two kinds of factor',
    record: [fed({ amr: ['mfa'] })],
    expected: { amr: ['fed', 'mfa'], acr: ACR_MULTI_FACTOR },
  },
  {
    name: 'a code alone upstream replaces the federated sign-in’s own factor: not multi-factor',
    record: [fed({ amr: ['otp'] })],
    expected: { amr: ['fed', 'otp'], acr: ACR_SINGLE_FACTOR },
  },
  {
    name: 'values outside RFC 8176’s registry are dropped; registered ones without a factor are passed on',
    record: [fed({ amr: ['pwd', 'x-custom', 'rba', 'geo'] })],
    expected: { amr: ['fed', 'pwd', 'rba', 'geo'], acr: ACR_SINGLE_FACTOR },
  },
  {
    name: 'an upstream acr phr is phishing-resistant',
    record: [fed({ acr: 'phr' })],
    expected: { amr: ['fed'], acr: ACR_PHISHING_RESISTANT },
  },
  {
    name: 'an upstream acr phrh is phishing-resistant too',
    record: [fed({ amr: ['hwk', 'user'], acr: 'phrh' })],
    expected: { amr: ['fed', 'hwk', 'user', 'mfa'], acr: ACR_PHISHING_RESISTANT },
  },
  {
    name: 'an upstream Gatehouse’s multi-factor acr is two kinds of factor',
    record: [fed({ amr: ['pwd', 'otp', 'mfa'], acr: ACR_MULTI_FACTOR })],
    expected: { amr: ['fed', 'pwd', 'otp', 'mfa'], acr: ACR_MULTI_FACTOR },
  },
  {
    name: 'an upstream Gatehouse’s single-factor acr adds nothing',
    record: [fed({ amr: ['pwd'], acr: ACR_SINGLE_FACTOR })],
    expected: { amr: ['fed', 'pwd'], acr: ACR_SINGLE_FACTOR },
  },
  {
    name: 'an unknown upstream acr adds nothing',
    record: [fed({ acr: 'urn:corp:gold' })],
    expected: { amr: ['fed'], acr: ACR_SINGLE_FACTOR },
  },
  {
    name: 'federated, then this server’s app code: two kinds, multi-factor',
    record: [fed(), { method: 'totp', at: AT + 5 }],
    expected: { amr: ['fed', 'otp', 'mfa'], acr: ACR_MULTI_FACTOR },
  },
  {
    name: 'federated, then a passkey: phishing-resistant',
    record: [fed(), { method: 'passkey', at: AT + 5 }],
    expected: { amr: ['fed', 'hwk', 'user', 'mfa'], acr: ACR_PHISHING_RESISTANT },
  },
];

describe('assurance of a federated sign-in (decision 40)', () => {
  for (const row of ROWS) {
    it(row.name, () => {
      const { authTime, ...rest } = assurance(row.record);
      assert.deepEqual(rest, row.expected);
      assert.equal(authTime, Math.max(...row.record.map((entry) => entry.at)));
    });
  }

  it('what a session records: upstream amr and acr only for a trusted provider, cut to size', () => {
    const base = { method: 'federated', at: AT };
    const identity = { amr: ['pwd', 'otp'], acr: 'phr' };
    assert.deepEqual(federatedAuthentication(base, { id: 'p', trustUpstreamAssurance: false }, identity), {
      ...base,
      provider: 'p',
    });
    assert.deepEqual(federatedAuthentication(base, { id: 'p', trustUpstreamAssurance: true }, identity), {
      ...base,
      provider: 'p',
      upstream: { amr: ['pwd', 'otp'], acr: 'phr' },
    });
    assert.deepEqual(
      federatedAuthentication(base, { id: 'p', trustUpstreamAssurance: true }, { amr: null, acr: null }),
      { ...base, provider: 'p' },
    );
    const long = federatedAuthentication(
      base,
      { id: 'p', trustUpstreamAssurance: true },
      { amr: Array.from({ length: 50 }, () => 'x'.repeat(100)), acr: null },
    );
    assert.equal(long.upstream?.amr?.length, 20);
    assert.equal(long.upstream?.amr?.[0]?.length, 32);
  });
});
