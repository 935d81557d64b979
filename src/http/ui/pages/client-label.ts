import { html, type SafeHtml } from '../html.js';

/**
 * A client's name as the pages show it. For a client described by a Client ID Metadata Document, the
 * document's host follows it, set apart from the name (decision 46): the name is the client's own claim,
 * which nobody checked; the host is the fact the person can judge it by.
 */
export function clientLabel(name: string, host: string | undefined): SafeHtml {
  return host === undefined
    ? html`${name}`
    : html`${name} <span class="client-host">from <span class="host">${host}</span></span>`;
}

/** The same in plain text, for a page's title. */
export function clientLabelText(name: string, host: string | undefined): string {
  return host === undefined ? name : `${name} from ${host}`;
}
