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
    return createHmac('sha256', this.key).update(`csrf:${browserId}`).digest('base64url');
  }

  verify(browserId: string | undefined, token: unknown): boolean {
    if (browserId === undefined || typeof token !== 'string' || token === '') return false;
    return safeEqual(this.issue(browserId), token);
  }
}
