import { performance } from 'node:perf_hooks';
import { createLocalJWKSet, errors, jwtVerify, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import type { Clock } from '../shared/clock.js';
import type { KeyRing } from './key-ring.js';
import type { Grant } from './model.js';
import type { Storage } from './ports.js';
import type { AccessTokenClaims } from './token-issuer.js';

/** Why a presented access token is refused; the description is safe to show (it never echoes the token). */
export class InvalidAccessTokenError extends Error {
  constructor(readonly description: string) {
    super(description);
    this.name = 'InvalidAccessTokenError';
  }
}

export interface ValidAccessToken {
  claims: AccessTokenClaims;
  tokenType: 'bearer' | 'mac';
  /** The grant the token lives under; absent for client_credentials tokens. */
  grant: Grant | undefined;
}

export interface AccessTokenValidatorOptions {
  keyRing: Pick<KeyRing, 'publicJwks'>;
  storage: Pick<Storage, 'revocations' | 'grants' | 'clients'>;
  clock: Clock;
  issuer: string;
  audience: string;
  /** How long this process trusts its copy of the public keys before re-reading them. */
  keyCacheSeconds?: number;
}

// The algorithms Gatehouse signs with (key-ring.ts); anything else is refused before any key is tried
// (RFC 8725 §3.1: never let the token choose its own algorithm).
const ALGORITHMS = ['ES256', 'EdDSA', 'Ed25519', 'RS256'];

/**
 * Validates access tokens this server issued: signature against the key ring's public keys, `typ`
 * at+jwt (RFC 9068 §4), issuer, audience and expiry, and then exact liveness: the token id is not
 * revoked and its grant (or, for client_credentials, its client) still stands.
 */
export class AccessTokenValidator {
  private keys: { getKey: JWTVerifyGetKey; loadedAtMs: number } | undefined;
  private loading: Promise<JWTVerifyGetKey> | undefined;

  constructor(private readonly options: AccessTokenValidatorOptions) {}

  /** Signature and claims only: what a token says, if this server signed it and it has not expired. */
  async verify(token: string): Promise<AccessTokenClaims> {
    if (!/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token)) {
      throw new InvalidAccessTokenError('the access token is malformed');
    }
    try {
      return await this.verifyWith(token, await this.currentKeys(false));
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw translate(error);
    }
    // A kid this process has not seen: another process may have rotated the key moments ago.
    try {
      return await this.verifyWith(token, await this.currentKeys(true));
    } catch (error) {
      throw translate(error);
    }
  }

  /** Full validation: verify() plus revocation, grant and client liveness. */
  async validate(token: string): Promise<ValidAccessToken> {
    const claims = await this.verify(token);
    const { storage, clock } = this.options;
    if (await storage.revocations.isAccessTokenRevoked(claims.jti)) {
      throw new InvalidAccessTokenError('the access token was revoked');
    }
    let grant: Grant | undefined;
    if (claims.gid !== undefined) {
      grant = await storage.grants.get(claims.gid);
      if (grant === undefined || grant.revokedAt !== null) {
        throw new InvalidAccessTokenError('the grant behind the access token was revoked');
      }
      if (grant.expiresAt !== null && grant.expiresAt <= clock.now()) {
        throw new InvalidAccessTokenError('the grant behind the access token has expired');
      }
    } else if ((await storage.clients.get(claims.client_id)) === undefined) {
      // Deleting a client deletes its grants (and so its user tokens) by cascade; its
      // client_credentials tokens carry no grant, so they die here.
      throw new InvalidAccessTokenError('the client of the access token no longer exists');
    }
    return { claims, tokenType: claims.token_type === 'mac' ? 'mac' : 'bearer', grant };
  }

  private async verifyWith(token: string, getKey: JWTVerifyGetKey): Promise<AccessTokenClaims> {
    const { payload } = await jwtVerify(token, getKey, {
      algorithms: ALGORITHMS,
      typ: 'at+jwt',
      issuer: this.options.issuer,
      audience: this.options.audience,
      currentDate: new Date(this.options.clock.now() * 1000),
      requiredClaims: ['sub', 'client_id', 'jti', 'iat', 'exp', 'scope'],
    });
    if (
      typeof payload.client_id !== 'string' ||
      typeof payload.scope !== 'string' ||
      typeof payload.jti !== 'string' ||
      (payload.gid !== undefined && typeof payload.gid !== 'string') ||
      (payload.token_type !== undefined && payload.token_type !== 'mac')
    ) {
      throw new InvalidAccessTokenError('the access token has malformed claims');
    }
    return payload as unknown as AccessTokenClaims;
  }

  private async currentKeys(unknownKid: boolean): Promise<JWTVerifyGetKey> {
    const ttlMs = (this.options.keyCacheSeconds ?? 10) * 1000;
    // Monotonic time, not the domain clock: this only paces a cache. An unknown kid always re-reads
    // (a key rotated in moments ago), but concurrent re-reads share one query, so forged kids cost
    // no more than any other look-up a request can cause.
    const age = this.keys === undefined ? Infinity : performance.now() - this.keys.loadedAtMs;
    if (this.keys !== undefined && !unknownKid && age <= ttlMs) return this.keys.getKey;
    this.loading ??= this.options.keyRing
      .publicJwks()
      .then((jwks) => {
        const getKey = createLocalJWKSet(jwks as JSONWebKeySet);
        this.keys = { getKey, loadedAtMs: performance.now() };
        return getKey;
      })
      .finally(() => {
        this.loading = undefined;
      });
    return this.loading;
  }
}

function translate(error: unknown): Error {
  if (error instanceof InvalidAccessTokenError) return error;
  if (error instanceof errors.JWTExpired) return new InvalidAccessTokenError('the access token has expired');
  if (error instanceof errors.JOSEError) return new InvalidAccessTokenError('the access token is not valid');
  return error instanceof Error ? error : new Error(String(error));
}
