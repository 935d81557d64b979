import type { FastifyReply, FastifyRequest } from 'fastify';
import { BrowserSessions } from '../../core/browser-sessions.js';
import type { User } from '../../core/model.js';
import type { CsrfTokens } from './csrf.js';

/**
 * The browser cookie: an opaque random id. `__Host-` makes the browser insist on Secure, Path=/ and
 * no Domain, so no sibling host can plant or read it. SameSite=Lax still sends it on the top-level
 * navigation from the client to /authorize, and never on cross-site POSTs.
 */
export const BROWSER_COOKIE = '__Host-gatehouse';
const BROWSER_ID = /^bs_[A-Za-z0-9_-]{43}$/;

export interface BrowserContext {
  browserId: string;
  user: User | undefined;
  readonly csrfToken: string;
}

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

  /** Who is on the other end; gives a browser without a cookie a fresh id (so forms can carry a token). */
  async load(request: FastifyRequest, reply: FastifyReply): Promise<BrowserContext> {
    let browserId = this.browserId(request);
    const user = await this.sessions.user(browserId);
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
      user,
      get csrfToken() {
        return (csrfToken ??= csrf.issue(id));
      },
    };
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
