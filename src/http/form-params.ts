import { invalidRequest, OAuthError } from '../core/errors.js';

export const FORM_CONTENT_TYPE = 'application/x-www-form-urlencoded';

/** The media type of a Content-Type header, lower-cased, without parameters. */
export function mediaType(header: string | undefined): string | undefined {
  // Every token request asks this, usually of exactly the form type: no split, trim or lower-casing.
  if (header === FORM_CONTENT_TYPE) return header;
  return header?.split(';', 1)[0]?.trim().toLowerCase();
}

/** Refuses anything but a form body: 415, with the OAuth error body. */
export function requireFormBody(contentType: string | undefined): void {
  if (mediaType(contentType) !== FORM_CONTENT_TYPE) {
    throw new OAuthError('invalid_request', `the body must be ${FORM_CONTENT_TYPE}`, 415);
  }
}

/**
 * Flattens a parsed form into single values. RFC 6749 §3.1/§3.2: parameters MUST NOT be included
 * more than once, and the parser gives repeated keys as arrays, so an array is an error here. The
 * names in `repeatable` (a parameter an RFC lets repeat, such as RFC 8707's `resource`) are left out:
 * read them with repeatedParam.
 */
export function singleValuedParams(
  parsed: unknown,
  repeatable: readonly string[] = [],
): Record<string, string | undefined> {
  const params: Record<string, string | undefined> = Object.create(null) as Record<string, string>;
  if (parsed === undefined || parsed === null) return params;
  for (const [key, value] of Object.entries(parsed as Record<string, unknown>)) {
    if (repeatable.includes(key)) continue;
    if (Array.isArray(value)) throw invalidRequest(`parameter repeated: ${key.slice(0, 64)}`);
    if (typeof value !== 'string') throw invalidRequest('malformed parameters');
    // RFC 6749 §3.1: parameters sent without a value are treated as if omitted.
    params[key] = value === '' ? undefined : value;
  }
  return params;
}

/**
 * Every value of a parameter that may repeat (RFC 8707 §2: `resource`), in the order sent; values
 * sent empty count as omitted (RFC 6749 §3.1). None when it is absent.
 */
export function repeatedParam(parsed: unknown, name: string): string[] {
  if (parsed === undefined || parsed === null) return [];
  const value = (parsed as Record<string, unknown>)[name];
  const values = Array.isArray(value) ? (value as unknown[]) : value === undefined ? [] : [value];
  if (values.some((item) => typeof item !== 'string')) throw invalidRequest('malformed parameters');
  return (values as string[]).filter((item) => item !== '');
}

/**
 * A parsed form as URLSearchParams, repeated parameters kept in order: for checks that must see a
 * repetition themselves (an authorization request's, RFC 6749 §3.1), or where a parameter may repeat.
 */
export function formAsSearchParams(parsed: unknown): URLSearchParams {
  const params = new URLSearchParams();
  if (typeof parsed === 'object' && parsed !== null) {
    for (const [name, value] of Object.entries(parsed as Record<string, unknown>)) {
      for (const item of Array.isArray(value) ? value : [value]) {
        if (typeof item === 'string') params.append(name, item);
      }
    }
  }
  return params;
}
