import unhomoglyph from 'unhomoglyph';

/**
 * Default-ignorable code points (zero-width spaces and joiners, variation selectors, soft hyphens, …)
 * and combining marks (accents, overlays): invisible or near it, so "Gatehouse" with either added
 * still reads as "Gatehouse".
 */
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\p{M}]/gu;

/** Decomposed (NFD), without default-ignorables and combining marks. */
const bare = (text: string): string => text.normalize('NFD').replace(INVISIBLE, '');

/** Every character mapped to its prototype by UTS #39's confusables table, marks removed again. */
const prototypes = (text: string): string => bare(unhomoglyph(bare(text)));

/**
 * A name's skeletons, after Unicode UTS #39 §4 (confusable detection), compared without case:
 * compatibility forms folded first (NFKC: fullwidth "Ｇ" is "G"), then decomposed (NFD),
 * default-ignorables and combining marks removed, and every character mapped to its prototype by the
 * confusables table (Cyrillic "о" and the digit "0" to "o", "1" and "I" to "l", "m" to "rn", …; the
 * `unhomoglyph` package carries the table). Case is folded two ways, since the table is case-sensitive:
 * after the mapping (so "I" has become "l" first, and "lD" looks like "ID") and before it (so "acme id"
 * looks like "Acme ID"), each lowered form mapped again. Two names that share a skeleton look alike.
 * Not for display.
 */
export function nameSkeletons(name: string): string[] {
  const folded = name.normalize('NFKC');
  // A prototype may be a capital ("0" maps to "O"): lowered and mapped once more, every path ends alike.
  const lowered = (text: string) => prototypes(prototypes(text).toLowerCase());
  return [...new Set([lowered(folded), lowered(folded.toLowerCase())])];
}

/** Whether `name` looks like one of `reserved`: they share a skeleton. */
export function looksLikeAny(name: string, reserved: readonly string[]): boolean {
  const skeletons = new Set(nameSkeletons(name));
  return reserved.some((other) => nameSkeletons(other).some((skeleton) => skeletons.has(skeleton)));
}
