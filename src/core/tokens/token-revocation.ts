import type { Clock } from '../../shared/clock.js';
import { sha256 } from '../../shared/crypto.js';
import { AccessTokenValidator, InvalidAccessTokenError } from './access-token-validation.js';
import type { Client } from '../model.js';
import type { Storage } from '../ports.js';

export interface TokenRevokerOptions {
  validator: AccessTokenValidator;
  storage: Pick<Storage, 'refreshTokens' | 'grants' | 'revocations'>;
  clock: Clock;
}

/** RFC 7009 token revocation. */
export class TokenRevoker {
  constructor(private readonly options: TokenRevokerOptions) {}

  /**
   * Revokes `token` if this server issued it to `client`. Unknown, malformed and already expired
   * tokens are silently accepted (RFC 7009 §2.2: 200 either way); the hint only orders the look-ups
   * (§2.1). A token issued to another client is left alone (§2.1: the server verifies the token was
   * issued to the requesting client) and answered exactly like an unknown one: an error would tell
   * the caller that the token it holds is valid.
   */
  async revoke(token: string, hint: string | undefined, client: Client): Promise<void> {
    const lookups =
      hint === 'refresh_token'
        ? [() => this.refreshToken(token, client), () => this.accessToken(token, client)]
        : [() => this.accessToken(token, client), () => this.refreshToken(token, client)];
    for (const lookup of lookups) {
      if (await lookup()) return;
    }
  }

  /** An access token: its id is recorded as revoked until the token would expire anyway. */
  private async accessToken(token: string, client: Client): Promise<boolean> {
    if (token.split('.').length !== 3) return false;
    let claims;
    try {
      // A token for any resource (RFC 8707) may be revoked by its client.
      claims = await this.options.validator.verify(token, 'any');
    } catch (error) {
      if (error instanceof InvalidAccessTokenError) return false;
      throw error;
    }
    // Someone else's token: nothing is revoked, and nothing else is looked up for it.
    if (claims.client_id !== client.id) return true;
    await this.options.storage.revocations.revokeAccessToken(claims.jti, claims.exp);
    return true;
  }

  /**
   * A refresh token: its grant is revoked, which retires every refresh token of the grant and ends
   * every access token carrying the grant id (RFC 7009 §2.1: "SHOULD also invalidate all access
   * tokens based on the same authorization grant").
   */
  private async refreshToken(token: string, client: Client): Promise<boolean> {
    const stored = await this.options.storage.refreshTokens.get(sha256(token));
    if (stored === undefined) return false;
    if (stored.clientId !== client.id) return true;
    await this.options.storage.grants.revoke(stored.grantId, this.options.clock.now());
    return true;
  }
}
