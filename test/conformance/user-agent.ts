import type { User } from '../../src/core/model.js';
import type { SiteRequest } from '../helpers/chromium.js';

// What a module asks of the user's browser, whichever plays it: Chromium (browser-agent.ts), or the
// form agent (form-agent.ts), which submits Gatehouse's pages as a browser would without rendering them.

export type RpRequest = SiteRequest;

export interface TestUser {
  user: User;
  password: string;
}

/** The pages the user met on the way back to the relying party. */
export type UserPage = 'sign-in' | 'choose-account' | 'consent';

export interface AuthorizationOutcome {
  pages: UserPage[];
  /** The relying party's request that ended the flow. */
  callback: RpRequest;
  /** Where the browser ended up (its fragment included). */
  landed: URL;
  query: URLSearchParams;
  fragment: URLSearchParams;
  /** The form of a POST (form_post), else empty. */
  form: URLSearchParams;
}

export interface BrowserOptions {
  /** The user to sign in as, when a sign-in page comes. */
  user?: TestUser;
  /** What to answer on the consent page (allow by default). */
  consent?: 'allow' | 'deny';
  /** Looks at the sign-in page before the user fills it in: what its Username field holds. */
  onSignInPage?: (fields: { username: string }) => void;
  /**
   * How the request reaches the authorization endpoint (Core §3.1.2.1 allows both): a GET of the URL
   * (the default), or its parameters as a form POSTed from the relying party's page.
   */
  method?: 'GET' | 'POST';
}

/** What came of a request to the end_session_endpoint (RP-Initiated Logout 1.0 §2, §3). */
export interface LogoutOutcome {
  /** The confirmation page was shown and "Sign out" pressed. */
  confirmed: boolean;
  /** The relying party's request, when the browser was sent back. */
  returned: RpRequest | undefined;
  /** The OP's final page, when the browser stayed there: its heading. */
  heading: string | undefined;
}

/** One user's browser: its own cookies. */
export interface UserAgent {
  /**
   * Opens `url` and plays the user: signs in when asked, allows (or denies) on the consent page,
   * continues as the signed-in user on the account choice, until the relying party has the response.
   */
  browse(url: string, options?: BrowserOptions): Promise<AuthorizationOutcome>;
  /**
   * Opens the end_session_endpoint's `url`: confirms on Gatehouse's page when it asks, then stops at
   * the relying party or at Gatehouse's final page.
   */
  endSession(url: string): Promise<LogoutOutcome>;
  close(): Promise<void>;
}

/** The outcome of a flow that ended with `callback`, the browser at `landed`. */
export function outcome(pages: UserPage[], callback: RpRequest, landed: URL): AuthorizationOutcome {
  return {
    pages,
    callback,
    landed,
    query: landed.searchParams,
    fragment: new URLSearchParams(landed.hash.slice(1)),
    form: callback.form ?? new URLSearchParams(),
  };
}
