import { constants, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';

/**
 * What the differential tests of the library's synchronous JWS checks (the JWT verifier and the DPoP
 * proof fast path) share: key pairs, a signer for every JWS algorithm they use, and the mutations of an
 * encoded token that no JSON.stringify of a header or claims set can produce.
 */

export type KeyPair = { publicKey: KeyObject; privateKey: KeyObject };
export type Claims = Record<string, unknown>;
export type Header = Record<string, unknown>;

export const pairs = {
  ec: (namedCurve: string): KeyPair => generateKeyPairSync('ec', { namedCurve }),
  rsa: (modulusLength: number): KeyPair =>
    generateKeyPairSync('rsa', { modulusLength, publicExponent: 0x10001 }),
  ed25519: (): KeyPair => generateKeyPairSync('ed25519'),
};

/** The JWS signature (RFC 7518 §3) of `input` by `alg`, made with node:crypto. */
export function signWith(alg: string, key: KeyObject, input: Buffer): Buffer {
  const pss = (hash: string, saltLength: number) =>
    sign(hash, input, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength });
  switch (alg) {
    case 'ES256':
      return sign('sha256', input, { key, dsaEncoding: 'ieee-p1363' });
    case 'ES384':
      return sign('sha384', input, { key, dsaEncoding: 'ieee-p1363' });
    case 'ES512':
      return sign('sha512', input, { key, dsaEncoding: 'ieee-p1363' });
    case 'RS256':
      return sign('sha256', input, key);
    case 'RS384':
      return sign('sha384', input, key);
    case 'RS512':
      return sign('sha512', input, key);
    case 'PS256':
      return pss('sha256', 32);
    case 'PS384':
      return pss('sha384', 48);
    case 'EdDSA':
    case 'Ed25519':
      return sign(null, input, key);
    default:
      throw new Error(`no signer for ${alg}`);
  }
}

export const b64 = (bytes: Buffer | string) => Buffer.from(bytes).toString('base64url');

/** A base64url value with its last byte's lowest bit flipped. */
export const flipLastBit = (value: string) => {
  const bytes = Buffer.from(value, 'base64url');
  bytes[bytes.length - 1]! ^= 0x01;
  return b64(bytes);
};

/**
 * Encoded claims sets JSON.stringify cannot produce: not an object, not JSON or not UTF-8, a number
 * out of range in `numericClaim`, a `__proto__` member, and `stringClaim` twice (the first one `evil`).
 */
export function rawPayloadMutations(
  numericClaim: string,
  stringClaim: string,
  evil: string,
): Record<string, (json: string) => Buffer> {
  return {
    'payload array': (json) => Buffer.from(`[${json}]`),
    'payload null': () => Buffer.from('null'),
    'payload not JSON': (json) => Buffer.from(json.slice(0, -1)),
    'payload invalid UTF-8': (json) =>
      Buffer.concat([
        Buffer.from(json.slice(0, -1)),
        Buffer.from([0x2c, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]),
      ]),
    'payload with BOM': (json) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(json)]),
    [`payload ${numericClaim} 1e400`]: (json) =>
      Buffer.from(json.replace(new RegExp(`"${numericClaim}":[^,}]+`), `"${numericClaim}":1e400`)),
    'payload __proto__ claim': (json) => Buffer.from(`{"__proto__":{"admin":true},${json.slice(1)}`),
    [`payload duplicate ${stringClaim}`]: (json) =>
      Buffer.from(`{"${stringClaim}":${JSON.stringify(evil)},${json.slice(1)}`),
  };
}

/** The part's (0 header, 1 payload, 2 signature) last character with unused bits set, if it has any. */
export function nonCanonicalTail(token: string, part: number): string {
  const parts = token.split('.');
  const value = parts[part] ?? '';
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const unused = value.length % 4 === 2 ? 0b1111 : value.length % 4 === 3 ? 0b11 : 0;
  if (unused === 0) return token;
  const index = alphabet.indexOf(value.at(-1) ?? 'A');
  parts[part] = value.slice(0, -1) + alphabet[index | unused];
  return parts.join('.');
}

/** Mutations of a compact JWS that both differential tests apply. */
export const TOKEN_MUTATIONS: Record<string, (token: string) => string> = {
  'flip a signature bit': (t) => {
    const [h, p, s = ''] = t.split('.');
    const sig = Buffer.from(s, 'base64url');
    if (sig.length > 0) sig[Math.floor(sig.length / 2)]! ^= 0x01;
    return `${h}.${p}.${b64(sig)}`;
  },
  'flip a payload character': (t) => {
    const [h, p = '', s] = t.split('.');
    const i = Math.floor(p.length / 3);
    return `${h}.${p.slice(0, i)}${p[i] === 'A' ? 'B' : 'A'}${p.slice(i + 1)}.${s}`;
  },
  'pad the signature': (t) => `${t}==`,
  'non-canonical signature tail': (t) => nonCanonicalTail(t, 2),
  'non-canonical payload tail': (t) => nonCanonicalTail(t, 1),
  'extra segment': (t) => `${t}.e30`,
  'two parts': (t) => t.slice(0, t.lastIndexOf('.')),
  'empty signature': (t) => t.slice(0, t.lastIndexOf('.') + 1),
  'truncate the signature': (t) => t.slice(0, -2),
};
