import { html, SafeHtml } from '../../html.js';
import { plainWords, type ApiProblem } from '../../admin/admin-api.js';
import { layout, type PageFrame } from '../layout.js';

/**
 * The admin console's pages (docs/decisions.md, decision 42): server-rendered in the sign-in pages'
 * design language, no script, every form a plain POST with the CSRF token. Everything shown comes
 * from /v1 answers, escaped by `html`.
 */

export type ConsoleSection =
  | 'dashboard'
  | 'clients'
  | 'registrations'
  | 'users'
  | 'grants'
  | 'scopes'
  | 'resources'
  | 'identity-providers'
  | 'signing-keys'
  | 'audit';

export const SECTIONS: readonly { id: ConsoleSection; path: string; label: string }[] = [
  { id: 'dashboard', path: '/admin', label: 'Dashboard' },
  { id: 'clients', path: '/admin/clients', label: 'Clients' },
  { id: 'registrations', path: '/admin/registrations', label: 'Registrations' },
  { id: 'users', path: '/admin/users', label: 'Users' },
  { id: 'grants', path: '/admin/grants', label: 'Grants' },
  { id: 'scopes', path: '/admin/scopes', label: 'Scopes' },
  { id: 'resources', path: '/admin/resources', label: 'Resources' },
  { id: 'identity-providers', path: '/admin/identity-providers', label: 'Identity providers' },
  { id: 'signing-keys', path: '/admin/signing-keys', label: 'Signing keys' },
  { id: 'audit', path: '/admin/audit', label: 'Audit log' },
];

export interface ConsoleFrame extends PageFrame {
  csrfToken: string;
  /** The administrator has no second factor and the console does not require one: say so on every page. */
  secondFactorPrompt: boolean;
}

export function consolePage(
  frame: ConsoleFrame,
  section: ConsoleSection,
  title: string,
  body: SafeHtml,
  /** Module scripts of the page, by path under the base path (ConsoleRouter.asset). */
  scripts?: string[],
): string {
  const base = frame.basePath;
  const links = html`${SECTIONS.map(
    (item) =>
      html`<a href="${base}${item.path}" ${new SafeHtml(item.id === section ? 'aria-current="page"' : '')}
        >${item.label}</a
      >`,
  )}`;
  const prompt = frame.secondFactorPrompt
    ? html`<div class="caution" role="note">
        <p>
          Your administrator account has no second factor. Anyone with your password can manage this server.
          <a href="${base}/account/security">Add a second factor</a>.
        </p>
      </div>`
    : '';
  return layout(frame, {
    title: `${title} · Admin`,
    name: `admin-${section}`,
    wide: true,
    navigation: { label: 'Admin console', links },
    body: html`${prompt}${body}`,
    ...(scripts === undefined ? {} : { scripts }),
  });
}

export const csrf = (frame: ConsoleFrame) =>
  html`<input type="hidden" name="csrf_token" value="${frame.csrfToken}" />`;

/** A problem the API answered that names no field of the form: shown above it. */
export function formProblem(problem: ApiProblem | undefined, fields: readonly string[]): SafeHtml | '' {
  if (problem === undefined) return '';
  if (problem.field !== undefined && fields.includes(problem.field.split('.')[0] ?? '')) return '';
  return html`<p class="error" role="alert">${plainWords(problem)}</p>`;
}

/** A labelled field; the API's problem shown next to it when it names it (aria-describedby, aria-invalid). */
export function inputField(options: {
  name: string;
  label: string;
  value: string;
  problem: ApiProblem | undefined;
  hint?: string;
  multiline?: boolean;
  type?: 'text' | 'password';
  required?: boolean;
}): SafeHtml {
  const id = `field-${options.name}`;
  const error = options.problem?.field?.split('.')[0] === options.name ? options.problem : undefined;
  const described = [options.hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  const attributes = new SafeHtml(
    [
      described ? `aria-describedby="${described}"` : '',
      error ? 'aria-invalid="true"' : '',
      options.required ? 'required' : '',
    ].join(' '),
  );
  return html`<div class="field">
    <label for="${id}">${options.label}</label>
    ${
      options.multiline
        ? html`<textarea id="${id}" name="${options.name}" ${attributes}>${options.value}</textarea>`
        : html`<input
            id="${id}"
            name="${options.name}"
            type="${options.type ?? 'text'}"
            value="${options.value}"
            autocomplete="off"
            ${attributes}
          />`
    }
    ${options.hint ? html`<p class="hint" id="${id}-hint">${options.hint}</p>` : ''}
    ${error ? html`<p class="error" id="${id}-error">${plainWords(error)}</p>` : ''}
  </div>`;
}

export function notice(text: string | undefined): SafeHtml | '' {
  return text === undefined ? '' : html`<p class="notice" role="status">${text}</p>`;
}

export function time(iso: string): SafeHtml | string {
  if (iso === '') return '—';
  return html`<time datetime="${iso}">${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC</time>`;
}

/** "Showing 1–20 of 45", with Previous and Next as links (the API's limit and offset). */
export function pager(
  base: string,
  query: Record<string, string>,
  offset: number,
  limit: number,
  total: number,
) {
  const link = (to: number, text: string) => {
    const params = new URLSearchParams({ ...query, offset: String(to) });
    return html`<a href="${base}?${params.toString()}">${text}</a>`;
  };
  const shown = total === 0 ? 'None' : `Showing ${offset + 1}–${Math.min(offset + limit, total)} of ${total}`;
  return html`<nav class="pager" aria-label="Pages">
    <span>${shown}</span>
    ${offset > 0 ? link(Math.max(0, offset - limit), 'Previous') : ''}
    ${offset + limit < total ? link(offset + limit, 'Next') : ''}
  </nav>`;
}

export function ageInDays(iso: string, now: number): string {
  const days = Math.floor((now - Date.parse(iso) / 1000) / 86400);
  return Number.isFinite(days) ? (days <= 0 ? 'today' : days === 1 ? '1 day' : `${days} days`) : '—';
}

/**
 * A page that asks before a change that cannot be undone (delete, revoke, reset): the question as its
 * heading, what it is about, a caution saying what it breaks, and a form of one red button (with the
 * CSRF token and any hidden fields) beside "Cancel".
 */
export function confirmationPage(
  frame: ConsoleFrame,
  section: ConsoleSection,
  page: {
    title: string;
    heading: SafeHtml | string;
    about?: SafeHtml;
    caution: SafeHtml;
    action: string;
    button: string;
    cancel: string;
    hidden?: Record<string, string>;
  },
): string {
  const body = html`<h1>${page.heading}</h1>
    ${page.about ?? ''}
    <div class="caution">${page.caution}</div>
    <form method="post" action="${page.action}" class="actions">
      ${csrf(frame)}
      ${Object.entries(page.hidden ?? {}).map(
        ([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`,
      )}
      <button type="submit" class="danger">${page.button}</button>
      <a class="button" href="${page.cancel}">Cancel</a>
    </form>`;
  return consolePage(frame, section, page.title, body);
}

/** What an administrator sees when the API refused the console (a problem outside any form). */
export function consoleErrorPage(frame: ConsoleFrame, section: ConsoleSection, problem: ApiProblem): string {
  const body = html`<h1>That did not work</h1>
    <p class="error" role="alert">${plainWords(problem)}</p>`;
  return consolePage(frame, section, 'Error', body);
}
