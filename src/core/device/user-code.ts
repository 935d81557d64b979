import { randomInt } from 'node:crypto';
import { sha256 } from '../../shared/crypto.js';

/**
 * User codes of the device authorization grant (RFC 8628 §6.1): short enough to type, from the
 * alphabet §6.1 suggests: twenty consonants, no vowels (A E I O U, nor Y), so no word is spelt by
 * accident and no letter reads as a digit (O and 0, I and 1); shown in upper case, typed in either. Eight of them are 20^8 ≈ 2.6 × 10^10 codes, about 34.5 bits: with
 * wrong codes throttled per source (DeviceAuthorizationService.check) and a code living ten minutes,
 * a guesser's chance of hitting a live one is negligible (§5.1).
 */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
export const USER_CODE_LENGTH = 8;
const NORMAL_FORM = new RegExp(`^[${USER_CODE_ALPHABET}]{${USER_CODE_LENGTH}}$`);

/** A new random user code in normal form (eight letters of the alphabet, no dash). */
export function newUserCode(): string {
  let code = '';
  // randomInt draws without modulo bias, so every letter is equally likely.
  for (let i = 0; i < USER_CODE_LENGTH; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return code;
}

/**
 * A typed code in normal form, or undefined when it cannot be a user code: case is ignored, and so
 * are dashes and white space anywhere (§6.1: "BCDF-GHJK", "bcdf ghjk" and "bcdfghjk" are one code).
 */
export function normaliseUserCode(typed: string): string | undefined {
  // Bounded before any work: a code is 8 letters, a person adds a few dashes or spaces at most.
  if (typed.length > 64) return undefined;
  const code = typed.replace(/[\s-]/g, '').toUpperCase();
  return NORMAL_FORM.test(code) ? code : undefined;
}

/** How the code is shown to people: two groups of four, "BCDF-GHJK". */
export function formatUserCode(normal: string): string {
  return `${normal.slice(0, 4)}-${normal.slice(4)}`;
}

/** What the store keeps of a user code, and looks it up by: the SHA-256 of its normal form. */
export function userCodeHash(normal: string): string {
  return sha256(`user-code:${normal}`);
}
