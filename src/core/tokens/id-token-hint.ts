import { decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from 'jose';
import type { Clock } from '../../shared/clock.js';
import { ID_TOKEN_TYP, type KeyRing } from '../keys/key-ring.js';

/** What an `id_token_hint` tells, once it is known to be an ID token this server issued. */
export interface IdTokenHint {
  /** The user the ID token was issued for (Core §2 `sub`). */
  sub: string;
  /** The clients it was issued to (Core §2 `aud`). */
  audience: string[];
  /** The browser session it came from, when it says. */
  sid: string | undefined;
}

export interface IdTokenHintOptions {
  keyRing: Pick<KeyRing, 'verificationKeys'>;
  clock: Clock;
  /** This server's issuer identifier: the hint's `iss` must be it. */
  issuer: string;
}

/**
 * Checks an `id_token_hint` (Core §3.1.2.1; RP-Initiated Logout 1.0 §2): an ID token signed by one of
 * this server's published keys, with this server as its issuer. An expired one is still a good hint
 * (both specifications say so: the hint names a past sign-in), so only `exp` is not held against it.
 * Undefined when it is anything else: malformed, signed by another key or with `alg: none`, an access
 * token, another issuer's.
 */
export async function verifyIdTokenHint(
  token: string,
  options: IdTokenHintOptions,
): Promise<IdTokenHint | undefined> {
  const keys = await options.keyRing.verificationKeys();
  let payload: JWTPayload;
  let typ: string | undefined;
  try {
    const verified = await jwtVerify(token, keys, {
      issuer: options.issuer,
      currentDate: new Date(options.clock.now() * 1000),
    });
    payload = verified.payload;
    typ = verified.protectedHeader.typ;
  } catch (error) {
    // jose checks the signature before any claim, and the issuer before `exp`: a JWTExpired carries
    // claims already authenticated and of the right issuer (checked again all the same).
    if (!(error instanceof errors.JWTExpired) || error.payload.iss !== options.issuer) return undefined;
    payload = error.payload;
    typ = decodeProtectedHeader(token).typ;
  }
  // Gatehouse's ID tokens say `typ: JWT`; its access tokens `at+jwt` (RFC 9068 §2.1): never one for the other.
  if (typ !== ID_TOKEN_TYP) return undefined;
  if (typeof payload.sub !== 'string' || payload.sub === '') return undefined;
  const audience =
    typeof payload.aud === 'string' ? [payload.aud] : Array.isArray(payload.aud) ? payload.aud : [];
  if (audience.length === 0) return undefined;
  const sid = (payload as { sid?: unknown }).sid;
  return { sub: payload.sub, audience, sid: typeof sid === 'string' ? sid : undefined };
}
