import { createHmac } from 'node:crypto';
import { safeEqual } from '../../shared/crypto.js';

/**
 * Anti-CSRF tokens tied to the browser: HMAC-SHA-256 of the browser id (the random cookie value) under
 * a key derived from the server secret. A forged form cannot carry it, because a page on another
 * origin can read neither the cookie nor our pages; nothing needs to be stored.
 */
export class CsrfTokens {
  constructor(private readonly key: Buffer) {}

  issue(browserId: string): string {
    return this.bound('csrf', browserId);
  }

  /**
   * A MAC of `value` for one purpose (each purpose its own prefix, so no token of one passes for
   * another): what only this server can make, tied to what it names.
   */
  bound(purpose: string, value: string): string {
    return createHmac('sha256', this.key).update(`${purpose}:${value}`).digest('base64url');
  }

  verifyBound(purpose: string, value: string, token: unknown): boolean {
    if (typeof token !== 'string' || token === '') return false;
    return safeEqual(this.bound(purpose, value), token);
  }

  verify(browserId: string | undefined, token: unknown): boolean {
    if (browserId === undefined || typeof token !== 'string' || token === '') return false;
    return safeEqual(this.issue(browserId), token);
  }
}
