import { createHmac } from 'node:crypto';

export const MAC_ALGORITHMS = ['hmac-sha-256', 'hmac-sha-1'] as const;
export type MacAlgorithm = (typeof MAC_ALGORITHMS)[number];

/**
 * The MAC key of a token, derived from the server's MAC secret and the token's id. Deriving it
 * (rather than storing it) keeps issuance write-free and lets any Gatehouse process recompute it.
 */
export function deriveMacKey(macSecret: Buffer, jti: string): string {
  return createHmac('sha256', macSecret).update(`mac-key:${jti}`).digest('base64url');
}
