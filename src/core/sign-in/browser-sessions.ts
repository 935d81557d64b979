import type { Clock } from '../../shared/clock.js';
import { randomToken, sha256 } from '../../shared/crypto.js';
import type { BrowserSession, Grant, SessionAuthentication, User } from '../model.js';
import type { BrowserSessionStore, SignedInSession } from '../ports.js';
import { assurance, sessionAuthentications, type Authentication } from './assurance.js';
import type { AuditContext, AuditLog } from '../audit/audit-log.js';

/** A signed-in browser: its user, and the sign-in an OpenID Connect response asserts. */
export interface SignedInBrowser {
  user: User;
  authentication: Authentication;
}

/** How long a browser stays signed in. */
export const BROWSER_SESSION_TTL = 12 * 3600;

/**
 * A session's last activity is written at most this often (decision 37): the security page says
 * "last active" to within a few minutes, and a page load is not a write each time.
 */
export const ACTIVITY_WRITE_INTERVAL = 5 * 60;

/** What a session keeps of the User-Agent header: enough to name the browser and its system. */
export const USER_AGENT_MAX_LENGTH = 256;

/** Where a sign-in came from, as the security page shows it (decision 37). */
export interface SignInDevice {
  /** The User-Agent header, if any. */
  userAgent?: string | undefined;
  /** The request's address. */
  address?: string | undefined;
}

/** One of a user's sessions, as the security page lists it (decision 37). */
export interface SessionListing {
  /** The session's `sid`: safe to show and to name the session in a form. */
  sid: string;
  /** The browser asking. */
  current: boolean;
  createdAt: number;
  /** When it was last used (to within ACTIVITY_WRITE_INTERVAL); its sign-in time when never recorded. */
  lastActiveAt: number;
  userAgent?: string;
  address?: string;
}

/** The User-Agent and address a session records: printable text only, cut short. */
function deviceColumns(device: SignInDevice | undefined): { userAgent?: string; address?: string } {
  // Control characters never reach a page or a log from here; the header is the client's to choose.
  const clean = (value: string | undefined, max: number) => {
    const text = value
      ?.replace(/\p{C}+/gu, ' ')
      .trim()
      .slice(0, max);
    return text === undefined || text === '' ? undefined : text;
  };
  const userAgent = clean(device?.userAgent, USER_AGENT_MAX_LENGTH);
  const address = clean(device?.address, 64);
  return { ...(userAgent === undefined ? {} : { userAgent }), ...(address === undefined ? {} : { address }) };
}

/**
 * Signed-in browsers. The cookie carries a random id (256 bits); the store keeps only its SHA-256,
 * so a leaked database does not sign anyone in. Stored, not in memory: several processes share it.
 */
export class BrowserSessions {
  constructor(
    private readonly sessions: BrowserSessionStore,
    private readonly clock: Clock,
    private readonly ttlSeconds: number = BROWSER_SESSION_TTL,
    /**
     * Where a session ended by somebody's choice is recorded, with the ending (decision 41): the user's
     * own "Sign out" on the security page, an operator's on /v1.
     */
    private readonly audit?: AuditLog,
  ) {}

  /** A fresh random browser id, signed in or not (it also anchors the CSRF token before sign-in). */
  static newBrowserId(): string {
    return randomToken('bs_');
  }

  /**
   * Signs the user in under a new browser id (never the old one: session fixation), recording the
   * methods that proved who they are, in the order used (SignInResult's `authentication`, decision 30):
   * a password and then a one-time code are two entries (decision 34), and make the sign-in `mfa`; and
   * the device and address it was done from (decision 37).
   */
  async start(
    userId: string,
    authentications: SessionAuthentication | readonly SessionAuthentication[],
    device?: SignInDevice,
  ): Promise<string> {
    const record = 'method' in authentications ? [authentications] : [...authentications];
    if (record.length === 0) throw new Error('a sign-in records at least one method');
    const id = BrowserSessions.newBrowserId();
    const now = this.clock.now();
    const hash = sha256(id);
    await this.sessions.insert({
      hash,
      userId,
      createdAt: now,
      expiresAt: now + this.ttlSeconds,
      authentications: record,
      sid: sessionId(hash),
      ...deviceColumns(device),
      lastActiveAt: now,
    });
    return id;
  }

  /**
   * A re-authentication in a signed-in browser (decision 37): the person proved who they are again, so
   * the session records the method with its time (`auth_time` moves, Core §2) and stays the same
   * session (its `sid`, its other sign-ins, its expiry). Its cookie is renewed all the same (OWASP
   * ASVS 3.2.1: a new session token at re-authentication): a copy of the old cookie, wherever it went,
   * is not raised to a recent sign-in. The new browser id, or undefined when the session is gone or is
   * not `userId`'s (the caller then starts one).
   */
  async renew(
    browserId: string | undefined,
    userId: string,
    authentications: SessionAuthentication | readonly SessionAuthentication[],
    device?: SignInDevice,
  ): Promise<string | undefined> {
    if (browserId === undefined || browserId === '') return undefined;
    const now = this.clock.now();
    const oldHash = sha256(browserId);
    const session = await this.sessions.get(oldHash, now);
    if (session === undefined || session.userId !== userId) return undefined;
    const id = BrowserSessions.newBrowserId();
    const renewed = await this.sessions.renew(oldHash, now, {
      hash: sha256(id),
      authentications: [
        ...sessionAuthentications(session),
        ...('method' in authentications ? [authentications] : authentications),
      ],
      sid: session.sid ?? sessionId(oldHash),
      // Where the person proved it again from; the session's own when the caller does not say.
      ...deviceColumns(device ?? { userAgent: session.userAgent, address: session.address }),
    });
    return renewed ? id : undefined;
  }

  /** The user's live sessions, oldest first, the browser `currentBrowserId` marked (decision 37). */
  async list(userId: string, currentBrowserId: string | undefined): Promise<SessionListing[]> {
    const current = currentBrowserId === undefined ? undefined : sha256(currentBrowserId);
    const sessions = await this.sessions.listByUser(userId, this.clock.now());
    return sessions.map((session) => ({
      sid: session.sid ?? sessionId(session.hash),
      current: session.hash === current,
      createdAt: session.createdAt,
      lastActiveAt: session.lastActiveAt ?? sessionAuthenticationTime(session),
      ...(session.userAgent === undefined ? {} : { userAgent: session.userAgent }),
      ...(session.address === undefined ? {} : { address: session.address }),
    }));
  }

  /**
   * Ends the user's session named by its `sid` ("Sign out" on the security page, and an operator's
   * DELETE /v1/users/{id}/sessions/{sid}). Only one of the user's own: another user's `sid` names nothing
   * here and ends nothing (decision 37). With `context`, the ending and its `session.ended` event are one
   * transaction (decision 41); the event names the session by its `sid`, never by its key.
   */
  async endOf(userId: string, sid: string, context?: AuditContext): Promise<boolean> {
    const end = async (store: BrowserSessionStore) => {
      const sessions = await store.listByUser(userId, this.clock.now());
      const found = sessions.find((session) => (session.sid ?? sessionId(session.hash)) === sid);
      return found !== undefined && (await store.deleteOfUser(userId, found.hash));
    };
    if (context === undefined || this.audit === undefined) return end(this.sessions);
    return this.audit.change(context, async (storage, record) => {
      const ended = await end(storage.browserSessions);
      if (ended) await record({ type: 'session.ended', userId, detail: `sid ${sid}` });
      return ended;
    });
  }

  /**
   * Ends every session of the user ("Sign out everywhere", an operator's DELETE
   * /v1/users/{id}/sessions); how many ended. Grants stay: they are revoked one by one, or all at once
   * by a new password (decision 12). Recorded as one `session.ended` event with the count.
   */
  async endAll(userId: string, context?: AuditContext): Promise<number> {
    if (context === undefined || this.audit === undefined) return this.sessions.deleteByUser(userId);
    return this.audit.change(context, async (storage, record) => {
      const ended = await storage.browserSessions.deleteByUser(userId);
      if (ended > 0) await record({ type: 'session.ended', userId, detail: `all: ${ended} session(s)` });
      return ended;
    });
  }

  /** Ends every session of the user but this browser's ("Sign out everywhere else"); how many ended. */
  async endOthers(userId: string, currentBrowserId: string, context?: AuditContext): Promise<number> {
    if (context === undefined || this.audit === undefined) {
      return this.sessions.deleteOthersOfUser(userId, sha256(currentBrowserId));
    }
    return this.audit.change(context, async (storage, record) => {
      const ended = await storage.browserSessions.deleteOthersOfUser(userId, sha256(currentBrowserId));
      if (ended > 0)
        await record({ type: 'session.ended', userId, detail: `all others: ${ended} session(s)` });
      return ended;
    });
  }

  /** How many live sessions the user has (`gatehouse users show`). */
  async count(userId: string): Promise<number> {
    return (await this.sessions.listByUser(userId, this.clock.now())).length;
  }

  /**
   * Who is signed in behind a browser id, if its session is live and the user still exists: the user,
   * and the sign-in as OpenID Connect reports it (Core §2 `auth_time`, `amr` and `acr`, derived from the
   * methods the session records, decision 30; the session's `sid`, sessionId). One store read for both.
   */
  async signedIn(browserId: string | undefined): Promise<SignedInBrowser | undefined> {
    if (browserId === undefined || browserId === '') return undefined;
    const found = await this.sessions.signedIn(sha256(browserId), this.clock.now());
    return found && (await this.active(found)) ? signedInBrowser(found) : undefined;
  }

  /**
   * signedIn, and in the same read the user's grants to `clientId` (newest first): what /authorize
   * needs to answer from a remembered consent (AuthorizationService.next's `grants`).
   */
  async signedInFor(
    browserId: string | undefined,
    clientId: string,
  ): Promise<(SignedInBrowser & { grants: Grant[] }) | undefined> {
    if (browserId === undefined || browserId === '') return undefined;
    const found = await this.sessions.signedInWithGrants(sha256(browserId), this.clock.now(), clientId);
    return found && (await this.active(found))
      ? { ...signedInBrowser(found), grants: found.grants }
      : undefined;
  }

  /**
   * Whether a live session still signs its user in: not once the user is disabled (decision 37; their
   * sessions were ended then, this also covers one started in the same instant). Records the use when
   * the last recorded one is older than ACTIVITY_WRITE_INTERVAL: one conditional write every few
   * minutes per session, never one per page.
   */
  private async active({ session, user }: SignedInSession): Promise<boolean> {
    if (user.disabled) return false;
    const now = this.clock.now();
    const staleBefore = now - ACTIVITY_WRITE_INTERVAL;
    if ((session.lastActiveAt ?? 0) < staleBefore) {
      await this.sessions.touch(session.hash, now, staleBefore);
    }
    return true;
  }

  /** The signed-in user behind a browser id (signedIn). */
  async user(browserId: string | undefined): Promise<User | undefined> {
    return (await this.signedIn(browserId))?.user;
  }

  /** The sign-in behind a browser id, as OpenID Connect reports it (signedIn). */
  async authentication(browserId: string | undefined): Promise<Authentication | undefined> {
    return (await this.signedIn(browserId))?.authentication;
  }

  async end(browserId: string | undefined): Promise<void> {
    if (browserId !== undefined && browserId !== '') await this.sessions.delete(sha256(browserId));
  }
}

function signedInBrowser({ session, user }: SignedInSession): SignedInBrowser {
  const { authTime, amr, acr } = assurance(sessionAuthentications(session));
  return {
    user,
    authentication: { userId: user.id, authTime, sid: session.sid ?? sessionId(session.hash), amr, acr },
  };
}

/**
 * A browser session's `sid` (OpenID Connect Front-Channel Logout 1.0 §3, carried by ID tokens): stable
 * for the session and safe to publish. It is a hash of the stored hash of the cookie, so it leads
 * neither to the cookie nor to the stored row's key.
 */
export function sessionId(sessionHash: string): string {
  return sha256(`sid:${sessionHash}`);
}

/** When the session's latest sign-in was made (its `auth_time`). */
function sessionAuthenticationTime(session: BrowserSession): number {
  return Math.max(...sessionAuthentications(session).map((entry) => entry.at));
}
