import assert from 'node:assert/strict';
import { FormBrowser } from '../helpers/form-browser.js';
import type { HttpResponse } from '../helpers/https-client.js';
import type { TestServer } from '../helpers/server.js';
import {
  findSubmitter,
  formEntries,
  parseForms,
  textOf,
  type HtmlForm,
  type Submitter,
} from './html-forms.js';
import {
  outcome,
  type AuthorizationOutcome,
  type BrowserOptions,
  type LogoutOutcome,
  type RpRequest,
  type UserAgent,
  type UserPage,
} from './user-agent.js';

// The user's browser without a browser: Gatehouse's pages fetched over HTTPS with a cookie jar
// (FormBrowser), each form submitted with the entries a browser would send for the button the user
// presses. It makes the requests Chromium makes for the same clicks, at a small part of the cost (no
// process, no rendering), so most modules use it; what only a browser shows (scripts run under the
// page's policy, the fragment kept across a redirect) is checked where a module runs in Chromium
// (browser-agent.ts; modules.ts says which).

/** The page where Gatehouse refuses a request without redirecting (src/http/ui/routes/authorize-routes.ts). */
const ERROR_HEADING = 'This request cannot be completed';

/** The end_session_endpoint's final pages (src/http/ui/pages/logout-page.ts, routes/logout-routes.ts). */
const SIGNED_OUT_HEADING = 'You are signed out';
const LOGOUT_REFUSED_HEADING = 'This sign-out request cannot be completed';

/** More requests and pages than any flow of the suite takes: a loop fails instead of running on. */
const MAX_HOPS = 16;
const MAX_PAGES = 6;

function urlencoded(entries: Record<string, string[]>): URLSearchParams {
  const form = new URLSearchParams();
  for (const [name, values] of Object.entries(entries)) for (const value of values) form.append(name, value);
  return form;
}

/** The markup of a page's main part (its header holds the signed-in user's forms). */
const mainOf = (page: string): string => /<main\b[^>]*>([\s\S]*?)<\/main>/i.exec(page)?.[1] ?? '';

/** The text of a page's first-level heading. */
const headingOf = (page: string): string => textOf(/<h1\b[^>]*>([\s\S]*?)<\/h1>/i.exec(page)?.[1] ?? '');

export class FormAgent implements UserAgent {
  private readonly forms: FormBrowser;
  private readonly origin: string;

  constructor(server: TestServer) {
    this.forms = new FormBrowser(server);
    this.origin = new URL(server.http.baseUrl).origin;
  }

  async browse(url: string, options: BrowserOptions = {}): Promise<AuthorizationOutcome> {
    const target = new URL(url);
    const pages: UserPage[] = [];
    let res =
      options.method === 'POST'
        ? await this.forms.post(target.pathname, Object.fromEntries(target.searchParams))
        : await this.forms.get(target.pathname + target.search);
    for (let hop = 0; hop < MAX_HOPS; hop++) {
      if (res.status >= 300 && res.status < 400) {
        const location = new URL(String(res.headers.location), this.origin);
        if (location.origin !== this.origin) {
          // A redirect off Gatehouse: to the relying party, which gets the URL without its fragment.
          const callback = this.request('GET', location, undefined);
          return outcome(pages, callback, location);
        }
        res = await this.forms.get(location.pathname + location.search);
        continue;
      }
      const forms = parseForms(res.text);
      const heading = headingOf(res.text);
      if (heading === ERROR_HEADING)
        assert.fail(`Gatehouse showed an error page: ${textOf(mainOf(res.text))}`);
      assert.equal(res.status, 200, `a page of ${res.status}: ${heading}`);
      const response = forms.find((form) => form.id === 'authorization-response');
      if (response !== undefined) {
        // The form_post page: its script submits this form at once (src/http/ui/browser/form-post.ts).
        const action = new URL(response.action, this.origin);
        const callback = this.request(response.method.toUpperCase(), action, response);
        return outcome(pages, callback, action);
      }
      // As many pages as BrowserAgent answers: a sign-in refused again and again fails here.
      assert.ok(pages.length < MAX_PAGES, `still no answer after the pages ${pages.join(', ')}`);
      const continueAs = findSubmitter(forms, /^Continue as /);
      const allow = findSubmitter(forms, /^Allow$/);
      if (continueAs !== undefined) {
        pages.push('choose-account');
        res = await this.submit(continueAs);
      } else if (allow !== undefined) {
        pages.push('consent');
        const deny = findSubmitter(forms, /^Deny$/);
        assert.ok(deny, 'the consent page has a Deny button');
        res = await this.submit(options.consent === 'deny' ? deny : allow);
      } else {
        const signIn = findSubmitter(forms, /^Sign in$/);
        assert.ok(signIn, `a page the user cannot answer: ${heading}`);
        pages.push('sign-in');
        assert.ok(options.user, 'a sign-in page came, and the test has no user to sign in as');
        const shown = signIn.form.controls.find((control) => control.name === 'username');
        options.onSignInPage?.({ username: shown?.value ?? '' });
        res = await this.submit(signIn, {
          username: options.user.user.username,
          password: options.user.password,
        });
      }
    }
    assert.fail(`no answer for the relying party after ${MAX_HOPS} requests`);
  }

  async endSession(url: string): Promise<LogoutOutcome> {
    const target = new URL(url);
    let res = await this.forms.get(target.pathname + target.search);
    let confirmed = false;
    for (let hop = 0; hop < MAX_HOPS; hop++) {
      if (res.status >= 300 && res.status < 400) {
        const location = new URL(String(res.headers.location), this.origin);
        if (location.origin !== this.origin) {
          return { confirmed, returned: this.request('GET', location, undefined), heading: undefined };
        }
        res = await this.forms.get(location.pathname + location.search);
        continue;
      }
      const heading = headingOf(res.text);
      // The confirmation's own button, in the page's main part (the header's is left out there).
      const signOut = confirmed ? undefined : findSubmitter(parseForms(mainOf(res.text)), /^Sign out$/);
      if (signOut === undefined) {
        // Where Chromium's endSession stops too: signed out, or (before any confirmation) refused.
        const final = confirmed ? [SIGNED_OUT_HEADING] : [SIGNED_OUT_HEADING, LOGOUT_REFUSED_HEADING];
        assert.ok(final.includes(heading), `an unexpected page: ${heading}`);
        return { confirmed, returned: undefined, heading };
      }
      assert.match(heading, /^Sign out of /);
      confirmed = true;
      res = await this.submit(signOut);
    }
    assert.fail(`no final page after ${MAX_HOPS} requests`);
  }

  /** The request a browser makes of the relying party: the URL without its fragment, a form's body. */
  private request(method: string, url: URL, form: HtmlForm | undefined): RpRequest {
    const body = form === undefined ? undefined : urlencoded(formEntries(form, undefined));
    if (method === 'POST') {
      return { method, url: url.pathname + url.search, contentType: form?.enctype, form: body };
    }
    // A form of method GET puts its entries in the query, in place of the action's (HTML §4.10.21.3).
    const search = body === undefined ? url.search : `?${body.toString()}`;
    return { method, url: url.pathname + search, contentType: undefined, form: undefined };
  }

  /** Presses `submitter`: a POST of its form to Gatehouse, with what the user typed. */
  private submit({ form, button }: Submitter, filled: Record<string, string> = {}): Promise<HttpResponse> {
    assert.equal(form.method, 'post', 'Gatehouse’s forms are posted');
    const action = new URL(form.action, this.origin);
    assert.equal(action.origin, this.origin, 'a form of Gatehouse’s goes to Gatehouse');
    return this.forms.post(action.pathname + action.search, formEntries(form, button, filled));
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
