/**
 * Proactive negotiation (RFC 9110 §12.5.1): the offered media type the client rates highest, the
 * most specific matching range deciding each type's quality; ties go to the first offered.
 * Undefined when the client accepts none of them.
 */
export function negotiate<T extends string>(
  accept: string | undefined,
  offered: readonly T[],
): T | undefined {
  if (accept === undefined || accept.trim() === '') return offered[0];
  const ranges = accept.split(',').flatMap((part) => {
    const [range = '', ...params] = part.split(';').map((piece) => piece.trim().toLowerCase());
    if (!/^[\w.+-]+\/[\w.+*-]+$/.test(range) && range !== '*/*') return [];
    let q = 1;
    for (const param of params) {
      const match = /^q=([01](?:\.\d{0,3})?)$/.exec(param);
      if (match?.[1] !== undefined) q = Number(match[1]);
    }
    return [{ range, q }];
  });
  let best: { type: T; q: number } | undefined;
  for (const type of offered) {
    const [major] = type.split('/');
    const specificity = (range: string) =>
      range === type ? 3 : range === `${major}/*` ? 2 : range === '*/*' ? 1 : 0;
    let chosen: { q: number; specificity: number } | undefined;
    for (const { range, q } of ranges) {
      const s = specificity(range);
      if (s > 0 && (chosen === undefined || s > chosen.specificity)) chosen = { q, specificity: s };
    }
    const q = chosen?.q ?? 0;
    if (q > 0 && (best === undefined || q > best.q)) best = { type, q };
  }
  return best?.type;
}
