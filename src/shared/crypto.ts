import * as nodeCrypto from 'node:crypto';
import { createHash, hkdfSync, randomBytes, randomFillSync, timingSafeEqual } from 'node:crypto';

// Each call to the CSPRNG has a fixed cost far above that of its bytes, so tokens are cut from a
// pool filled 4 KiB at a time (as Node does for randomUUID). Bytes are handed out once and never reused.
const POOL_SIZE = 4096;
const pool = Buffer.allocUnsafe(POOL_SIZE);
let poolOffset = POOL_SIZE;

function randomBytesFromPool(bytes: number): Buffer {
  if (bytes > POOL_SIZE) return randomBytes(bytes);
  if (poolOffset + bytes > POOL_SIZE) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const slice = pool.subarray(poolOffset, poolOffset + bytes);
  poolOffset += bytes;
  return slice;
}

/** A random, URL-safe token of `bytes` bytes of entropy, with a greppable prefix (`rt_`, `ac_`, …). */
export function randomToken(prefix: string, bytes = 32): string {
  return prefix + randomBytesFromPool(bytes).toString('base64url');
}

// crypto.hash (Node >= 20.12) hashes in one call, without a Hash object per value.
const oneShotHash = (
  nodeCrypto as { hash?: (algorithm: string, data: string, encoding: 'base64url') => string }
).hash;

/** SHA-256 as base64url: how codes, refresh tokens and client secrets are stored. */
export function sha256(value: string): string {
  if (oneShotHash !== undefined) return oneShotHash('sha256', value, 'base64url');
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
