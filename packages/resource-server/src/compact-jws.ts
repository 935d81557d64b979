/**
 * The parts of a compact JWS (RFC 7515 §7.1), decoded strictly: what the library's synchronous
 * verifiers (jwt-verifier.ts, dpop-proof.ts) share. Each is held to jose by a differential test.
 */

// jose's decoder: invalid UTF-8 is an error, not U+FFFD.
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The bytes of a canonical base64url string, or undefined. Node's decoder skips characters it does
 * not know and accepts both alphabets and padding; encoding the result again and comparing refuses all
 * of that, and unused low bits in the last character, so one token has exactly one spelling.
 */
export function decodeCanonical(part: string): Buffer | undefined {
  const bytes = Buffer.from(part, 'base64url');
  return bytes.toString('base64url') === part ? bytes : undefined;
}

/** A base64url part holding a JSON object in strict UTF-8 (header or claims). */
export function parseObject(part: string): Record<string, unknown> | undefined {
  const bytes = decodeCanonical(part);
  if (bytes === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(bytes));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return value as Record<string, unknown>;
}

/** A `typ` as jose compares it (RFC 7515 §4.1.9): case-insensitive, "application/" optional. */
export function mediaType(typ: string): string {
  const lower = typ.toLowerCase();
  return typ.includes('/') ? lower : `application/${lower}`;
}
