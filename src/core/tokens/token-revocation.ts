import type { Clock } from '../../shared/clock.js';
import { sha256 } from '../../shared/crypto.js';
import { AccessTokenValidator, InvalidAccessTokenError } from './access-token-validation.js';
import type { Client } from '../model.js';
import type { Storage } from '../ports.js';
import type { AuditEntry, AuditLog } from '../audit/audit-log.js';

export interface TokenRevokerOptions {
  validator: AccessTokenValidator;
  storage: Pick<Storage, 'refreshTokens' | 'grants' | 'revocations'>;
  clock: Clock;
  /**
   * Where a revocation is recorded, with it (decision 41): `token.revoked`, the client as actor, the
   * kind of token and the hint sent; never the token, nor anything that leads to it.
   */
  audit?: AuditLog;
}

type Revocations = Pick<Storage, 'grants' | 'revocations'>;

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
  async revoke(
    token: string,
    hint: string | undefined,
    client: Client,
    /** The request's address, for the audit event. */
    address: string | null = null,
  ): Promise<void> {
    const lookups =
      hint === 'refresh_token'
        ? [() => this.refreshToken(token, client), () => this.accessToken(token, client)]
        : [() => this.accessToken(token, client), () => this.refreshToken(token, client)];
    for (const lookup of lookups) {
      const found = await lookup();
      if (found === undefined) continue;
      if (found !== 'not-the-clients') await this.apply(found, client, hint, address);
      return;
    }
  }

  /** Writes the revocation, and its event in the same transaction when there is an audit log. */
  private async apply(
    found: Revocation,
    client: Client,
    hint: string | undefined,
    address: string | null,
  ): Promise<void> {
    const write = async (storage: Revocations) => {
      if (found.kind === 'access_token') await storage.revocations.revokeAccessToken(found.jti, found.exp);
      else await storage.grants.revoke(found.grantId, this.options.clock.now());
    };
    const { audit } = this.options;
    if (audit === undefined) return write(this.options.storage);
    const entry: AuditEntry = {
      type: 'token.revoked',
      clientId: client.id,
      userId: found.userId,
      // What was revoked and what the client hinted (RFC 7009 §2.1); the token itself never.
      detail: `${found.kind}${found.kind === 'refresh_token' ? ' (its grant)' : ''}, hint ${hint ?? 'none'}`,
    };
    await audit.change({ actor: { type: 'client', id: client.id }, address }, async (storage, record) => {
      await write(storage);
      await record(entry);
    });
  }

  /**
   * An access token: its id is recorded as revoked until the token would expire anyway. Undefined
   * when it is none of this server's; 'not-the-clients' when another client's (nothing is revoked,
   * and nothing else is looked up for it).
   */
  private async accessToken(
    token: string,
    client: Client,
  ): Promise<Revocation | 'not-the-clients' | undefined> {
    if (token.split('.').length !== 3) return undefined;
    let claims;
    try {
      // A token for any resource (RFC 8707) may be revoked by its client.
      claims = await this.options.validator.verify(token, 'any');
    } catch (error) {
      if (error instanceof InvalidAccessTokenError) return undefined;
      throw error;
    }
    if (claims.client_id !== client.id) return 'not-the-clients';
    return {
      kind: 'access_token',
      jti: claims.jti,
      exp: claims.exp,
      userId: claims.sub === claims.client_id ? null : claims.sub,
    };
  }

  /**
   * A refresh token: its grant is revoked, which retires every refresh token of the grant and ends
   * every access token carrying the grant id (RFC 7009 §2.1: "SHOULD also invalidate all access
   * tokens based on the same authorization grant").
   */
  private async refreshToken(
    token: string,
    client: Client,
  ): Promise<Revocation | 'not-the-clients' | undefined> {
    const stored = await this.options.storage.refreshTokens.get(sha256(token));
    if (stored === undefined) return undefined;
    if (stored.clientId !== client.id) return 'not-the-clients';
    const grant = await this.options.storage.grants.get(stored.grantId);
    return { kind: 'refresh_token', grantId: stored.grantId, userId: grant?.userId ?? null };
  }
}

/** What a token presented for revocation turned out to be. */
type Revocation =
  | { kind: 'access_token'; jti: string; exp: number; userId: string | null }
  | { kind: 'refresh_token'; grantId: string; userId: string | null };
