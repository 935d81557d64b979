import { createHash, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';

/**
 * DPoP proofs (RFC 9449 §4.2) made synchronously with node:crypto, so that a load driver can put a
 * fresh one on every request (a proof is accepted once, §11.1) without an await per request. ES256,
 * the algorithm clients most often use.
 */
export interface SyncProofKey {
  privateKey: KeyObject;
  /** The public JWK as the proof header carries it. */
  jwk: { kty: string; crv: string; x: string; y: string };
  /** RFC 7638 SHA-256 thumbprint: what the issued token's cnf.jkt must be. */
  jkt: string;
}

export function syncProofKey(): SyncProofKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const { kty, crv, x, y } = publicKey.export({ format: 'jwk' }) as Record<string, string>;
  const jwk = { kty: kty ?? '', crv: crv ?? '', x: x ?? '', y: y ?? '' };
  // RFC 7638 §3.2: the required members, lexicographically, no whitespace.
  const canonical = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y });
  return { privateKey, jwk, jkt: createHash('sha256').update(canonical).digest('base64url') };
}

const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A proof for one request: `htu` the absolute URL, `accessToken` for a resource request's `ath`. */
export function syncProof(key: SyncProofKey, htm: string, htu: string, accessToken?: string): string {
  const header = encode({ typ: 'dpop+jwt', alg: 'ES256', jwk: key.jwk });
  const payload = encode({
    jti: randomUUID(),
    htm,
    htu,
    iat: Math.floor(Date.now() / 1000),
    ...(accessToken === undefined
      ? {}
      : { ath: createHash('sha256').update(accessToken).digest('base64url') }),
  });
  const input = `${header}.${payload}`;
  const signature = sign('sha256', Buffer.from(input), { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}
