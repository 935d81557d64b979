/** A time for people: "2025-05-03 14:05 UTC", in a <time> element's datetime form too. */
export function formatTime(epochSeconds: number): { text: string; iso: string } {
  const iso = new Date(epochSeconds * 1000).toISOString();
  return { text: `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`, iso };
}

/** How long to wait, for people: "45 seconds", "1 minute", "15 minutes" (whole minutes, rounded up). */
export function formatWait(seconds: number): string {
  const whole = Math.max(1, Math.ceil(seconds));
  if (whole < 60) return whole === 1 ? '1 second' : `${whole} seconds`;
  const minutes = Math.ceil(whole / 60);
  return minutes === 1 ? '1 minute' : `${minutes} minutes`;
}

/**
 * Whether a scope's description already names the scope (it is the name, or quotes it as the default
 * description of a scope first named by a client does), so a page need not show the name beside it.
 */
export function descriptionNamesScope(description: string, name: string): boolean {
  return description === name || description.includes(`“${name}”`);
}
