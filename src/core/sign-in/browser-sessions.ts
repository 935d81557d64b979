import type { Clock } from '../../shared/clock.js';
import { randomToken, sha256 } from '../../shared/crypto.js';
import type { Grant, SessionAuthentication, User } from '../model.js';
import type { BrowserSessionStore, SignedInSession } from '../ports.js';
import { assurance, sessionAuthentications, type Authentication } from './assurance.js';

/** A signed-in browser: its user, and the sign-in an OpenID Connect response asserts. */
export interface SignedInBrowser {
  user: User;
  authentication: Authentication;
}

/** How long a browser stays signed in. */
export const BROWSER_SESSION_TTL = 12 * 3600;

/**
 * Signed-in browsers. The cookie carries a random id (256 bits); the store keeps only its SHA-256,
 * so a leaked database does not sign anyone in. Stored, not in memory: several processes share it.
 */
export class BrowserSessions {
  constructor(
    private readonly sessions: BrowserSessionStore,
    private readonly clock: Clock,
    private readonly ttlSeconds: number = BROWSER_SESSION_TTL,
  ) {}

  /** A fresh random browser id, signed in or not (it also anchors the CSRF token before sign-in). */
  static newBrowserId(): string {
    return randomToken('bs_');
  }

  /**
   * Signs the user in under a new browser id (never the old one: session fixation), recording the
   * methods that proved who they are, in the order used (SignInResult's `authentication`, decision 30):
   * a password and then a one-time code are two entries (decision 34), and make the sign-in `mfa`.
   */
  async start(
    userId: string,
    authentications: SessionAuthentication | readonly SessionAuthentication[],
  ): Promise<string> {
    const record = 'method' in authentications ? [authentications] : [...authentications];
    if (record.length === 0) throw new Error('a sign-in records at least one method');
    const id = BrowserSessions.newBrowserId();
    const now = this.clock.now();
    await this.sessions.insert({
      hash: sha256(id),
      userId,
      createdAt: now,
      expiresAt: now + this.ttlSeconds,
      authentications: record,
    });
    return id;
  }

  /**
   * Who is signed in behind a browser id, if its session is live and the user still exists: the user,
   * and the sign-in as OpenID Connect reports it (Core §2 `auth_time`, `amr` and `acr`, derived from the
   * methods the session records, decision 30; the session's `sid`, sessionId). One store read for both.
   */
  async signedIn(browserId: string | undefined): Promise<SignedInBrowser | undefined> {
    if (browserId === undefined || browserId === '') return undefined;
    const found = await this.sessions.signedIn(sha256(browserId), this.clock.now());
    return found && signedInBrowser(found);
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
    return found && { ...signedInBrowser(found), grants: found.grants };
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
    authentication: { userId: user.id, authTime, sid: sessionId(session.hash), amr, acr },
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
