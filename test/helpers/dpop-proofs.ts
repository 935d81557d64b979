import { createHash, randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';

/**
 * DPoP proofs (RFC 9449 §4.2) made by hand with jose, so that a test can get every member wrong on
 * purpose. The end-to-end suites make their valid proofs with the `dpop` package instead, an
 * implementation independent of this one.
 */

export type ProofAlgorithm = 'ES256' | 'ES384' | 'RS256' | 'PS256' | 'EdDSA';

export interface ProofKey {
  alg: ProofAlgorithm;
  privateKey: CryptoKey;
  publicJwk: JWK;
  /** RFC 7638 SHA-256 thumbprint, as a token's cnf.jkt holds it. */
  jkt: string;
}

export async function proofKey(alg: ProofAlgorithm = 'ES256'): Promise<ProofKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  return { alg, privateKey, publicJwk, jkt: await calculateJwkThumbprint(publicJwk, 'sha256') };
}

/** The `ath` of a token: base64url(SHA-256(token)), computed here without src/shared/crypto.ts. */
export function ath(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

export interface ProofOptions {
  htm?: string;
  htu: string;
  /** Epoch seconds. */
  iat: number;
  jti?: string;
  nonce?: string;
  /** A resource request's token: the proof carries its `ath`. */
  accessToken?: string;
  /** Header members over the proof's own (`undefined` removes one). */
  header?: Record<string, unknown>;
  /** Claims over the proof's own (`undefined` removes one). */
  claims?: Record<string, unknown>;
}

const withoutUndefined = (record: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined));

/** A proof signed with `key`; header and claims may be overridden to make it wrong. */
export async function makeProof(key: ProofKey, options: ProofOptions): Promise<string> {
  const header = withoutUndefined({
    typ: 'dpop+jwt',
    alg: key.alg,
    jwk: key.publicJwk,
    ...options.header,
  });
  const claims = withoutUndefined({
    jti: options.jti ?? randomUUID(),
    htm: options.htm ?? 'POST',
    htu: options.htu,
    iat: options.iat,
    ...(options.nonce === undefined ? {} : { nonce: options.nonce }),
    ...(options.accessToken === undefined ? {} : { ath: ath(options.accessToken) }),
    ...options.claims,
  });
  return new SignJWT(claims)
    .setProtectedHeader(header as Parameters<SignJWT['setProtectedHeader']>[0])
    .sign(key.privateKey);
}

/** An unsigned proof (`alg: none`), with a stand-in signature part. */
export function unsignedProof(key: ProofKey, options: ProofOptions): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const header = { typ: 'dpop+jwt', alg: 'none', jwk: key.publicJwk };
  const claims = { jti: randomUUID(), htm: 'POST', htu: options.htu, iat: options.iat };
  return `${encode(header)}.${encode(claims)}.AAAA`;
}
