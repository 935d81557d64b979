import { InvalidAccessTokenError, type AccessTokenValidator } from '../tokens/access-token-validation.js';
import type { DpopVerifier } from '../tokens/dpop.js';
import type { UserStore } from '../ports.js';
import { checkTokenPresentation, type TokenPresentation } from '../tokens/token-presentation.js';
import { isOpenIdScope, OPENID_SCOPE, userClaims, type UserClaims } from '../scopes/claims.js';

/** The UserInfo response (Core §5.3.2): `sub` always, then the claims the token's scopes release. */
export interface UserInfoResponse extends UserClaims {
  sub: string;
}

/** Why UserInfo refuses a token: RFC 6750 §3.1's codes, as Core §5.3.3 prescribes. */
export class UserInfoError extends Error {
  constructor(
    readonly code: 'invalid_token' | 'insufficient_scope',
    readonly description: string,
  ) {
    super(description);
    this.name = 'UserInfoError';
  }

  /** The scope that would do, for the challenge's `scope` (RFC 6750 §3). */
  get requiredScope(): string | undefined {
    return this.code === 'insufficient_scope' ? OPENID_SCOPE : undefined;
  }
}

export interface UserInfoOptions {
  validator: Pick<AccessTokenValidator, 'validate'>;
  users: Pick<UserStore, 'get'>;
  /** Checks the proof of a DPoP-bound token (RFC 9449 §7). */
  dpop: DpopVerifier;
}

/** The UserInfo endpoint's rules (Core §5.3), for GET and POST /userinfo. */
export class UserInfoService {
  constructor(private readonly options: UserInfoOptions) {}

  /**
   * The claims about the user an access token acts for. The token must be a live token of this
   * server (signature, expiry, revocation, grant: the same validation as /v1), presented as what it
   * is (a bearer token, or a DPoP-bound one with its proof: RFC 9449 §7), issued for a user, with
   * `openid` in its scope (Core §5.3: UserInfo is an OpenID Connect resource). A refused proof is
   * the verifier's DpopProofError.
   */
  async claims(
    accessToken: string,
    presentation: TokenPresentation = { scheme: 'bearer' },
  ): Promise<UserInfoResponse> {
    let valid;
    try {
      valid = await this.options.validator.validate(accessToken);
      await checkTokenPresentation(accessToken, valid, presentation, this.options.dpop);
    } catch (error) {
      if (error instanceof InvalidAccessTokenError)
        throw new UserInfoError('invalid_token', error.description);
      throw error;
    }
    // client_credentials tokens act for no user: there is no one to describe.
    if (valid.grant === undefined) {
      throw new UserInfoError('invalid_token', 'the access token was not issued for a user');
    }
    const scope = valid.claims.scope.split(' ').filter((name) => name !== '');
    if (!isOpenIdScope(scope)) {
      throw new UserInfoError('insufficient_scope', 'the access token lacks the scope openid');
    }
    const user = await this.options.users.get(valid.claims.sub);
    if (user === undefined) throw new UserInfoError('invalid_token', 'the user no longer exists');
    // Core §5.3.2: sub is the one claim always returned, the same as the ID token's.
    return { sub: user.id, ...userClaims(user, scope) };
  }
}
