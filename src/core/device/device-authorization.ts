import { byUser, type AuditEntry, type AuditLog } from '../audit/audit-log.js';
import type { Clock } from '../../shared/clock.js';
import { randomToken, sha256 } from '../../shared/crypto.js';
import { requestSource } from '../users/account-lockout.js';
import { ADMIN_SCOPE, scopeForUser } from '../scopes/admin-scope.js';
import type { Authentication, SignedIn } from '../sign-in/assurance.js';
import { recordConsent, type ConsentDecision } from '../authorize/consent.js';
import { invalidTarget, unauthorizedClient } from '../errors.js';
import { DEVICE_CODE_GRANT_TYPE, type Client, type DeviceAuthorization, type User } from '../model.js';
import { isOpenIdScope, OPENID_SCOPE, UNSERVED_STANDARD_SCOPES } from '../scopes/claims.js';
import type { Storage } from '../ports.js';
import { resolveScopeForResources, urisOf, type ResourceTargets } from '../scopes/resources.js';
import { parseScope } from '../scopes/scopes.js';
import { formatUserCode, newUserCode, normaliseUserCode, userCodeHash } from './user-code.js';

/** RFC 8628 §3.5: what a slow_down adds to the polling interval, for this and every later poll. */
export const SLOW_DOWN_SECONDS = 5;
/** A fresh user code is drawn when the one drawn is taken; this many collisions in a row is a fault. */
const USER_CODE_DRAWS = 8;

export interface DeviceAuthorizationPolicy {
  /** RFC 8628 §3.2 `verification_uri`: the page where people enter a code (the endpoint table's). */
  verificationUri: string;
  /** RFC 8628 §3.2 `expires_in` of a device code and its user code, seconds. */
  ttl: number;
  /** RFC 8628 §3.2 `interval`: seconds a device waits between polls, until told to slow down. */
  interval: number;
  /** Wrong user codes allowed per source address inside the window (RFC 8628 §5.1), then 429. */
  userCodeFailuresPerSource: number;
  userCodeFailureWindowSeconds: number;
}

export interface DeviceAuthorizationOptions {
  storage: Pick<Storage, 'clients' | 'grants' | 'throttle' | 'deviceAuthorizations' | 'users'>;
  clock: Clock;
  /** The registered resources `resource` may name (RFC 8707); without it every one is refused. */
  resources?: ResourceTargets;
  policy: DeviceAuthorizationPolicy;
  /** Where a consent that makes a grant is recorded, with the grant (decision 41). */
  audit?: AuditLog;
}

/** The device authorization response (RFC 8628 §3.2). */
export interface DeviceAuthorizationResponse {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

/** A request waiting for its user, as the verification and consent pages show it. */
export interface PendingDeviceRequest {
  /** The user code as people read it, "BCDF-GHJK". */
  userCode: string;
  client: Client;
  scope: string[];
  /** An OpenID Connect request (`openid` in its scope): its approval records the sign-in. */
  openid: boolean;
  expiresAt: number;
}

/** What a typed user code turned out to be. */
export type UserCodeCheck =
  | { outcome: 'pending'; request: PendingDeviceRequest }
  /** Not a code at all: not eight letters of the alphabet (nothing was looked up). */
  | { outcome: 'malformed' }
  /** No request has it (or had it: expired ones are purged). */
  | { outcome: 'unknown' }
  | { outcome: 'expired' }
  /** Approved or denied already: a code is answered once. */
  | { outcome: 'decided' }
  /** Too many wrong codes from this source: nothing is looked up until the window ends. */
  | { outcome: 'throttled'; retryAfter: number };

/** The store key of a source's wrong user codes. */
export const userCodeFailuresKey = (source: string): string => `device:user-code:${requestSource(source)}`;

/**
 * The device authorization grant's front half (RFC 8628 §3.1-§3.3): POST /device_authorization
 * starts a request, the verification page finds it by the user code, and the user's consent decides
 * it. The token endpoint's half (the polling) is token-endpoint/device-code.ts.
 */
export class DeviceAuthorizationService {
  constructor(private readonly options: DeviceAuthorizationOptions) {}

  /** Where people go to enter a code (RFC 8628 §3.2 `verification_uri`). */
  get verificationUri(): string {
    return this.options.policy.verificationUri;
  }

  /**
   * POST /device_authorization (RFC 8628 §3.1): `client`, authenticated as at the token endpoint,
   * asks for `scope` (the client's scopes by default, RFC 6749 §3.3) at `resources` (RFC 8707 §2).
   * Errors are the token endpoint's (§3.2: RFC 6749 §5.2), and nothing is stored.
   */
  async start(
    client: Client,
    request: { scope: string | undefined; resources: readonly string[] },
  ): Promise<DeviceAuthorizationResponse> {
    if (!client.grantTypes.includes(DEVICE_CODE_GRANT_TYPE)) {
      throw unauthorizedClient('this client may not use the device authorization grant');
    }
    const { storage, clock, policy, resources } = this.options;
    const requested = parseScope(request.scope);
    // OpenID Connect Core §3.1.2.1, as at /authorize: `openid` makes it an OpenID Connect request (an
    // omitted scope stands for the client's), whose standard scopes for claims Gatehouse does not keep
    // are ignored rather than refused. offline_access is kept: the device grant always asks the user
    // (Core §11 lets a server keep it where consent is asked).
    const openid =
      requested !== undefined && requested.length > 0
        ? requested.includes(OPENID_SCOPE)
        : client.scopes.includes(OPENID_SCOPE);
    const ignored = (name: string) =>
      openid && UNSERVED_STANDARD_SCOPES.includes(name) && !client.scopes.includes(name);
    if (resources === undefined && request.resources.length > 0) {
      throw invalidTarget('no resource server is registered here');
    }
    const targets = resources === undefined ? [] : await resources.resolve(request.resources);
    const scope = resolveScopeForResources(
      requested?.filter((name) => !ignored(name)),
      client.scopes,
      targets,
    ).filter((name) => !ignored(name));

    const now = clock.now();
    // RFC 8628 §3.2: the device code is a secret of the device, 256 random bits, stored as SHA-256.
    const deviceCode = randomToken('dc_');
    for (let draw = 0; draw < USER_CODE_DRAWS; draw++) {
      const userCode = newUserCode();
      const stored = await storage.deviceAuthorizations.insert({
        hash: sha256(deviceCode),
        userCodeHash: userCodeHash(userCode),
        clientId: client.id,
        scope,
        resources: urisOf(targets),
        createdAt: now,
        expiresAt: now + policy.ttl,
        interval: policy.interval,
        lastPolledAt: null,
        status: 'pending',
        userId: null,
        grantId: null,
        authTime: null,
        sid: null,
        decidedAt: null,
        consumedAt: null,
      });
      if (!stored) continue;
      const shown = formatUserCode(userCode);
      return {
        device_code: deviceCode,
        user_code: shown,
        verification_uri: this.verificationUri,
        verification_uri_complete: `${this.verificationUri}?${new URLSearchParams({ user_code: shown })}`,
        expires_in: policy.ttl,
        interval: policy.interval,
      };
    }
    throw new Error('no free user code after several draws');
  }

  /**
   * The verification page's check of a typed code (RFC 8628 §3.3), throttled per source (§5.1): a
   * code that finds no pending request counts as a failure of `address`, and once it has failed
   * `userCodeFailuresPerSource` times inside the window, nothing more is looked up for it until the
   * window ends. A malformed code is not counted (it looks nothing up, so it tells a guesser nothing),
   * and a code that works clears nothing: a guesser who knows one code gains no fresh allowance.
   */
  async check(typed: string, address: string): Promise<UserCodeCheck> {
    const { storage, clock, policy } = this.options;
    const normal = normaliseUserCode(typed);
    if (normal === undefined) return { outcome: 'malformed' };
    const key = userCodeFailuresKey(address);
    const now = clock.now();
    const failures = await storage.throttle.peek(key, now);
    if (failures.count >= policy.userCodeFailuresPerSource) {
      return { outcome: 'throttled', retryAfter: Math.max(1, failures.resetAt - now) };
    }
    const found = await this.lookUp(normal, now);
    if (found.outcome !== 'pending') {
      await storage.throttle.hit(key, policy.userCodeFailureWindowSeconds, now);
    }
    return found;
  }

  /**
   * The request of a code this browser already entered through check() (the consent page, the page
   * after sign-in): read again, for it may have expired or been answered meanwhile, but not counted.
   * The pages reach it only with a code check() passed (http/ui/routes/device-routes.ts), so it gives
   * a guesser nothing check() would not.
   */
  async find(
    typed: string,
    user?: Pick<User, 'admin'>,
  ): Promise<Exclude<UserCodeCheck, { outcome: 'throttled' }>> {
    const normal = normaliseUserCode(typed);
    if (normal === undefined) return { outcome: 'malformed' };
    const found = await this.lookUp(normal, this.options.clock.now());
    if (found.outcome !== 'pending') return found;
    // Decision 29: the consent page offers `admin` only to an administrator (`user`, signed in; with
    // nobody signed in, nobody's).
    const scope = scopeForUser(found.request.scope, user);
    return { outcome: 'pending', request: { ...found.request, scope } };
  }

  private async lookUp(
    normal: string,
    now: number,
  ): Promise<Exclude<UserCodeCheck, { outcome: 'throttled' | 'malformed' }>> {
    const { storage } = this.options;
    const stored = await storage.deviceAuthorizations.getByUserCode(userCodeHash(normal));
    if (stored === undefined) return { outcome: 'unknown' };
    if (stored.expiresAt <= now) return { outcome: 'expired' };
    if (stored.status !== 'pending') return { outcome: 'decided' };
    // A request cannot outlive its client (deleting a client deletes them); gone meanwhile, unknown.
    const client = await storage.clients.get(stored.clientId);
    if (client === undefined) return { outcome: 'unknown' };
    return { outcome: 'pending', request: pendingRequest(normal, stored, client) };
  }

  /**
   * The user allowed the request `typed` on the consent page (RFC 8628 §3.3), narrowed to
   * `decision.scope`, for `decision.lifetime`: the grant is recorded as at /authorize (consent.ts),
   * and the device's next poll gets tokens under it. `session` is the sign-in (an OpenID Connect
   * request's ID token carries its time and session). 'gone' when the request is no longer pending
   * (expired, or answered meanwhile in another tab): nothing is recorded then. 'refused' when the
   * user may have nothing it asks for (decision 29): it is denied.
   */
  async approve(
    typed: string,
    session: SignedIn,
    decision: ConsentDecision,
    /** The consent page's request address, for the audit event (decision 41). */
    address: string | null = null,
  ): Promise<'approved' | 'gone' | 'refused'> {
    const normal = normaliseUserCode(typed);
    if (normal === undefined) return 'gone';
    const found = await this.lookUp(normal, this.options.clock.now());
    if (found.outcome !== 'pending') return 'gone';
    const { request } = found;
    // Decision 29: a request for nothing but `admin`, allowed by a user who is no administrator, is
    // refused (the device gets access_denied), not answered with a token for nothing.
    if (request.scope.length > 0 && request.scope.every((name) => name === ADMIN_SCOPE)) {
      const user = await this.options.storage.users.get(session.userId);
      if (scopeForUser(request.scope, user).length === 0) {
        const denied = await this.deny(typed, session.userId);
        return denied === 'denied' ? 'refused' : 'gone';
      }
    }
    // Any request's tokens say when and how the user signed in (RFC 9470 §4, decision 36); only an
    // OpenID Connect one's keep the session (`sid`) for its ID token.
    const authentication = asAuthentication(session);
    if (isOpenIdScope(request.scope) && authentication === undefined) {
      throw new Error('an OpenID Connect request is approved by a sign-in, not a bare user');
    }
    const { clock, audit } = this.options;
    const now = clock.now();
    const decide = async (
      storage: DeviceAuthorizationOptions['storage'],
      record?: (entry: AuditEntry) => Promise<void>,
    ): Promise<'approved' | 'gone'> => {
      // recordConsent leaves out what the user may not have (decision 29).
      const { grant, created, scope } = await recordConsent(
        storage,
        { client: request.client, userId: session.userId, requested: request.scope, decision },
        now,
      );
      const decided = await storage.deviceAuthorizations.decide(
        userCodeHash(normal),
        {
          status: 'approved',
          userId: session.userId,
          grantId: grant.id,
          scope,
          authTime: authentication?.authTime ?? null,
          sid: isOpenIdScope(request.scope) ? (authentication?.sid ?? null) : null,
          ...(authentication?.acr === undefined ? {} : { acr: authentication.acr }),
          ...(authentication?.amr === undefined ? {} : { amr: [...authentication.amr] }),
        },
        now,
      );
      if (!decided) {
        // Answered meanwhile (another tab): the grant made for this answer has nothing under it.
        if (created) await storage.grants.revoke(grant.id, now);
        return 'gone';
      }
      // As /authorize's consent (decision 41): the user's decision, with the grant it made or reused.
      await record?.({
        type: 'consent.given',
        userId: session.userId,
        clientId: request.client.id,
        after: { grant_id: grant.id, scopes: scope, lifetime: decision.lifetime },
        detail: 'device authorization (RFC 8628)',
      });
      return 'approved';
    };
    if (audit === undefined) return decide(this.options.storage);
    return audit.change(byUser(session.userId, address), (storage, record) => decide(storage, record));
  }

  /** The user denied the request: the device's next poll gets access_denied (RFC 8628 §3.5). */
  async deny(typed: string, userId: string): Promise<'denied' | 'gone'> {
    const normal = normaliseUserCode(typed);
    if (normal === undefined) return 'gone';
    const decided = await this.options.storage.deviceAuthorizations.decide(
      userCodeHash(normal),
      { status: 'denied', userId },
      this.options.clock.now(),
    );
    return decided ? 'denied' : 'gone';
  }
}

function pendingRequest(normal: string, stored: DeviceAuthorization, client: Client): PendingDeviceRequest {
  return {
    userCode: formatUserCode(normal),
    client,
    scope: stored.scope,
    openid: isOpenIdScope(stored.scope),
    expiresAt: stored.expiresAt,
  };
}

function asAuthentication(session: SignedIn): Authentication | undefined {
  return 'authTime' in session ? session : undefined;
}
