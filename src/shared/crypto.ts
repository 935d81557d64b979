import { createHash, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

/** A random, URL-safe token of `bytes` bytes of entropy, with a greppable prefix (`rt_`, `ac_`, …). */
export function randomToken(prefix: string, bytes = 32): string {
  return prefix + randomBytes(bytes).toString('base64url');
}

/** SHA-256 as base64url: how codes, refresh tokens and client secrets are stored. */
export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}

/** Constant-time string comparison; unequal lengths compare unequal without leaking where they differ. */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  if (left.length !== right.length) {
    // Still spend a comparison so that length mismatches cost about the same as content mismatches.
    timingSafeEqual(left, left);
    return false;
  }
  return timingSafeEqual(left, right);
}

/** A purpose-bound subkey of the server secret (RFC 5869), so one secret never serves two uses. */
export function deriveKey(secret: Buffer, purpose: string, length = 32): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), `gatehouse:${purpose}`, length));
}
