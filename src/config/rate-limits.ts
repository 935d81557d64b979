import { integer, oneOf } from './value-types.js';

/** Endpoints with request rate limits (docs/limits.md). */
export const RATE_LIMITED_ENDPOINTS = [
  'token',
  'authorize',
  'introspect',
  'signIn',
  'revoke',
  'userinfo',
  'logout',
] as const;
export type RateLimitedEndpoint = (typeof RATE_LIMITED_ENDPOINTS)[number];
/** Requests allowed per window; 0 means no limit of that kind. */
export interface RateLimit {
  perAddress: number;
  perClient: number;
}

/** Defaults per 60-second window: far above what one honest address or client sends (docs/limits.md). */
export const DEFAULT_RATE_LIMITS: Readonly<Record<RateLimitedEndpoint, RateLimit>> = {
  token: { perAddress: 600, perClient: 3000 },
  authorize: { perAddress: 300, perClient: 3000 },
  introspect: { perAddress: 3000, perClient: 12000 },
  signIn: { perAddress: 60, perClient: 0 },
  revoke: { perAddress: 600, perClient: 3000 },
  // An access token is presented, not a client's credentials: counted per address only. A client calls
  // /userinfo about once per token it gets, so the token endpoint's allowance per address.
  userinfo: { perAddress: 600, perClient: 0 },
  // A browser page, like /authorize: each sign-out checks an id_token_hint's signature.
  logout: { perAddress: 300, perClient: 0 },
};

const ENV_NAMES: Record<RateLimitedEndpoint, string> = {
  token: 'TOKEN',
  authorize: 'AUTHORIZE',
  introspect: 'INTROSPECT',
  signIn: 'SIGN_IN',
  revoke: 'REVOKE',
  userinfo: 'USERINFO',
  logout: 'LOGOUT',
};

/** GATEHOUSE_RATE_LIMITS=off turns every request rate limit off (benchmarks, or limits kept in a proxy). */
export const RATE_LIMITS_SWITCH = { name: 'GATEHOUSE_RATE_LIMITS', type: oneOf(['on', 'off']) } as const;

const MAX_COUNT = 1_000_000_000;
export const REQUESTS_PER_WINDOW = integer(0, MAX_COUNT, 'requests per window');

/** The two variables of each endpoint's limits. */
export function rateLimitVariables(endpoint: RateLimitedEndpoint): Record<keyof RateLimit, string> {
  const name = `GATEHOUSE_RATE_LIMIT_${ENV_NAMES[endpoint]}`;
  return { perAddress: `${name}_PER_ADDRESS`, perClient: `${name}_PER_CLIENT` };
}

/** Every variable the rate limits are read from: the switch first. */
export const RATE_LIMIT_VARIABLES: readonly string[] = [
  RATE_LIMITS_SWITCH.name,
  ...RATE_LIMITED_ENDPOINTS.flatMap((endpoint) => Object.values(rateLimitVariables(endpoint))),
];
