import { createHash } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import { ID_TOKEN_TYP, type KeyRing } from '../keys/key-ring.js';
import type { Client } from '../model.js';
import type { UserStore } from '../ports.js';
import { userClaims, type UserClaims } from '../scopes/claims.js';

/** The algorithms a client may register for its ID tokens (`id_token_signed_response_alg`). */
export const ID_TOKEN_SIGNING_ALGORITHMS = ['RS256', 'ES256'] as const;
export type IdTokenSigningAlgorithm = (typeof ID_TOKEN_SIGNING_ALGORITHMS)[number];

/** Core §15.1: RS256 is what every client can verify, so it is the default. */
export const DEFAULT_ID_TOKEN_SIGNING_ALGORITHM: IdTokenSigningAlgorithm = 'RS256';

export function isIdTokenSigningAlgorithm(value: string): value is IdTokenSigningAlgorithm {
  return (ID_TOKEN_SIGNING_ALGORITHMS as readonly string[]).includes(value);
}

export interface IdTokenInput {
  /** The client the token is for: its `aud` and `azp`, and its `idTokenSignedResponseAlg`. */
  client: Client;
  /** The authenticated user's id: `sub`, the same subject as the access tokens (Core §2). */
  userId: string;
  /** The granted scope; its claims go into the token only when no access token or code is issued. */
  scope: readonly string[];
  /** The authorization request's `nonce`, echoed unchanged (Core §3.1.2.1); never on a refresh (Core §12.2). */
  nonce?: string;
  /** When the user last authenticated, epoch seconds (Core §2 `auth_time`). */
  authTime: number;
  /** The browser session the authentication belongs to (`sid`, OpenID Connect Front-Channel Logout §2). */
  sid: string;
  /**
   * What the sign-in was worth (Core §2 `acr`, RFC 8176 `amr`; docs/decisions.md, decision 36): left
   * out when unknown (a code or refresh token from before migration 0021), never guessed.
   */
  acr?: string | null;
  amr?: readonly string[] | null;
  /** The access token issued with this ID token: adds `at_hash` (Core §3.3.2.11, §3.1.3.6). */
  accessToken?: string;
  /** The authorization code issued with this ID token: adds `c_hash` (Core §3.3.2.11). */
  code?: string;
  /** The issue time; the clock's now by default. */
  now?: number;
}

/** The claims of a Gatehouse ID token (Core §2, §3.3.2.11). */
export interface IdTokenClaims extends UserClaims {
  iss: string;
  sub: string;
  aud: string;
  exp: number;
  iat: number;
  auth_time: number;
  sid: string;
  acr?: string;
  amr?: string[];
  azp: string;
  nonce?: string;
  at_hash?: string;
  c_hash?: string;
}

export interface IdTokenIssuerOptions {
  keyRing: Pick<KeyRing, 'signWith'>;
  users: Pick<UserStore, 'get'>;
  clock: Clock;
  issuer: string;
  /** Lifetime, seconds (GATEHOUSE_ID_TOKEN_TTL). */
  ttl: number;
}

/**
 * The hash of an access token or code for `at_hash` / `c_hash` (Core §3.3.2.11, §3.1.3.6): the
 * left-most half of the hash of its ASCII octets, base64url-encoded, with the hash of the JWS `alg`
 * (SHA-256 for RS256 and ES256).
 */
export function leftHalfHash(value: string, alg: IdTokenSigningAlgorithm): string {
  const digest = createHash(hashOf(alg)).update(value, 'ascii').digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

function hashOf(alg: IdTokenSigningAlgorithm): string {
  switch (alg) {
    case 'RS256':
    case 'ES256':
      return 'sha256';
  }
}

/**
 * Issues ID tokens (Core §2), signed with the client's registered algorithm by the key ring's key of
 * that algorithm, header `typ: JWT` (so no access-token validator takes one: they require at+jwt).
 */
export class IdTokenIssuer {
  constructor(private readonly options: IdTokenIssuerOptions) {}

  async issue(input: IdTokenInput): Promise<string> {
    const { client } = input;
    const alg = client.idTokenSignedResponseAlg;
    const iat = input.now ?? this.options.clock.now();
    const claims: IdTokenClaims = {
      iss: this.options.issuer,
      sub: input.userId,
      // One audience, the client (Core §2); no other party is ever added.
      aud: client.id,
      exp: iat + this.options.ttl,
      iat,
      auth_time: input.authTime,
      sid: input.sid,
      // Core §2 lets azp stand beside a single audience equal to it; always sending it gives relying
      // parties one rule (Core §3.1.3.7 step 5 checks it when present).
      azp: client.id,
    };
    if (input.nonce !== undefined) claims.nonce = input.nonce;
    if (input.acr !== undefined && input.acr !== null) claims.acr = input.acr;
    // RFC 8176 §1: amr is a JSON array of strings; an empty one says nothing and is left out.
    if (input.amr !== undefined && input.amr !== null && input.amr.length > 0) claims.amr = [...input.amr];
    if (input.accessToken !== undefined) claims.at_hash = leftHalfHash(input.accessToken, alg);
    if (input.code !== undefined) claims.c_hash = leftHalfHash(input.code, alg);
    // Core §5.4: the scopes' claims come from UserInfo whenever the response leads to an access token
    // (directly, or through a code); only an ID token issued alone (response_type=id_token) carries them.
    if (input.accessToken === undefined && input.code === undefined) {
      const user = await this.options.users.get(input.userId);
      if (user !== undefined) Object.assign(claims, userClaims(user, input.scope));
    }
    return this.options.keyRing.signWith(alg, claims as unknown as Record<string, unknown>, ID_TOKEN_TYP);
  }
}
