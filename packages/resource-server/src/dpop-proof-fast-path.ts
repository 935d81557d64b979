import { createPublicKey, type KeyObject } from 'node:crypto';
import { decodeCanonical, parseObject } from './compact-jws.js';
import { jwsAlgorithm, type JwsAlgorithm } from './jws-algorithms.js';
import { Lru } from './lru.js';
import { sha256Base64url } from './sha256.js';

/**
 * The synchronous path of the DPoP proof check (dpop-proof.ts): for a proof of the shape clients send
 * (RFC 9449 §4.2: a header of exactly `typ`, `alg` and a public `jwk` holding only its key's members,
 * every part canonical base64url, the required claims of the expected types, no `exp` or `nbf`), the
 * signature is checked with node:crypto against a key imported once per JWK thumbprint (RFC 7638).
 * It accepts, or says nothing: whatever it does not accept goes to jose's jwtVerify, which decides
 * and words the refusal. A differential test holds it to jose: it never accepts what jose refuses,
 * and its claims and thumbprint are jose's.
 */

/** A proof whose signature verified, with jwtVerify's claim checks for a proof passed. */
export interface FastProof {
  payload: Record<string, unknown>;
  /** The RFC 7638 SHA-256 thumbprint of the proof's key. */
  jkt: string;
}

/** A proof header accepted: the same for every proof a client makes with one key. */
interface AcceptedHeader {
  algorithm: JwsAlgorithm;
  jkt: string;
  key: KeyObject;
}

export class DpopProofFastPath {
  /** Encoded protected header → the key it names, imported, and its thumbprint. */
  private readonly headers: Lru<string, AcceptedHeader>;
  /** Thumbprint → imported key: several spellings of one key's header share one import. */
  private readonly keys: Lru<string, KeyObject>;

  constructor(
    private readonly algorithms: readonly string[],
    cacheSize: number,
  ) {
    this.headers = new Lru(cacheSize);
    this.keys = new Lru(cacheSize);
  }

  /** How many proof keys are held imported. */
  get cachedKeys(): number {
    return this.keys.size;
  }

  /** The verified proof, or undefined: not accepted here (jose decides). */
  check(proof: string): FastProof | undefined {
    const firstDot = proof.indexOf('.');
    const secondDot = proof.indexOf('.', firstDot + 1);
    if (firstDot < 0 || secondDot < 0 || proof.indexOf('.', secondDot + 1) >= 0) return undefined;
    const header = this.header(proof.slice(0, firstDot));
    if (header === undefined) return undefined;
    const payload = parseObject(proof.slice(firstDot + 1, secondDot));
    if (payload === undefined) return undefined;
    // jwtVerify's checks for a proof's options: the required claims present, iat a number. Their
    // types beyond that are the caller's checks; exp and nbf, rare in proofs, are left to jose.
    const { jti, htm, htu, iat } = payload;
    if (typeof jti !== 'string' || typeof htm !== 'string' || typeof htu !== 'string') return undefined;
    if (typeof iat !== 'number' || !Number.isFinite(iat)) return undefined;
    if (Object.hasOwn(payload, 'exp') || Object.hasOwn(payload, 'nbf')) return undefined;
    const signature = decodeCanonical(proof.slice(secondDot + 1));
    if (signature === undefined) return undefined;
    // The signing input is ASCII: both parts were canonical base64url.
    const signingInput = Buffer.from(proof.slice(0, secondDot), 'latin1');
    if (!header.algorithm.verify(signingInput, signature, header.key)) return undefined;
    return { payload, jkt: header.jkt };
  }

  private header(encoded: string): AcceptedHeader | undefined {
    const cached = this.headers.get(encoded);
    if (cached !== undefined) return cached;
    const accepted = this.acceptHeader(encoded);
    if (accepted !== undefined) this.headers.set(encoded, accepted);
    return accepted;
  }

  /** §4.3 items 4-7 for a header of exactly typ, alg and a public jwk of the algorithm's key type. */
  private acceptHeader(encoded: string): AcceptedHeader | undefined {
    const header = parseObject(encoded);
    if (header === undefined || !hasOnly(header, HEADER_MEMBERS)) return undefined;
    const { typ, alg, jwk } = header;
    if (typ !== 'dpop+jwt' && typ !== 'application/dpop+jwt') return undefined;
    if (typeof alg !== 'string' || !this.algorithms.includes(alg)) return undefined;
    const algorithm = jwsAlgorithm(alg);
    if (algorithm === undefined) return undefined;
    const members = publicKeyMembers(jwk, algorithm);
    if (members === undefined) return undefined;
    // RFC 7638 §3: the required members in lexicographic order, no whitespace, hashed. They are known
    // names and base64url values, which JSON.stringify writes without escapes.
    const jkt = sha256Base64url(JSON.stringify(members));
    let key = this.keys.get(jkt);
    if (key === undefined) {
      key = importPublicKey(members, algorithm);
      if (key === undefined) return undefined;
      this.keys.set(jkt, key);
    }
    return { algorithm, jkt, key };
  }
}

const HEADER_MEMBERS = new Set(['typ', 'alg', 'jwk']);
const EC_MEMBERS = new Set(['kty', 'crv', 'x', 'y']);
const OKP_MEMBERS = new Set(['kty', 'crv', 'x']);
const RSA_MEMBERS = new Set(['kty', 'n', 'e']);

function hasOnly(object: object, names: ReadonlySet<string>): boolean {
  const own = Object.keys(object);
  return own.length === names.size && own.every((name) => names.has(name));
}

/** Bytes of each EC coordinate and of an Ed25519 key (RFC 7518 §6.2.1.2, RFC 8037 §2). */
const COORDINATE_BYTES: Record<string, number> = { 'P-256': 32, 'P-384': 48, 'P-521': 66, Ed25519: 32 };

/**
 * The key's RFC 7638 required members, in thumbprint order, when the JWK has those and nothing else,
 * for the algorithm's key type, each value canonical base64url of its exact length; else undefined.
 */
function publicKeyMembers(jwk: unknown, algorithm: JwsAlgorithm): Record<string, string> | undefined {
  if (typeof jwk !== 'object' || jwk === null || Object.getPrototypeOf(jwk) !== Object.prototype) {
    return undefined;
  }
  const members = jwk as Record<string, unknown>;
  if (members.kty !== algorithm.kty) return undefined;
  const { x, y, n, e } = members;
  // The algorithm names the curve (EC, OKP); the JWK must name the same.
  const crv = algorithm.crv ?? '';
  switch (algorithm.kty) {
    case 'EC':
      if (!hasOnly(members, EC_MEMBERS) || members.crv !== crv) return undefined;
      if (!isOctets(x, COORDINATE_BYTES[crv]) || !isOctets(y, COORDINATE_BYTES[crv])) return undefined;
      return { crv, kty: 'EC', x, y };
    case 'OKP':
      if (!hasOnly(members, OKP_MEMBERS) || members.crv !== crv) return undefined;
      if (!isOctets(x, COORDINATE_BYTES[crv])) return undefined;
      return { crv, kty: 'OKP', x };
    case 'RSA':
      if (!hasOnly(members, RSA_MEMBERS) || !isUnsignedInteger(n) || !isUnsignedInteger(e)) return undefined;
      return { e, kty: 'RSA', n };
  }
}

function isOctets(value: unknown, bytes: number | undefined): value is string {
  if (typeof value !== 'string' || bytes === undefined) return false;
  return decodeCanonical(value)?.length === bytes;
}

/** RFC 7518 §6.3.1: an RSA modulus or exponent, base64url of its big-endian bytes, no leading zero. */
function isUnsignedInteger(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const bytes = decodeCanonical(value);
  return bytes !== undefined && bytes.length > 0 && bytes[0] !== 0;
}

function importPublicKey(members: Record<string, string>, algorithm: JwsAlgorithm): KeyObject | undefined {
  try {
    const key = createPublicKey({ key: members, format: 'jwk' });
    const expected = algorithm.kty === 'EC' ? 'ec' : algorithm.kty === 'RSA' ? 'rsa' : 'ed25519';
    return key.type === 'public' && key.asymmetricKeyType === expected ? key : undefined;
  } catch {
    // Not a point of the curve, say: jose decides, and refuses it.
    return undefined;
  }
}
