/**
 * Gatehouse counts every /token request against per-address and per-client limits in the store
 * (docs/limits.md). One load generator is one address, so the default limits would refuse the benchmark after a few
 * hundred requests. Two settings are measured instead:
 *   counted: limits raised out of reach, so every request still pays for its counter (the shipped path);
 *   off:     GATEHOUSE_RATE_LIMITS=off, the token endpoint alone (what the throughput target was set for).
 */
const UNREACHABLE = '1000000000';

export const RATE_LIMITS_COUNTED: NodeJS.ProcessEnv = {
  GATEHOUSE_RATE_LIMITS: 'on',
  GATEHOUSE_RATE_LIMIT_TOKEN_PER_ADDRESS: UNREACHABLE,
  GATEHOUSE_RATE_LIMIT_TOKEN_PER_CLIENT: UNREACHABLE,
  // The code flow (GET /authorize) and its one sign-in per connection come from the same address.
  GATEHOUSE_RATE_LIMIT_AUTHORIZE_PER_ADDRESS: UNREACHABLE,
  GATEHOUSE_RATE_LIMIT_AUTHORIZE_PER_CLIENT: UNREACHABLE,
  GATEHOUSE_RATE_LIMIT_SIGN_IN_PER_ADDRESS: UNREACHABLE,
  // The introspect scenario: one resource server (client) from one address.
  GATEHOUSE_RATE_LIMIT_INTROSPECT_PER_ADDRESS: UNREACHABLE,
  GATEHOUSE_RATE_LIMIT_INTROSPECT_PER_CLIENT: UNREACHABLE,
};

export const RATE_LIMITS_OFF: NodeJS.ProcessEnv = { GATEHOUSE_RATE_LIMITS: 'off' };
