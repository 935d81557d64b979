import { JwtVerifier, KeySet, type JwtVerification } from 'gatehouse-oauth-resource-server/jwt-verifier';
import type { Clock } from '../../shared/clock.js';
import { isJwkThumbprint } from './dpop.js';
import { grantState } from '../grants/liveness.js';
import type { KeyRing, VerificationJwks } from '../keys/key-ring.js';
import type { Grant } from '../model.js';
import type { Storage } from '../ports.js';
import { audiencesOf } from '../scopes/resources.js';
import type { AccessTokenClaims, ActorClaim } from './token-issuer.js';
import { VerifiedTokenCache } from './verified-token-cache.js';

/** Why a presented access token is refused; the description is safe to show (it never echoes the token). */
export class InvalidAccessTokenError extends Error {
  constructor(readonly description: string) {
    super(description);
    this.name = 'InvalidAccessTokenError';
  }
}

export interface ValidAccessToken {
  claims: AccessTokenClaims;
  /**
   * How the token must be presented: `bearer` alone; `mac` with a request signature; `dpop` with a
   * DPoP proof of the key in `claims.cnf.jkt` (RFC 9449 §7), never as a bearer token.
   */
  tokenType: 'bearer' | 'mac' | 'dpop';
  /** The grant the token lives under; absent for client_credentials tokens. */
  grant: Grant | undefined;
}

export interface AccessTokenValidatorOptions {
  /** The keys come from the process's key ring, which keeps them fresh and leaves revoked keys out. */
  keyRing: Pick<KeyRing, 'verificationJwks' | 'refresh'>;
  storage: Pick<Storage, 'revocations' | 'grants' | 'clients'>;
  clock: Clock;
  /** The issuer: the `iss` of every token, and the `aud` of those for Gatehouse's own API. */
  issuer: string;
  /** Tokens whose verified claims are kept (decision 27); 10,000 unless said. */
  verifiedTokenCacheSize?: number;
}

/** Decision 27: at most this many verified tokens are remembered, by default (a few MiB). */
export const VERIFIED_TOKEN_CACHE_SIZE = 10_000;

/**
 * Whose token a caller accepts: `'issuer'`, only one whose `aud` names the issuer (Gatehouse's own
 * resources: /v1, /userinfo; RFC 8707 §2, RFC 9068 §4); `'any'`, one issued for any resource (what
 * introspection and revocation answer about, RFC 7662, RFC 7009).
 */
export type AudienceCheck = 'issuer' | 'any';

// The algorithms Gatehouse signs with (key-ring.ts); anything else is refused before any key is tried
// (RFC 8725 §3.1: never let the token choose its own algorithm).
const ALGORITHMS = ['ES256', 'EdDSA', 'Ed25519', 'RS256'];

// RFC 9068 §2.2's claims (the verifier requires those) and Gatehouse's `scope`, which it always signs.
const REQUIRED_CLAIMS = ['scope'];

/**
 * Validates access tokens this server issued: signature against the key ring's public keys, `typ`
 * at+jwt (RFC 9068 §4), issuer, audience and expiry, and then exact liveness: the token id is not
 * revoked and its grant (or, for client_credentials, its client) still stands. The audience is the
 * issuer unless the caller says any will do (AudienceCheck): a token issued for another resource
 * server (RFC 8707) opens nothing of Gatehouse's own.
 */
export class AccessTokenValidator {
  /**
   * The library's synchronous verifier (node:crypto, held to jose by a differential test; decision 26):
   * jose's `jwtVerify` hands each signature to WebCrypto, a round trip through libuv's thread pool per
   * token. Any audience passes here; verify() applies the AudienceCheck after, as before.
   */
  private readonly verifier: JwtVerifier;
  /** The key ring's JWK Set last seen, with its keys imported once (KeySet makes the KeyObjects). */
  private keys: { jwks: VerificationJwks; set: KeySet } | undefined;
  /**
   * Claims of tokens already verified under the key ring's current JWK Set (decision 27): an ES256
   * check is most of an introspection's CPU, and the same token is presented many times.
   */
  private readonly verified: VerifiedTokenCache<AccessTokenClaims, VerificationJwks>;

  constructor(private readonly options: AccessTokenValidatorOptions) {
    this.verified = new VerifiedTokenCache(options.verifiedTokenCacheSize ?? VERIFIED_TOKEN_CACHE_SIZE);
    this.verifier = new JwtVerifier({
      algorithms: ALGORITHMS,
      issuer: options.issuer,
      audiences: 'any',
      requiredClaims: REQUIRED_CLAIMS,
      // As jose's default: `exp` and `nbf` are held to this process's clock exactly.
      clockToleranceSeconds: 0,
    });
  }

  /** Signature and claims only: what a token says, if this server signed it and it has not expired. */
  async verify(token: string, audience: AudienceCheck = 'issuer'): Promise<AccessTokenClaims> {
    const claims = await this.verifySignature(token);
    if (audience === 'issuer' && !audiencesOf(claims.aud).includes(this.options.issuer)) {
      throw new InvalidAccessTokenError('the access token was issued for another resource (aud)');
    }
    return claims;
  }

  private async verifySignature(token: string): Promise<AccessTokenClaims> {
    const { keyRing } = this.options;
    const jwks = await keyRing.verificationJwks();
    // Only tokens that verified are cached, so a hit needs no check of the token's shape (a scan of
    // the whole token, about as long as the look-up).
    const cached = this.verified.get(token, jwks);
    if (cached !== undefined) return this.stillCurrent(token, cached);
    if (!/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token)) {
      throw new InvalidAccessTokenError('the access token is malformed');
    }
    const first = this.verifyWith(token, jwks);
    if (first.valid || first.reason !== 'unknown-key') return this.remember(token, claimsOf(first), jwks);
    // A kid this process has not seen: another process may have rotated the key moments ago. Concurrent
    // re-reads share one query, so forged kids cost no more than any other look-up a request can cause.
    // A kid still unknown after it (a revoked key's, or nobody's) is refused.
    await keyRing.refresh();
    const refreshed = await keyRing.verificationJwks();
    return this.remember(token, claimsOf(this.verifyWith(token, refreshed)), refreshed);
  }

  private remember(token: string, claims: AccessTokenClaims, jwks: VerificationJwks): AccessTokenClaims {
    // Frozen: one object now answers every request that presents this token.
    this.verified.set(token, Object.freeze(claims), jwks);
    return claims;
  }

  /**
   * A cached token's time claims, held to the clock again as the verifier would (exp and nbf exactly,
   * in whole seconds): the signature is what is reused, never the verdict that the token is current.
   */
  private stillCurrent(token: string, claims: AccessTokenClaims): AccessTokenClaims {
    const now = Math.floor(this.options.clock.now());
    if (claims.exp <= now) {
      this.verified.delete(token);
      throw new InvalidAccessTokenError('the access token has expired');
    }
    const { nbf } = claims as { nbf?: number };
    if (nbf !== undefined && nbf > now) throw new InvalidAccessTokenError('the access token is not valid');
    return claims;
  }

  /** Full validation: verify() plus revocation, grant and client liveness. */
  async validate(token: string, audience: AudienceCheck = 'issuer'): Promise<ValidAccessToken> {
    const claims = await this.verify(token, audience);
    const { storage, clock } = this.options;
    if (await storage.revocations.isAccessTokenRevoked(claims.jti)) {
      throw new InvalidAccessTokenError('the access token was revoked');
    }
    let grant: Grant | undefined;
    if (claims.gid !== undefined) {
      grant = await storage.grants.get(claims.gid);
      const state = grant === undefined ? 'revoked' : grantState(grant, clock.now());
      if (state === 'revoked') {
        throw new InvalidAccessTokenError('the grant behind the access token was revoked');
      }
      if (state === 'expired') {
        throw new InvalidAccessTokenError('the grant behind the access token has expired');
      }
      // A token exchange's token (RFC 8693) lives under another client's grant: deleting its own
      // client cascades to nothing of that grant, so the client is looked up (decision 23).
      if (grant !== undefined && grant.clientId !== claims.client_id) {
        if ((await storage.clients.get(claims.client_id)) === undefined) {
          throw new InvalidAccessTokenError('the client of the access token no longer exists');
        }
      }
    } else if ((await storage.clients.get(claims.client_id)) === undefined) {
      // Deleting a client deletes its grants (and so its user tokens) by cascade; its
      // client_credentials tokens carry no grant, so they die here.
      throw new InvalidAccessTokenError('the client of the access token no longer exists');
    }
    const tokenType = claims.cnf !== undefined ? 'dpop' : claims.token_type === 'mac' ? 'mac' : 'bearer';
    return { claims, tokenType, grant };
  }

  private verifyWith(token: string, jwks: VerificationJwks): JwtVerification {
    // The ring hands out one object per key set; its keys are imported again only when it changes.
    if (this.keys?.jwks !== jwks) {
      const set = KeySet.parse(jwks);
      if (set === undefined) throw new Error('the key ring returned no JWK Set');
      this.keys = { jwks, set };
    }
    // Whole seconds, as jose compares them (its currentDate is floored to seconds).
    return this.verifier.verify(token, this.keys.set, Math.floor(this.options.clock.now()));
  }
}

/** The verifier's outcome as core's claims, or the refusal core has always given for it. */
function claimsOf(verification: JwtVerification): AccessTokenClaims {
  if (!verification.valid) {
    if (verification.reason === 'expired') throw new InvalidAccessTokenError('the access token has expired');
    if (verification.reason === 'malformed-claims') throw MALFORMED_CLAIMS();
    // 'unknown-key' after the refresh, 'invalid', and 'wrong-audience' (never, with audiences 'any').
    throw new InvalidAccessTokenError('the access token is not valid');
  }
  // The verifier checked iss, aud (a string or strings), sub, client_id, scope, iat, exp and nbf.
  const payload = verification.claims;
  if (
    typeof payload.jti !== 'string' ||
    (payload.gid !== undefined && typeof payload.gid !== 'string') ||
    (payload.token_type !== undefined && payload.token_type !== 'mac') ||
    (payload.cnf !== undefined && !isDpopConfirmation(payload.cnf)) ||
    (payload.act !== undefined && !isActorClaim(payload.act, 0)) ||
    (payload.may_act !== undefined && !isMayActClaim(payload.may_act)) ||
    // RFC 9068 §2.2.1: auth_time a NumericDate, acr a string (decision 36).
    (payload.auth_time !== undefined && !Number.isSafeInteger(payload.auth_time)) ||
    (payload.acr !== undefined && typeof payload.acr !== 'string')
  ) {
    throw MALFORMED_CLAIMS();
  }
  return payload as unknown as AccessTokenClaims;
}

const MALFORMED_CLAIMS = () => new InvalidAccessTokenError('the access token has malformed claims');

/** RFC 9449 §6.1: a confirmation Gatehouse issues names exactly one key, by its thumbprint. */
function isDpopConfirmation(cnf: unknown): boolean {
  if (typeof cnf !== 'object' || cnf === null) return false;
  const members = Object.keys(cnf);
  return members.length === 1 && members[0] === 'jkt' && isJwkThumbprint((cnf as { jkt: unknown }).jkt);
}

/** A bound on `act` nesting (RFC 8693 §4.1 chains); this server never signs a deeper one. */
export const MAX_ACTOR_DEPTH = 8;

/** RFC 8693 §4.1: `act` is an object with a `sub`, optionally a `client_id` and an earlier `act`. */
function isActorClaim(value: unknown, depth: number): value is ActorClaim {
  if (depth >= MAX_ACTOR_DEPTH || typeof value !== 'object' || value === null) return false;
  const actor = value as Record<string, unknown>;
  return (
    typeof actor.sub === 'string' &&
    (actor.client_id === undefined || typeof actor.client_id === 'string') &&
    (actor.act === undefined || isActorClaim(actor.act, depth + 1))
  );
}

/**
 * RFC 8693 §4.4: `may_act` is an object of claims that identify the party allowed to act. Gatehouse
 * compares string claims only, and an empty one would name nobody in particular: both are malformed.
 */
function isMayActClaim(value: unknown): value is Readonly<Record<string, string>> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const members = Object.values(value as Record<string, unknown>);
  return members.length > 0 && members.every((member) => typeof member === 'string');
}
