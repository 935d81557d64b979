import { constants, verify, type KeyObject } from 'node:crypto';

/**
 * The asymmetric JWS algorithms (RFC 7518 §3, RFC 8037) the library verifies itself, with
 * synchronous node:crypto. The key-type constraints are jose's (its JWS table and JWKS matching), so a
 * key is chosen for a token exactly as jose would choose it.
 */
export interface JwsAlgorithm {
  /** The JWK key type the algorithm needs. */
  kty: 'EC' | 'RSA' | 'OKP';
  /** The JWK curve, for EC and OKP. */
  crv?: string;
  /** Checks the signature; false (never a throw) when it does not verify. */
  verify(signingInput: Buffer, signature: Buffer, key: KeyObject): boolean;
}

/** RSA keys below this size are refused (RFC 7518 §3.3 and §3.5; jose checks the same). */
export const MIN_RSA_BITS = 2048;

function ecdsa(crv: string, hash: string, signatureBytes: number): JwsAlgorithm {
  return {
    kty: 'EC',
    crv,
    verify(input, signature, key) {
      // JWS carries r || s (RFC 7518 §3.4): a fixed length, never DER.
      if (signature.length !== signatureBytes) return false;
      return verifySafely(() => verify(hash, input, { key, dsaEncoding: 'ieee-p1363' }, signature));
    },
  };
}

function rsa(hash: string, pssSaltBytes?: number): JwsAlgorithm {
  return {
    kty: 'RSA',
    verify(input, signature, key) {
      const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
      if (bits < MIN_RSA_BITS || signature.length !== Math.ceil(bits / 8)) return false;
      // PKCS #1 v1.5 is node's default padding for an RSA key: the key alone, no options to read.
      const options =
        pssSaltBytes === undefined
          ? key
          : { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: pssSaltBytes };
      return verifySafely(() => verify(hash, input, options, signature));
    },
  };
}

const ed25519: JwsAlgorithm = {
  kty: 'OKP',
  crv: 'Ed25519',
  verify(input, signature, key) {
    if (signature.length !== 64) return false;
    return verifySafely(() => verify(null, input, key, signature));
  },
};

function verifySafely(check: () => boolean): boolean {
  try {
    return check();
  } catch {
    // A key of the wrong kind or a malformed signature: not verified, whatever OpenSSL said.
    return false;
  }
}

const ALGORITHMS = new Map<string, JwsAlgorithm>([
  ['ES256', ecdsa('P-256', 'sha256', 64)],
  ['ES384', ecdsa('P-384', 'sha384', 96)],
  ['ES512', ecdsa('P-521', 'sha512', 132)],
  ['RS256', rsa('sha256')],
  ['RS384', rsa('sha384')],
  ['RS512', rsa('sha512')],
  // RFC 7518 §3.5: the salt is as long as the hash.
  ['PS256', rsa('sha256', 32)],
  ['PS384', rsa('sha384', 48)],
  ['PS512', rsa('sha512', 64)],
  // jose accepts both names for Ed25519 (RFC 8037's, and the fully-specified one of RFC 9864).
  ['EdDSA', ed25519],
  ['Ed25519', ed25519],
]);

/** The algorithm of that name, if the library verifies it. */
export function jwsAlgorithm(name: string): JwsAlgorithm | undefined {
  return ALGORITHMS.get(name);
}

export const SUPPORTED_ALGORITHMS: readonly string[] = [...ALGORITHMS.keys()];
