import {
  createLocalJWKSet,
  decodeJwt,
  errors,
  jwtVerify,
  type JWTPayload,
  type JWTVerifyGetKey,
  type JWTVerifyOptions,
} from 'jose';
import type { Clock } from '../../shared/clock.js';
import { CLIENT_ASSERTION_ALGORITHMS, ClientKeysUnavailable, type RemoteKeySets } from './client-keys.js';
import { invalidClient, type OAuthError } from '../errors.js';
import type { Client, PublicJwkSet } from '../model.js';
import type { UsedJtiStore } from '../ports.js';

/** RFC 7523 §2.2: the client_assertion_type of a JWT client assertion. */
export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/**
 * RFC 7523 §3 item 4 lets the server bound how far ahead `exp` may be: an assertion is made for one
 * request, and one that lives longer is one that a thief could use longer. Five minutes covers any
 * honest client (oauth4webapi signs for one minute).
 */
export const ASSERTION_MAX_LIFETIME_SECONDS = 300;
/** RFC 7523 §3 item 4 and 5: "a small leeway, usually no more than a few minutes" for clock skew. */
export const ASSERTION_LEEWAY_SECONDS = 30;
/** A jti longer than this is refused rather than stored (the replay store keeps each one). */
const MAX_JTI_LENGTH = 255;

/** The namespace of client assertions' jti in the replay store, one per client (RFC 7523 §3 item 7). */
export const clientAssertionNamespace = (clientId: string) => `client-assertion:${clientId}`;

/** Every verification failure answers the same: what failed is not the caller's to learn (RFC 7521 §4.2.1). */
export const ASSERTION_REJECTED = 'client assertion rejected';
const rejected = (): OAuthError => invalidClient(ASSERTION_REJECTED);

export interface ClientAssertionOptions {
  clock: Clock;
  usedJtis: UsedJtiStore;
  remoteKeys: RemoteKeySets;
  /** The issuer identifier: always an accepted audience (RFC 7523 §3 item 3). */
  issuer: string;
  /** The token endpoint URL: also always accepted as the audience (RFC 7523 §3 item 3). */
  tokenEndpoint: string;
}

/**
 * The client a JWT assertion claims to be (its `sub`, RFC 7523 §3 item 2), unverified: only which
 * client's keys to check it with. Undefined when it is not a JWT with a string `sub`.
 */
export function claimedClientId(assertion: string): string | undefined {
  try {
    const { sub } = decodeJwt(assertion);
    return typeof sub === 'string' && sub !== '' ? sub : undefined;
  } catch {
    return undefined;
  }
}

/** Checks a `private_key_jwt` client assertion (RFC 7523 §3) with jose, and accepts its jti once. */
export class ClientAssertionVerifier {
  /** jose's key lookup per registered set, built once per set object read from the store. */
  private readonly localSets = new WeakMap<PublicJwkSet, JWTVerifyGetKey>();

  constructor(private readonly options: ClientAssertionOptions) {}

  /**
   * Resolves when `assertion` authenticates `client` at the endpoint `endpointUrl` (the absolute URL
   * the request was sent to, built from the issuer, never from the request's Host); otherwise throws
   * 401 invalid_client. The jti is recorded only once everything else has been checked, so an
   * assertion refused for another reason can still be corrected and sent.
   */
  async verify(client: Client, assertion: string, endpointUrl: string | undefined): Promise<void> {
    if (client.tokenEndpointAuthMethod !== 'private_key_jwt') throw rejected();
    const { clock, issuer, tokenEndpoint } = this.options;
    const now = clock.now();
    // RFC 7523 §3 item 3: the issuer or the token endpoint; RFC 9126 §2 and RFC 7662/7009 deployments
    // also address an assertion to the endpoint it is sent to.
    const audience = [
      ...new Set([issuer, tokenEndpoint, ...(endpointUrl === undefined ? [] : [endpointUrl])]),
    ];
    const verifyOptions: JWTVerifyOptions = {
      algorithms: [...CLIENT_ASSERTION_ALGORITHMS],
      issuer: client.id,
      subject: client.id,
      audience,
      requiredClaims: ['exp', 'jti'],
      currentDate: new Date(now * 1000),
      clockTolerance: ASSERTION_LEEWAY_SECONDS,
    };
    const payload = await this.verifySignature(client, assertion, verifyOptions);
    const { exp, jti, iat } = payload;
    if (typeof exp !== 'number' || exp > now + ASSERTION_MAX_LIFETIME_SECONDS + ASSERTION_LEEWAY_SECONDS) {
      throw rejected();
    }
    // jose checks iat only against a maximum age; one in the future is no assertion made yet.
    if (iat !== undefined && iat > now + ASSERTION_LEEWAY_SECONDS) throw rejected();
    if (typeof jti !== 'string' || jti === '' || jti.length > MAX_JTI_LENGTH) throw rejected();
    // RFC 7523 §3 item 7: single use, across every process sharing the store, until it would have
    // expired anyway (with the leeway it was accepted under).
    const first = await this.options.usedJtis.use(
      clientAssertionNamespace(client.id),
      jti,
      exp + ASSERTION_LEEWAY_SECONDS,
      now,
    );
    if (!first) throw rejected();
  }

  private async verifySignature(
    client: Client,
    assertion: string,
    options: JWTVerifyOptions,
  ): Promise<JWTPayload> {
    if (client.jwks !== null) return this.verifyOrReject(this.localSet(client.jwks), assertion, options);
    if (client.jwksUri === null) throw rejected();
    const { remoteKeys } = this.options;
    let set: PublicJwkSet;
    try {
      set = await remoteKeys.get(client.jwksUri);
    } catch (error) {
      if (error instanceof ClientKeysUnavailable) throw rejected();
      throw error;
    }
    try {
      return await this.verifyWith(this.localSet(set), assertion, options);
    } catch (error) {
      // A kid the cached set lacks: the client may have rotated its keys since we fetched them.
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw error;
    }
    let fresh: PublicJwkSet | undefined;
    try {
      fresh = await remoteKeys.refetch(client.jwksUri);
    } catch (error) {
      if (error instanceof ClientKeysUnavailable) throw rejected();
      throw error;
    }
    if (fresh === undefined) throw rejected();
    return this.verifyOrReject(this.localSet(fresh), assertion, options);
  }

  /** verifyWith, where a kid the set lacks is one more reason to refuse. */
  private async verifyOrReject(
    keys: JWTVerifyGetKey,
    assertion: string,
    options: JWTVerifyOptions,
  ): Promise<JWTPayload> {
    try {
      return await this.verifyWith(keys, assertion, options);
    } catch (error) {
      if (error instanceof errors.JWKSNoMatchingKey) throw rejected();
      throw error;
    }
  }

  private localSet(jwks: PublicJwkSet): JWTVerifyGetKey {
    let keys = this.localSets.get(jwks);
    if (keys === undefined) {
      keys = createLocalJWKSet(jwks);
      this.localSets.set(jwks, keys);
    }
    return keys;
  }

  /**
   * jwtVerify with the set's key for the header's kid and alg. With no kid and several keys that fit,
   * jose hands each in turn (JWKSMultipleMatchingKeys); the first that verifies wins. Any other
   * failure is invalid_client; JWKSNoMatchingKey is rethrown for the caller's one refetch.
   */
  private async verifyWith(
    keys: JWTVerifyGetKey,
    assertion: string,
    options: JWTVerifyOptions,
  ): Promise<JWTPayload> {
    try {
      return (await jwtVerify(assertion, keys, options)).payload;
    } catch (error) {
      if (error instanceof errors.JWKSNoMatchingKey) throw error;
      if (!(error instanceof errors.JWKSMultipleMatchingKeys)) throw rejected();
      for await (const key of error) {
        try {
          return (await jwtVerify(assertion, key, options)).payload;
        } catch {
          // the next candidate
        }
      }
      throw rejected();
    }
  }
}
