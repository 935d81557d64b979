import { html, SafeHtml } from '../html.js';

/** What every page's frame needs: branding, where it is mounted, and who is signed in. */
export interface PageFrame {
  productName: string;
  logoUrl: string | undefined;
  basePath: string;
  /** The signed-in user's name; absent before sign-in. */
  username?: string;
  /** The CSRF token for the sign-out form (present whenever username is). */
  csrfToken?: string;
}

export interface PageOptions {
  title: string;
  /** Names the page for the stylesheet and the playground script. */
  name: string;
  body: SafeHtml;
  scripts?: string[];
  /** Wider layout for the playground. */
  wide?: boolean;
  /**
   * The page is itself the sign-out (RP-Initiated Logout's confirmation): the header's "Sign out",
   * which would end the session without returning to the application, is left out, so the page has
   * one button of that name (WCAG 2.4.6, 3.2.4).
   */
  signOutInPage?: boolean;
  /**
   * The header's links in place of the account's (the admin console's sections, decision 42), under
   * their own landmark name.
   */
  navigation?: { label: string; links: SafeHtml };
}

const current = (isCurrent: boolean) => new SafeHtml(isCurrent ? 'aria-current="page"' : '');

export function layout(frame: PageFrame, page: PageOptions): string {
  const base = frame.basePath;
  const signedIn = frame.username !== undefined;
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>${page.title} · ${frame.productName}</title>
        <link rel="icon" href="${frame.logoUrl ?? `${base}/assets/icon`}" />
        <link rel="stylesheet" href="${base}/assets/style" />
        ${(page.scripts ?? []).map((src) => html`<script type="module" src="${base}${src}"></script>`)}
      </head>
      <body data-page="${page.name}" data-base-path="${base}">
        <a class="skip" href="#main">Skip to content</a>
        <header class="topbar">
          <a class="brand" href="${base}/account/apps"
            ><img src="${frame.logoUrl ?? `${base}/assets/icon`}" alt="" width="28" height="28" /><span
              >${frame.productName}</span
            ></a
          >
          ${
            signedIn
              ? html`<nav aria-label="${page.navigation?.label ?? 'Account'}">
                  ${
                    page.navigation?.links ??
                    html`<a href="${base}/account/apps" ${current(page.name === 'apps')}>Connected apps</a>
                      <a href="${base}/account/security" ${current(page.name === 'security')}>Security</a>
                      <a href="${base}/playground" ${current(page.name === 'playground')}>Playground</a>`
                  }
                  <span class="who" title="Signed in as ${frame.username}">${frame.username}</span>
                  ${
                    page.signOutInPage === true
                      ? ''
                      : html`<form method="post" action="${base}/sign-out" class="inline">
                          <input type="hidden" name="csrf_token" value="${frame.csrfToken}" />
                          <button type="submit" class="link">Sign out</button>
                        </form>`
                  }
                </nav>`
              : ''
          }
        </header>
        <main id="main" class="${page.wide ? 'wide' : 'narrow'}">${page.body}</main>
      </body>
    </html> `.value;
}
