import { randomUUID } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import { randomToken, sha256 } from '../../shared/crypto.js';
import { OAuthError } from '../errors.js';
import type { Grant } from '../model.js';
import type { Storage } from '../ports.js';
import { isSubset } from '../scopes.js';
import type { TokenIssuer, TokenResponse } from '../token-issuer.js';
import type { AuthorizationRequest } from './request.js';
import { authorizationErrorUrl, authorizationResponseUrl, type ResponseMode } from './response.js';

/** The lifetimes the consent page offers, in seconds; null is "until I revoke it". */
export const GRANT_LIFETIMES: readonly (number | null)[] = [3600, 86400, 30 * 86400, null];

export interface AuthorizationServiceOptions {
  storage: Storage;
  issuer: TokenIssuer;
  clock: Clock;
  authorizationCodeTtl: number;
}

/** What the user decided on the consent page. */
export interface ConsentDecision {
  /** The scopes left ticked: a subset of the request's. */
  scope: string[];
  /** Seconds the grant lasts, or null for "until I revoke it". */
  lifetime: number | null;
}

export const responseMode = (request: AuthorizationRequest): ResponseMode =>
  request.responseType === 'token' ? 'fragment' : 'query';

export const isLive = (grant: Grant, now: number): boolean =>
  grant.revokedAt === null && (grant.expiresAt === null || grant.expiresAt > now);

/** Loopback hosts (RFC 8252 §7.3, §8.3): any local application can listen there. */
function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host === '[::1]' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
  );
}

/**
 * Whether an earlier consent may answer this request without showing the consent page again.
 * Only when the redirect URI itself identifies the client: a confidential client's https redirect to
 * a host other than loopback, and the code flow, whose code is worthless without the client's secret.
 * RFC 8252 §8.6 and RFC 6749 §10.2: a public client, a private-use scheme or a loopback redirect can
 * be claimed by any application on the device, which would otherwise get a code for its own PKCE
 * challenge with no one asked; an implicit response hands the token itself to the redirect, so it
 * always asks.
 */
export function mayReuseConsent(request: AuthorizationRequest): boolean {
  if (request.responseType !== 'code' || request.client.isPublic) return false;
  let url: URL;
  try {
    url = new URL(request.redirectUri);
  } catch {
    return false;
  }
  return url.protocol === 'https:' && !isLoopbackHost(url.hostname);
}

/**
 * Turns a validated authorization request and the user's decision into the redirect back to the
 * client. A new consent retires the earlier grants of the client that it overrules.
 */
export class AuthorizationService {
  constructor(private readonly options: AuthorizationServiceOptions) {}

  /**
   * A live grant of this user to this client that already covers everything the request asks for,
   * when the request may be answered under it without asking again (see mayReuseConsent).
   */
  async rememberedGrant(request: AuthorizationRequest, userId: string): Promise<Grant | undefined> {
    if (!mayReuseConsent(request)) return undefined;
    const now = this.options.clock.now();
    const grants = await this.options.storage.grants.listByUser(userId);
    return grants.find(
      (grant) =>
        grant.clientId === request.client.id && isLive(grant, now) && isSubset(request.scope, grant.scope),
    );
  }

  /** Answers the request under a grant the user made earlier (consent skipped). */
  async approveWithGrant(request: AuthorizationRequest, grant: Grant): Promise<string> {
    return this.respond(request, grant, request.scope);
  }

  /**
   * Records the user's consent as a grant, retires the earlier grants it overrules, and answers the
   * request.
   */
  async approve(request: AuthorizationRequest, userId: string, decision: ConsentDecision): Promise<string> {
    // The consent page may only narrow what was asked for (RFC 6749 §3.3: the user chooses what they grant).
    if (!isSubset(decision.scope, request.scope)) throw new Error('consent widened the requested scope');
    if (!GRANT_LIFETIMES.includes(decision.lifetime)) throw new Error('unknown grant lifetime');
    const { storage, clock } = this.options;
    const now = clock.now();
    const expiresAt = decision.lifetime === null ? null : now + decision.lifetime;
    const previous = (await storage.grants.listByUser(userId)).filter(
      (other) => other.clientId === request.client.id && isLive(other, now),
    );
    // The newest decision is the one that stands: what the user unticked, or allowed for a shorter
    // time, must not live on in an older grant. Older grants it does not overrule stay, so allowing an
    // app again (on a second device, or because the page is shown every time: see mayReuseConsent)
    // does not end the access given before.
    const refused = request.scope.filter((name) => !decision.scope.includes(name));
    const overruled = (other: Grant): boolean =>
      other.scope.some((name) => refused.includes(name)) ||
      (expiresAt !== null && (other.expiresAt === null || other.expiresAt > expiresAt));
    for (const other of previous) {
      if (overruled(other)) await storage.grants.revoke(other.id, now);
    }
    // A standing grant "until I revoke it" that already allows all of it answers the request, so a
    // client asked every time does not pile up grants that never end.
    if (expiresAt === null) {
      const standing = previous.find(
        (other) => other.expiresAt === null && !overruled(other) && isSubset(decision.scope, other.scope),
      );
      if (standing !== undefined) return this.respond(request, standing, decision.scope);
    }
    const grant: Grant = {
      id: randomUUID(),
      clientId: request.client.id,
      userId,
      scope: decision.scope,
      createdAt: now,
      expiresAt,
      revokedAt: null,
    };
    await storage.grants.insert(grant);
    return this.respond(request, grant, decision.scope);
  }

  /** RFC 6749 §4.1.2.1: the user said no. */
  deny(request: AuthorizationRequest): string {
    return this.error(request, new OAuthError('access_denied', 'the user denied the request'));
  }

  error(request: AuthorizationRequest, error: OAuthError): string {
    return authorizationErrorUrl(request.redirectUri, responseMode(request), error, request.state);
  }

  private async respond(request: AuthorizationRequest, grant: Grant, scope: string[]): Promise<string> {
    if (request.responseType === 'code') {
      const code = await this.issueCode(request, grant, scope);
      // §4.1.2: code and state in the query.
      return authorizationResponseUrl(request.redirectUri, 'query', { code, state: request.state });
    }
    const token = await this.options.issuer.issueAccessToken({
      client: request.client,
      subject: grant.userId,
      scope,
      grant,
      withRefreshToken: false,
    });
    return authorizationResponseUrl(request.redirectUri, 'fragment', {
      ...implicitParams(token),
      state: request.state,
    });
  }

  /** A single-use code bound to client, redirect URI, PKCE challenge, user, scope and grant. */
  private async issueCode(request: AuthorizationRequest, grant: Grant, scope: string[]): Promise<string> {
    const now = this.options.clock.now();
    const code = randomToken('ac_');
    await this.options.storage.codes.insert({
      hash: sha256(code),
      clientId: request.client.id,
      userId: grant.userId,
      grantId: grant.id,
      redirectUri: request.redirectUri,
      scope,
      codeChallenge: request.codeChallenge,
      codeChallengeMethod: request.codeChallengeMethod,
      createdAt: now,
      expiresAt: now + this.options.authorizationCodeTtl,
      consumedAt: null,
    });
    return code;
  }
}

/**
 * The fragment of an implicit response (RFC 6749 §4.2.2): everything of the token response but a
 * refresh token, which the implicit grant never issues.
 */
function implicitParams(token: TokenResponse): Record<string, string | undefined> {
  return {
    access_token: token.access_token,
    token_type: token.token_type,
    expires_in: String(token.expires_in),
    scope: token.scope,
    mac_key: token.mac_key,
    mac_algorithm: token.mac_algorithm,
  };
}
