/** Levenshtein distance, for "did you mean" (names are short: the quadratic cost does not matter). */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        (previous[j] ?? 0) + 1,
        (current[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/**
 * The candidate nearest to `name`, when one is within `maxDistance` edits; the first of equals wins.
 * Used for mistyped environment variables, commands and flags alike.
 */
export function closestName(name: string, candidates: Iterable<string>, maxDistance = 3): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const distance = editDistance(name, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= maxDistance ? best : undefined;
}

/** " (did you mean X?)" for a near candidate, or "". */
export function didYouMean(name: string, candidates: Iterable<string>, maxDistance = 3): string {
  const best = closestName(name, candidates, maxDistance);
  return best === undefined ? '' : ` (did you mean ${best}?)`;
}
