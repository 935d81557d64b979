/**
 * Whether a caller-supplied key can name a stored row at all. PostgreSQL refuses text containing NUL
 * with an error (a 500 if let through), and no stored id, user name or scope contains one, so such a
 * key simply matches nothing, on both backends alike.
 */
export function isLookupKey(key: string): boolean {
  return !key.includes('\u0000');
}
