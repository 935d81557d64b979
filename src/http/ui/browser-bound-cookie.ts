import type { FastifyReply, FastifyRequest } from 'fastify';
import { sha256 } from '../../shared/crypto.js';

/**
 * A short-lived state of one browser that any process can read and no one can forge: a cookie signed
 * by @fastify/cookie (HMAC-SHA-256 under a key derived from the server secret), `__Host-` so other
 * hosts cannot plant it, carrying its own expiry (`e`) and the SHA-256 of the browser id it was made
 * in (`b`), so a copy taken elsewhere is worth nothing without that browser's cookie too. The pending
 * sign-in of a second factor (decision 34) and the pending link of an upstream account (decision 40)
 * are two of them.
 */
export interface BrowserBoundCookie {
  /** A `__Host-` name. */
  name: string;
  /** How long it lasts, in seconds. */
  seconds: number;
}

const OPTIONS = { path: '/', secure: true, httpOnly: true, sameSite: 'lax' } as const;

interface Binding {
  b: string;
  e: number;
}

/** Sets `cookie` to `payload` (compact keys other than `b` and `e`) for `browserId`, from `now` on. */
export function writeBrowserBoundCookie(
  reply: FastifyReply,
  cookie: BrowserBoundCookie,
  browserId: string,
  now: number,
  payload: object,
): void {
  const stored = { ...payload, b: sha256(browserId), e: now + cookie.seconds };
  reply.setCookie(cookie.name, Buffer.from(JSON.stringify(stored)).toString('base64url'), {
    ...OPTIONS,
    signed: true,
    maxAge: cookie.seconds,
  });
}

/**
 * The payload of `cookie` in this request when its signature holds, it has not expired at `now`, and
 * it was made in `browserId`; undefined otherwise (absent, forged, expired, another browser's). The
 * payload's shape is the writer's: the caller reads its fields as untrusted only in so far as the
 * signature proves this server wrote them.
 */
export function readBrowserBoundCookie<T extends object>(
  request: FastifyRequest,
  cookie: BrowserBoundCookie,
  browserId: string | undefined,
  now: number,
): T | undefined {
  const raw = request.cookies[cookie.name];
  if (raw === undefined || browserId === undefined) return undefined;
  const unsigned = request.unsignCookie(raw);
  if (!unsigned.valid || unsigned.value === null) return undefined;
  let stored: T & Binding;
  try {
    stored = JSON.parse(Buffer.from(unsigned.value, 'base64url').toString()) as T & Binding;
  } catch {
    return undefined;
  }
  if (typeof stored !== 'object' || stored === null) return undefined;
  if (!(stored.e >= now) || stored.b !== sha256(browserId)) return undefined;
  return stored;
}

export function clearBrowserBoundCookie(reply: FastifyReply, cookie: BrowserBoundCookie): void {
  reply.clearCookie(cookie.name, OPTIONS);
}
