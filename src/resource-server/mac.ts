/**
 * MAC access authentication (seed §2, §5.5; design.md "MAC tokens"), framework-free: parsing the
 * Authorization header, the normalized request string of both drafts, the signature, the body hash
 * and the timestamp. Compatible with Python oauthlib's prepare_mac_header (draft=0 and draft=1) and
 * Debian's ruby-rack-oauth2.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { TokenError } from './rfc6750.js';

export type MacAlgorithmName = 'hmac-sha-256' | 'hmac-sha-1';

export interface MacCredentials {
  /** The access token. */
  id: string;
  nonce: string;
  mac: string;
  ext: string | undefined;
  bodyhash: string | undefined;
  /** draft-ietf-oauth-v2-http-mac-02 carries `ts`; -01 carries the age in the nonce instead. */
  ts: string | undefined;
}

export interface MacRequest {
  method: string;
  /** Path and query exactly as sent. */
  uri: string;
  host: string;
  port: string;
}

const PARAM = /^\s*([a-z]+)\s*=\s*"([^"\\]*)"\s*(?:,|$)/i;
const KNOWN = new Set(['id', 'ts', 'nonce', 'ext', 'mac', 'bodyhash']);
const macError = (description: string) => new TokenError('invalid_token', description, { scheme: 'mac' });
const malformed = (description: string) => new TokenError('invalid_request', description, { scheme: 'mac' });

/** Parses `MAC id="…", ts="…", nonce="…", mac="…"` (either draft); throws invalid_request when malformed. */
export function parseMacHeader(header: string): MacCredentials {
  const match = /^mac\s+(.*)$/is.exec(header.trim());
  if (!match) throw malformed('not a MAC authorization header');
  let rest = match[1] ?? '';
  const params = new Map<string, string>();
  while (rest.trim() !== '') {
    const param = PARAM.exec(rest);
    if (!param?.[1]) throw malformed('malformed MAC authorization header');
    const name = param[1].toLowerCase();
    if (!KNOWN.has(name)) throw malformed(`unknown MAC parameter ${name}`);
    if (params.has(name)) throw malformed(`MAC parameter repeated: ${name}`);
    params.set(name, param[2] ?? '');
    rest = rest.slice(param[0].length);
  }
  const id = params.get('id');
  const nonce = params.get('nonce');
  const mac = params.get('mac');
  if (!id || !nonce || !mac) throw malformed('the MAC header needs id, nonce and mac');
  if (nonce.length > 256) throw malformed('the MAC nonce is too long');
  const ts = params.get('ts');
  if (ts !== undefined && !/^\d{1,12}$/.test(ts))
    throw malformed('the MAC ts must be seconds since the epoch');
  if (ts === undefined && !/^\d{1,12}(\.\d{1,9})?:[^\s]+$/.test(nonce)) {
    throw malformed('without ts, the MAC nonce must be "<age>:<random>" (draft -01)');
  }
  return { id, nonce, mac, ext: params.get('ext'), bodyhash: params.get('bodyhash'), ts };
}

/** The lines that are signed, each ended by a newline (design.md). */
export function normalizedRequestString(credentials: MacCredentials, request: MacRequest): string {
  const lines =
    credentials.ts !== undefined
      ? [
          credentials.ts,
          credentials.nonce,
          request.method.toUpperCase(),
          request.uri,
          request.host.toLowerCase(),
          request.port,
          credentials.ext ?? '',
        ]
      : [
          credentials.nonce,
          request.method.toUpperCase(),
          request.uri,
          request.host.toLowerCase(),
          request.port,
          credentials.bodyhash ?? '',
          credentials.ext ?? '',
        ];
  return lines.map((line) => `${line}\n`).join('');
}

const DIGESTS: Record<MacAlgorithmName, { hash: string; bytes: number }> = {
  'hmac-sha-256': { hash: 'sha256', bytes: 32 },
  'hmac-sha-1': { hash: 'sha1', bytes: 20 },
};

/** Signs a request: what a client computes (used by tests and by anyone writing a MAC client). */
export function signMacRequest(
  credentials: Omit<MacCredentials, 'mac'>,
  request: MacRequest,
  macKey: string,
  algorithm: MacAlgorithmName = 'hmac-sha-256',
): string {
  const input = normalizedRequestString({ ...credentials, mac: '' }, request);
  // The key is used as the string the token response gave, as oauthlib and rack-oauth2 do.
  return createHmac(DIGESTS[algorithm].hash, Buffer.from(macKey, 'utf8')).update(input).digest('base64');
}

/**
 * Checks the signature; returns the algorithm the client used. The header does not name it, but the
 * two accepted algorithms give MACs of different lengths (32 and 20 bytes), so the length decides.
 */
export function verifyMacSignature(
  credentials: MacCredentials,
  request: MacRequest,
  macKey: string,
): MacAlgorithmName {
  const given = Buffer.from(credentials.mac, 'base64');
  const algorithm = (Object.keys(DIGESTS) as MacAlgorithmName[]).find(
    (name) => DIGESTS[name].bytes === given.length,
  );
  if (algorithm === undefined) throw macError('the MAC has the wrong length');
  const expected = Buffer.from(signMacRequest(credentials, request, macKey, algorithm), 'base64');
  if (!timingSafeEqual(given, expected)) throw macError('the MAC does not match the request');
  return algorithm;
}

/**
 * Draft -01's bodyhash, when sent: base64 of the body's hash under the MAC's own hash function.
 * When the body cannot be read raw it cannot be checked, and the request is refused rather than
 * trusted unchecked.
 */
export function verifyBodyHash(
  credentials: MacCredentials,
  algorithm: MacAlgorithmName,
  body: Buffer | undefined,
): void {
  if (credentials.bodyhash === undefined) return;
  if (body === undefined) throw macError('the body hash cannot be checked here');
  const expected = createHash(DIGESTS[algorithm].hash).update(body).digest();
  const given = Buffer.from(credentials.bodyhash, 'base64');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw macError('the body hash does not match the body');
  }
}

/** When the client says it signed: `ts` (draft -02), or issue time plus the age in the nonce (-01). */
export function macRequestTime(credentials: MacCredentials, issuedAt: number): number {
  if (credentials.ts !== undefined) return Number(credentials.ts);
  const age = Number(credentials.nonce.split(':', 1)[0]);
  return Math.floor(issuedAt + age);
}

/** Refuses a request time further than `windowSeconds` from now, either way. */
export function checkMacFreshness(requestTime: number, now: number, windowSeconds: number): void {
  if (!Number.isFinite(requestTime) || Math.abs(now - requestTime) > windowSeconds) {
    throw macError('the MAC timestamp is outside the accepted window');
  }
}

/** A store of seen nonces: `remember` is true the first time (jti, nonce) is seen, false after. */
export interface NonceStore {
  remember(tokenId: string, nonce: string, expiresAt: number, now: number): Promise<boolean>;
}

/** Default for one process: an in-memory set, pruned as entries expire. Use a shared store for several. */
export class MemoryNonceStore implements NonceStore {
  private readonly seen = new Map<string, number>();

  remember(tokenId: string, nonce: string, expiresAt: number, now: number): Promise<boolean> {
    if (this.seen.size > 10_000) {
      for (const [key, expiry] of this.seen) if (expiry <= now) this.seen.delete(key);
    }
    const key = `${tokenId}\n${nonce}`;
    const expiry = this.seen.get(key);
    if (expiry !== undefined && expiry > now) return Promise.resolve(false);
    this.seen.set(key, expiresAt);
    return Promise.resolve(true);
  }
}

export const macReplay = (): TokenError => macError('the MAC nonce was already used');
