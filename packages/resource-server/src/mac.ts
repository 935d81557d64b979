/**
 * MAC access authentication (docs/decisions.md, decision 3), framework-free: parsing the
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

/** The lines that are signed, each ended by a newline (docs/api.md, "MAC tokens"). */
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
 * Checks the signature under the token's own algorithm (from the authorization server, never from
 * the request): a MAC made with another hash function is refused, so a client cannot pick the weaker
 * one (RFC 8725 §3.1 applies the same rule to JWTs).
 */
export function verifyMacSignature(
  credentials: MacCredentials,
  request: MacRequest,
  macKey: string,
  algorithm: MacAlgorithmName,
): void {
  const given = Buffer.from(credentials.mac, 'base64');
  const expected = Buffer.from(signMacRequest(credentials, request, macKey, algorithm), 'base64');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw macError('the MAC does not match the request');
  }
}

/** The algorithm an authorization server named for a token; undefined when it is not one of ours. */
export function macAlgorithmNamed(name: unknown): MacAlgorithmName | undefined {
  return typeof name === 'string' && Object.hasOwn(DIGESTS, name) ? (name as MacAlgorithmName) : undefined;
}

/**
 * Draft -01's bodyhash, when sent: base64 of the body's hash under the token's hash function. A
 * request without a body has the empty body, whose hash is as well defined as any other (a GET may
 * send one). `body` is undefined only when a body was sent but not kept raw: then it cannot be
 * checked, and the request is refused rather than trusted unchecked.
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

/**
 * Host and port as MAC signs them, from the server's public origin (`https://api.example:8443`): the
 * host and port the client meant to address. Never from the request's Host header, which the sender
 * chooses: host and port are signed so that a request made for one server does not verify at
 * another, and a Host header copied from the signed request would undo exactly that.
 */
export function macOrigin(origin: string): { host: string; port: string } {
  const url = new URL(origin);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new Error(`a MAC origin must be an http(s) URL: ${origin}`);
  }
  return { host: url.hostname.toLowerCase(), port: url.port || (url.protocol === 'https:' ? '443' : '80') };
}

/** Whether an HTTP request carries a body (RFC 9112 §6.3: Content-Length or Transfer-Encoding). */
export function requestHasBody(headers: Record<string, string | string[] | undefined>): boolean {
  const length = headers['content-length'];
  return (
    headers['transfer-encoding'] !== undefined || (length !== undefined && String(length).trim() !== '0')
  );
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

/** The memory nonce store holds its maximum: the request cannot be checked for replay, so it is refused. */
export class NonceStoreFullError extends Error {
  constructor(readonly maxEntries: number) {
    super(`the MAC nonce store holds its maximum of ${maxEntries} nonces`);
    this.name = 'NonceStoreFullError';
  }
}

export interface MemoryNonceStoreOptions {
  /**
   * The most nonces kept at once (default 100,000, some 20 MB). Each is kept until its timestamp
   * window has passed. When full, new nonces are refused (the adapters answer 503) rather than old
   * ones dropped: dropping a nonce still inside its window would let that request be replayed.
   */
  maxEntries?: number;
}

/**
 * Default for one process: seen nonces in memory, each kept until its window has passed. Expiry is
 * O(1) amortised: nonces are filed in buckets by the second they expire, and each call removes the
 * buckets whose second has passed since the last call. Use a shared store for several processes.
 */
export class MemoryNonceStore implements NonceStore {
  private readonly seen = new Map<string, number>();
  private readonly buckets = new Map<number, string[]>();
  /** Every bucket up to and including this second has been removed. */
  private swept = -Infinity;
  readonly maxEntries: number;

  constructor(options: MemoryNonceStoreOptions = {}) {
    this.maxEntries = options.maxEntries ?? 100_000;
    if (!Number.isInteger(this.maxEntries) || this.maxEntries < 1) {
      throw new Error('maxEntries must be a positive whole number');
    }
  }

  /** How many nonces are held now. */
  get size(): number {
    return this.seen.size;
  }

  remember(tokenId: string, nonce: string, expiresAt: number, now: number): Promise<boolean> {
    try {
      return Promise.resolve(this.rememberNow(tokenId, nonce, expiresAt, now));
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  /** `remember`, answered at once: true the first time, false for a replay; throws NonceStoreFullError. */
  rememberNow(tokenId: string, nonce: string, expiresAt: number, now: number): boolean {
    this.expire(now);
    const key = `${tokenId}\n${nonce}`;
    // Whatever is still here has not expired: expire() removed the rest.
    if (this.seen.has(key)) return false;
    if (this.seen.size >= this.maxEntries) throw new NonceStoreFullError(this.maxEntries);
    // Never filed in a bucket already swept, where it would stay for ever.
    const second = Math.max(Math.ceil(expiresAt), this.swept + 1);
    this.seen.set(key, second);
    const bucket = this.buckets.get(second);
    if (bucket === undefined) this.buckets.set(second, [key]);
    else bucket.push(key);
    return true;
  }

  private expire(now: number): void {
    const until = Math.floor(now);
    if (until <= this.swept) return;
    if (until - this.swept > this.buckets.size) {
      // A long gap (or the first call): fewer buckets than seconds to step through.
      for (const second of [...this.buckets.keys()]) if (second <= until) this.drop(second);
    } else {
      for (let second = this.swept + 1; second <= until; second++) this.drop(second);
    }
    this.swept = until;
  }

  private drop(second: number): void {
    const keys = this.buckets.get(second);
    if (keys === undefined) return;
    this.buckets.delete(second);
    for (const key of keys) if (this.seen.get(key) === second) this.seen.delete(key);
  }
}

export const macReplay = (): TokenError => macError('the MAC nonce was already used');
