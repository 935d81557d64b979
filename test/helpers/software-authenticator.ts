import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

/**
 * A WebAuthn authenticator in software (P-256, ES256), for unit tests and the bench: it answers
 * creation and request options with real attestation objects (format `none`) and real signed
 * assertions (WebAuthn §6.1 authenticator data, §6.3.3 assertion signature), as JSON the way browsers
 * serialise PublicKeyCredential. Its flags and counter are settable, so a test can play a cloned
 * authenticator or one that did not verify its user.
 */
export interface SoftwareAuthenticatorOptions {
  /** The origin the "browser" reports in clientDataJSON. */
  origin: string;
  /** The UV flag it sets (default true). */
  userVerified?: boolean;
  /** The BE flag (default false: a device-bound key); BS follows it unless set. */
  backupEligible?: boolean;
  backedUp?: boolean;
  /** The counter's first value after registration (default 0: counts from 1 on every use). */
  signCount?: number;
  /** Adds this to the counter on every assertion (0: an authenticator that keeps no counter). */
  counterStep?: number;
}

interface RequestOptions {
  challenge: string;
  rpId?: string;
  allowCredentials?: { id: string }[];
}

interface CreationOptions {
  challenge: string;
  rp: { id?: string };
  user: { id: string };
}

const UP = 0x01;
const UV = 0x04;
const BE = 0x08;
const BS = 0x10;
const AT = 0x40;

export class SoftwareAuthenticator {
  readonly credentialId: string;
  signCount: number;
  userVerified: boolean;
  origin: string;
  rpId: string | undefined;
  userHandle: string | undefined;
  private readonly privateKey: KeyObject;
  private readonly publicKey: KeyObject;

  constructor(
    private readonly options: SoftwareAuthenticatorOptions,
    key?: { credentialId: string; privateKey: KeyObject; publicKey: KeyObject; userHandle?: string },
  ) {
    const pair = key ?? { ...generateKeyPairSync('ec', { namedCurve: 'P-256' }), credentialId: undefined };
    this.privateKey = pair.privateKey;
    this.publicKey = pair.publicKey;
    this.credentialId = key?.credentialId ?? randomBytes(16).toString('base64url');
    this.userHandle = key?.userHandle;
    this.signCount = options.signCount ?? 0;
    this.userVerified = options.userVerified ?? true;
    this.origin = options.origin;
    this.rpId = new URL(options.origin).hostname;
  }

  /** Another authenticator holding the same private key (a clone), with its own counter. */
  clone(signCount: number): SoftwareAuthenticator {
    const copy = new SoftwareAuthenticator(
      { ...this.options, signCount },
      {
        credentialId: this.credentialId,
        privateKey: this.privateKey,
        publicKey: this.publicKey,
        ...(this.userHandle !== undefined ? { userHandle: this.userHandle } : {}),
      },
    );
    copy.rpId = this.rpId;
    return copy;
  }

  /** navigator.credentials.create() (WebAuthn §5.1.3) on `options`, as RegistrationResponseJSON. */
  create(options: CreationOptions): Record<string, unknown> {
    this.rpId = options.rp.id ?? this.rpId;
    this.userHandle = options.user.id;
    const clientDataJSON = this.clientData('webauthn.create', options.challenge);
    const jwk = this.publicKey.export({ format: 'jwk' });
    const coseKey = cborMap([
      [1, 2], // kty: EC2
      [3, -7], // alg: ES256
      [-1, 1], // crv: P-256
      [-2, Buffer.from(jwk.x!, 'base64url')],
      [-3, Buffer.from(jwk.y!, 'base64url')],
    ]);
    const id = Buffer.from(this.credentialId, 'base64url');
    const attested = Buffer.concat([Buffer.alloc(16), u16(id.length), id, coseKey]);
    const authData = Buffer.concat([this.authDataHead(AT, this.signCount), attested]);
    const attestationObject = cborMap([
      ['fmt', 'none'],
      ['attStmt', { encoded: cborMap([]) }],
      ['authData', authData],
    ]);
    return {
      id: this.credentialId,
      rawId: this.credentialId,
      type: 'public-key',
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'),
        attestationObject: attestationObject.toString('base64url'),
        transports: ['internal'],
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /** navigator.credentials.get() (WebAuthn §5.1.4) on `options`, as AuthenticationResponseJSON. */
  get(options: RequestOptions): Record<string, unknown> {
    this.signCount += this.options.counterStep ?? 1;
    const clientDataJSON = this.clientData('webauthn.get', options.challenge);
    const authenticatorData = this.authDataHead(0, this.signCount);
    const signature = sign(
      'sha256',
      Buffer.concat([authenticatorData, createHash('sha256').update(clientDataJSON).digest()]),
      this.privateKey,
    );
    return {
      id: this.credentialId,
      rawId: this.credentialId,
      type: 'public-key',
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'),
        authenticatorData: authenticatorData.toString('base64url'),
        signature: signature.toString('base64url'),
        ...(this.userHandle !== undefined ? { userHandle: this.userHandle } : {}),
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  private clientData(type: string, challenge: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin: this.origin, crossOrigin: false }));
  }

  private authDataHead(extraFlags: number, signCount: number): Buffer {
    const backupEligible = this.options.backupEligible ?? false;
    const backedUp = this.options.backedUp ?? backupEligible;
    const flags =
      UP | (this.userVerified ? UV : 0) | (backupEligible ? BE : 0) | (backedUp ? BS : 0) | extraFlags;
    const rpIdHash = createHash('sha256')
      .update(this.rpId ?? '')
      .digest();
    const count = Buffer.alloc(4);
    count.writeUInt32BE(signCount);
    return Buffer.concat([rpIdHash, Buffer.from([flags]), count]);
  }
}

function u16(value: number): Buffer {
  const buffer = Buffer.alloc(2);
  buffer.writeUInt16BE(value);
  return buffer;
}

/** CBOR (RFC 8949) of what COSE keys and attestation objects hold: ints, text, bytes, maps. */
type CborValue = number | string | Buffer;

function cborHead(major: number, length: number): Buffer {
  if (length < 24) return Buffer.from([(major << 5) | length]);
  if (length < 256) return Buffer.from([(major << 5) | 24, length]);
  return Buffer.concat([Buffer.from([(major << 5) | 25]), u16(length)]);
}

function cbor(value: CborValue): Buffer {
  if (typeof value === 'number') return value >= 0 ? cborHead(0, value) : cborHead(1, -1 - value);
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([cborHead(3, bytes.length), bytes]);
  }
  return Buffer.concat([cborHead(2, value.length), value]);
}

/** An encoded CBOR map, nested as it is (not as a byte string). */
interface EncodedMap {
  encoded: Buffer;
}

function cborMap(entries: [number | string, CborValue | EncodedMap][]): Buffer {
  const parts = entries.map(([key, value]) =>
    Buffer.concat([cbor(key), typeof value === 'object' && 'encoded' in value ? value.encoded : cbor(value)]),
  );
  return Buffer.concat([cborHead(5, entries.length), ...parts]);
}
