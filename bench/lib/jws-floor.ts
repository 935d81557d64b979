import { hash, verify, type KeyObject } from 'node:crypto';

/**
 * The floors the resource-server library is measured against (issue 17 point 4), shared by the rs-jwt
 * and rs-dpop loops and `rs-validation-cost`:
 *
 * - the bare check: the signature alone, with synchronous node:crypto, on parts decoded once before the
 *   rounds (what the issue names "the bare signature check");
 * - the decoded check: the least any JWT validator does for each token it is handed, the bare check on
 *   the signing input and signature taken from the token on every call, with its claims decoded and
 *   parsed (no header, key, claim or syntax checks). What the library costs beyond it is its own.
 */

/** The JWS algorithms the loops measure. */
export type FloorAlgorithm = 'ES256' | 'RS256' | 'EdDSA';

/** A signature check with synchronous node:crypto: r || s for ECDSA (RFC 7518 §3.4), PKCS #1 v1.5 for RSA. */
export function checkSignature(
  alg: FloorAlgorithm,
  input: Buffer,
  signature: Buffer,
  key: KeyObject,
): boolean {
  switch (alg) {
    case 'ES256':
      return verify('sha256', input, { key, dsaEncoding: 'ieee-p1363' }, signature);
    case 'RS256':
      return verify('sha256', input, key, signature);
    case 'EdDSA':
      return verify(null, input, key, signature);
  }
}

/** The bare check of one compact JWS, its parts decoded once, here. */
export function bareCheck(alg: FloorAlgorithm, jws: string, key: KeyObject): () => boolean {
  const dot = jws.lastIndexOf('.');
  const input = Buffer.from(jws.slice(0, dot));
  const signature = Buffer.from(jws.slice(dot + 1), 'base64url');
  return () => checkSignature(alg, input, signature, key);
}

/** The decoded check: the JWS given on each call is taken apart, its claims parsed, then the bare check. */
export function decodedCheck(alg: FloorAlgorithm, key: KeyObject): (jws: string) => boolean {
  return (jws) => {
    const first = jws.indexOf('.');
    const dot = jws.lastIndexOf('.');
    const input = Buffer.from(jws.slice(0, dot), 'latin1');
    const signature = Buffer.from(jws.slice(dot + 1), 'base64url');
    const claims: unknown = JSON.parse(Buffer.from(jws.slice(first + 1, dot), 'base64url').toString('utf8'));
    if (typeof claims !== 'object' || claims === null) return false;
    return checkSignature(alg, input, signature, key);
  };
}

/**
 * The decoded floor of a DPoP request (RFC 9449 §7): the token and its proof each through the decoded
 * check, and the proof's `ath` compared with the token's hash (§4.3 item 11), which no validator skips.
 */
export function decodedDpopCheck(
  token: string,
  tokenCheck: (jws: string) => boolean,
  proofCheck: (jws: string) => boolean,
  ath: string,
): (proof: string) => boolean {
  return (proof) => tokenCheck(token) && proofCheck(proof) && hash('sha256', token, 'base64url') === ath;
}
