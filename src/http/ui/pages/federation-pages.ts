import { html } from '../html.js';
import { layout, type PageFrame } from './layout.js';

export interface FederationFailureInput {
  title: string;
  /** What happened, in plain words (never upstream HTML, never a secret). */
  message: string;
  /** Where to start again: the sign-in page (keeping `next`), or the security page. */
  back: { href: string; label: string };
}

/**
 * An upstream sign-in that did not end in one (decision 40): what happened, and the way back. Every
 * failure of the upstream flow lands here, never on a server error and never signed in.
 */
export function federationFailurePage(frame: PageFrame, input: FederationFailureInput): string {
  const body = html`<h1>${input.title}</h1>
    <p role="alert">${input.message}</p>
    <p><a href="${input.back.href}">${input.back.label}</a></p>`;
  return layout(frame, { title: input.title, name: 'federation-failure', body });
}
