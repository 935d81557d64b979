import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Authentication } from '../../core/sign-in/assurance.js';
import { BrowserSessions, type SignedInBrowser } from '../../core/sign-in/browser-sessions.js';
import type { Grant, User } from '../../core/model.js';
import { sha256 } from '../../shared/crypto.js';
import type { CsrfTokens } from './csrf.js';

/**
 * The browser cookie: an opaque random id. `__Host-` makes the browser insist on Secure, Path=/ and
 * no Domain, so no sibling host can plant or read it. SameSite=Lax still sends it on the top-level
 * navigation from the client to /authorize, and never on cross-site POSTs.
 */
export const BROWSER_COOKIE = '__Host-gatehouse';
const BROWSER_ID = /^bs_[A-Za-z0-9_-]{43}$/;
/**
 * Set by a sign-in (or an account choice) made for one authorization request, for that request and
 * this browser's new session only, and spent by the /authorize it continues to: it tells /authorize
 * that what prompt=login, max_age or prompt=select_account asked for has just been done (Core
 * §3.1.2.1), so it does not ask again. A MAC, so nobody but this server can make one.
 */
export const INTERACTION_COOKIE = '__Host-gatehouse-signed-in-for';
const INTERACTION = 'interaction';
const DEVICE_CODE = 'device-code';

export interface BrowserContext {
  browserId: string;
  user: User | undefined;
  /** When and in which session `user` signed in (read with the user: OpenID Connect requests need it). */
  authentication: Authentication | undefined;
  /** The user's grants to the client load() was asked about (`grantsOf`), read with the user. */
  grants: Grant[] | undefined;
  readonly csrfToken: string;
}

/** A browser with someone signed in (the account pages' view of it). */
export type SignedInContext = BrowserContext & { user: User; authentication: Authentication };

export class BrowserContexts {
  constructor(
    private readonly sessions: BrowserSessions,
    private readonly csrf: CsrfTokens,
  ) {}

  /** The cookie's id, only when well-formed. */
  browserId(request: FastifyRequest): string | undefined {
    const value = request.cookies[BROWSER_COOKIE];
    return value !== undefined && BROWSER_ID.test(value) ? value : undefined;
  }

  /**
   * Who is on the other end; gives a browser without a cookie a fresh id (so forms can carry a token).
   * With `grantsOf` (a client id), the same read brings the signed-in user's grants to that client.
   */
  async load(
    request: FastifyRequest,
    reply: FastifyReply,
    options: { grantsOf?: string } = {},
  ): Promise<BrowserContext> {
    let browserId = this.browserId(request);
    let signedIn: SignedInBrowser | undefined;
    let grants: Grant[] | undefined;
    if (options.grantsOf === undefined) {
      signedIn = await this.sessions.signedIn(browserId);
    } else {
      const withGrants = await this.sessions.signedInFor(browserId, options.grantsOf);
      signedIn = withGrants;
      grants = withGrants?.grants;
    }
    if (browserId === undefined) {
      browserId = BrowserSessions.newBrowserId();
      this.setCookie(reply, browserId);
    }
    // Computed when a page needs it: a remembered consent answers /authorize with a bare redirect.
    const csrf = this.csrf;
    const id = browserId;
    let csrfToken: string | undefined;
    return {
      browserId,
      user: signedIn?.user,
      authentication: signedIn?.authentication,
      grants,
      get csrfToken() {
        return (csrfToken ??= csrf.issue(id));
      },
    };
  }

  /**
   * When and in which session the browser's user signed in (OpenID Connect requests need it), as
   * load() read it with the user: no second read.
   */
  authentication(browser: BrowserContext): Promise<Authentication | undefined> {
    return Promise.resolve(browser.authentication);
  }

  /** Records that this browser's session was just signed in (or chosen) for the request `query`. */
  markInteraction(reply: FastifyReply, browserId: string, query: string): void {
    reply.setCookie(INTERACTION_COOKIE, this.csrf.bound(INTERACTION, `${browserId}:${sha256(query)}`), {
      path: '/',
      secure: true,
      httpOnly: true,
      sameSite: 'lax',
    });
  }

  /**
   * Whether the browser signed in (or chose its account) for exactly this request in its current
   * session; spends the mark either way, so the next request with the same parameters asks again.
   */
  takeInteraction(request: FastifyRequest, reply: FastifyReply, browserId: string, query: string): boolean {
    const token = request.cookies[INTERACTION_COOKIE];
    if (token === undefined) return false;
    reply.clearCookie(INTERACTION_COOKIE, { path: '/', secure: true, httpOnly: true, sameSite: 'lax' });
    return this.csrf.verifyBound(INTERACTION, `${browserId}:${sha256(query)}`, token);
  }

  /**
   * The ticket of a device's user code (in normal form) that passed the verification page's throttled
   * check (RFC 8628 §5.1), in this browser: a MAC, so only a code this server checked reaches the
   * consent page, which reads it without counting. Bound to the browser id as the CSRF token is: a
   * consent link made in one browser opens nothing in another, which must type the code itself (the
   * device flow's defence against remote phishing, RFC 8628 §5.4). Browser ids hold no colon.
   */
  deviceTicket(browserId: string, userCode: string): string {
    return this.csrf.bound(DEVICE_CODE, `${browserId}:${userCode}`);
  }

  verifyDeviceTicket(browserId: string, userCode: string, ticket: unknown): boolean {
    return this.csrf.verifyBound(DEVICE_CODE, `${browserId}:${userCode}`, ticket);
  }

  /** Whether a POST carries the CSRF token of this browser. */
  verifyCsrf(request: FastifyRequest, token: unknown): boolean {
    return this.csrf.verify(this.browserId(request), token);
  }

  setCookie(reply: FastifyReply, browserId: string): void {
    reply.setCookie(BROWSER_COOKIE, browserId, {
      path: '/',
      secure: true,
      httpOnly: true,
      sameSite: 'lax',
    });
  }
}
