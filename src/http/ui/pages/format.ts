/** A time for people: "2025-05-03 14:05 UTC", in a <time> element's datetime form too. */
export function formatTime(epochSeconds: number): { text: string; iso: string } {
  const iso = new Date(epochSeconds * 1000).toISOString();
  return { text: `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`, iso };
}
