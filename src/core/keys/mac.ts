import { createHmac } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import type { MacNonceStore } from '../ports.js';

export const MAC_ALGORITHMS = ['hmac-sha-256', 'hmac-sha-1'] as const;
export type MacAlgorithm = (typeof MAC_ALGORITHMS)[number];

/**
 * The algorithm of every MAC token Gatehouse issues (the token response's and introspection's
 * `mac_algorithm`). A request to /v1 is verified under it alone: the algorithm belongs to the token,
 * and a client choosing another (the weaker hmac-sha-1) is refused.
 */
export const ISSUED_MAC_ALGORITHM: MacAlgorithm = 'hmac-sha-256';

/**
 * The MAC key of a token, derived from the server's MAC secret and the token's id. Deriving it
 * (rather than storing it) keeps issuance write-free and lets any Gatehouse process recompute it.
 */
export function deriveMacKey(macSecret: Buffer, jti: string): string {
  return createHmac('sha256', macSecret).update(`mac-key:${jti}`).digest('base64url');
}

/**
 * What a verifier of MAC-signed requests needs from the engine (docs/decisions.md, decision 3): each
 * token's key, and a record of the nonces seen per token, shared by every process on the store.
 */
export interface MacTokens {
  /** How far a request's time may be from the server's clock, either way (seconds). */
  readonly windowSeconds: number;
  keyFor(jti: string): string;
  /** Records the nonce until `expiresAt`; false when the token already used it (a replay). */
  rememberNonce(jti: string, nonce: string, expiresAt: number): Promise<boolean>;
}

export function macTokens(
  macSecret: Buffer,
  windowSeconds: number,
  nonces: MacNonceStore,
  clock: Clock,
): MacTokens {
  return {
    windowSeconds,
    keyFor: (jti) => deriveMacKey(macSecret, jti),
    rememberNonce: (jti, nonce, expiresAt) => nonces.remember(jti, nonce, expiresAt, clock.now()),
  };
}
