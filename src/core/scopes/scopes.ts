import { invalidScope } from '../errors.js';

// RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

export function isValidScopeName(name: string): boolean {
  return SCOPE_TOKEN.test(name);
}

/** Parses a space-delimited scope parameter into unique names, in the order given. */
export function parseScope(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const names = value.split(' ').filter((part) => part.length > 0);
  for (const name of names) {
    if (!isValidScopeName(name)) throw invalidScope(`malformed scope name`);
  }
  return [...new Set(names)];
}

export function formatScope(scope: readonly string[]): string {
  return scope.join(' ');
}

export function isSubset(requested: readonly string[], allowed: readonly string[]): boolean {
  const allowedSet = new Set(allowed);
  return requested.every((name) => allowedSet.has(name));
}

/**
 * The scope a request ends up with: the requested scope, which must lie inside `allowed`,
 * or all of `allowed` when nothing was requested (RFC 6749 §3.3 lets the server pick a default).
 */
export function resolveScope(requested: string[] | undefined, allowed: readonly string[]): string[] {
  if (requested === undefined || requested.length === 0) return [...allowed];
  const outside = requested.filter((name) => !allowed.includes(name));
  if (outside.length > 0) {
    throw invalidScope(`scope not allowed for this client: ${outside.join(' ')}`);
  }
  return requested;
}
