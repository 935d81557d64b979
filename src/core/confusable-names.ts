import unhomoglyph from 'unhomoglyph';

/**
 * Default-ignorable code points (zero-width spaces and joiners, variation selectors, soft hyphens, …)
 * and combining marks (accents, overlays): invisible or near it, so "Gatehouse" with either added
 * still reads as "Gatehouse".
 */
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\p{M}]/gu;

/**
 * A name's skeleton, after Unicode UTS #39 §4 (confusable detection): compatibility forms folded
 * (NFKC: fullwidth "Ｇ" is "G"), decomposed (NFD), default-ignorables and combining marks removed, every
 * character mapped to its prototype by UTS #39's confusables table (Cyrillic "о" and the digit "0" to
 * "o", "1" and "I" to "l", …; the `unhomoglyph` package carries the table), and compared without case:
 * lowered, and mapped again, since a lowered prototype may have one of its own. Two names whose
 * skeletons are equal look alike. Not for display.
 */
export function nameSkeleton(name: string): string {
  const bare = (text: string) => text.normalize('NFD').replace(INVISIBLE, '');
  const mapped = unhomoglyph(bare(name.normalize('NFKC')));
  return bare(unhomoglyph(bare(mapped).toLowerCase()));
}

/** Whether `name` looks like (has the skeleton of) one of `reserved`. */
export function looksLikeAny(name: string, reserved: readonly string[]): boolean {
  const skeleton = nameSkeleton(name);
  return reserved.some((other) => nameSkeleton(other) === skeleton);
}
