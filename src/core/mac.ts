import { createHmac } from 'node:crypto';

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
