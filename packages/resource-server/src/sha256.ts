import { hash } from 'node:crypto';

/**
 * SHA-256 of a string's UTF-8 bytes, as base64url, in one call: crypto.hash (Node >= 20.12, which
 * `engines` requires) makes no Hash object per value, as createHash does. A DPoP request hashes its
 * access token each time (RFC 9449 §4.3 item 11).
 */
export function sha256Base64url(value: string): string {
  return hash('sha256', value, 'base64url');
}
