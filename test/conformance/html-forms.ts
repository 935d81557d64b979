// The forms of a page of Gatehouse's, read from its HTML as a browser's form submission sees them
// (HTML Living Standard §4.10.21.4, constructing the entry list), for the form agent (form-agent.ts).
// Gatehouse writes its pages from templates that quote every attribute value (src/http/ui/html.ts), so
// a tag reader suffices; this is no general HTML parser.

/** A control of a form: an input, a select (its chosen option's value) or a submit button. */
interface Control {
  tag: 'input' | 'select' | 'button';
  type: string;
  name: string | undefined;
  value: string;
  checked: boolean;
  /** A button's text, whitespace collapsed. */
  text: string;
}

export interface HtmlForm {
  id: string | undefined;
  method: string;
  /** How a POST encodes the entries (HTML §4.10.18.6; application/x-www-form-urlencoded by default). */
  enctype: string;
  /** The action as written (Gatehouse's are paths, or the client's redirect URI for form_post). */
  action: string;
  controls: Control[];
}

/** A submit button of a form, found by its text. */
export interface Submitter {
  form: HtmlForm;
  button: Control;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name.startsWith('#x') || name.startsWith('#X'))
      return String.fromCodePoint(parseInt(name.slice(2), 16));
    if (name.startsWith('#')) return String.fromCodePoint(Number(name.slice(1)));
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

function attributes(source: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const match of source.matchAll(/([^\s=/>]+)(?:\s*=\s*"([^"]*)")?/g)) {
    found.set((match[1] ?? '').toLowerCase(), decodeEntities(match[2] ?? ''));
  }
  return found;
}

/** The text of markup: tags dropped, entities decoded, whitespace collapsed. */
export function textOf(markup: string): string {
  return decodeEntities(markup.replace(/<[^>]*>/g, ' '))
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * The page's forms and their controls. A `noscript` element's content is text to a browser that runs
 * scripts (HTML §4.12.2), so its buttons are none of the form's.
 */
export function parseForms(page: string): HtmlForm[] {
  const markup = page.replace(/<noscript\b[\s\S]*?<\/noscript>/gi, '');
  const forms: HtmlForm[] = [];
  for (const match of markup.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)) {
    const attrs = attributes(match[1] ?? '');
    const body = match[2] ?? '';
    const controls: Control[] = [];
    const tags = /<(input|button|select)\b([^>]*)>(?:([\s\S]*?)<\/\1>)?/gi;
    for (const control of body.matchAll(tags)) {
      const tag = (control[1] ?? '').toLowerCase() as Control['tag'];
      const own = attributes(control[2] ?? '');
      const content = control[3] ?? '';
      let value = own.get('value') ?? '';
      if (tag === 'select') {
        // The selected option, else the first (HTML §4.10.7, the selectedness setting algorithm).
        const options = [...content.matchAll(/<option\b([^>]*)>/gi)].map((option) =>
          attributes(option[1] ?? ''),
        );
        const chosen = options.find((option) => option.has('selected')) ?? options[0];
        value = chosen?.get('value') ?? '';
      }
      controls.push({
        tag,
        type: (own.get('type') ?? (tag === 'button' ? 'submit' : 'text')).toLowerCase(),
        name: own.get('name'),
        value,
        checked: own.has('checked'),
        text: tag === 'button' ? textOf(content) : '',
      });
    }
    forms.push({
      id: attrs.get('id'),
      method: (attrs.get('method') ?? 'get').toLowerCase(),
      enctype: (attrs.get('enctype') ?? 'application/x-www-form-urlencoded').toLowerCase(),
      action: attrs.get('action') ?? '',
      controls,
    });
  }
  return forms;
}

/** The submit button whose text matches, with its form. */
export function findSubmitter(forms: readonly HtmlForm[], text: RegExp): Submitter | undefined {
  for (const form of forms) {
    const button = form.controls.find(
      (control) => control.tag === 'button' && control.type === 'submit' && text.test(control.text),
    );
    if (button) return { form, button };
  }
  return undefined;
}

/**
 * The entries a browser submits for `form` (HTML §4.10.21.4): every named control but unchecked boxes
 * and buttons other than the submitter; `filled` holds what the user typed into fields by name.
 */
export function formEntries(
  form: HtmlForm,
  submitter: Control | undefined,
  filled: Record<string, string> = {},
): Record<string, string[]> {
  const entries: Record<string, string[]> = {};
  const add = (name: string, value: string) => {
    (entries[name] ??= []).push(value);
  };
  for (const control of form.controls) {
    if (control.name === undefined || control.name === '') continue;
    if (control.tag === 'button') {
      if (control === submitter) add(control.name, control.value);
      continue;
    }
    if (control.type === 'checkbox' || control.type === 'radio') {
      if (control.checked) add(control.name, control.value === '' ? 'on' : control.value);
      continue;
    }
    if (['submit', 'image', 'reset', 'button', 'file'].includes(control.type)) continue;
    add(control.name, filled[control.name] ?? control.value);
  }
  return entries;
}
