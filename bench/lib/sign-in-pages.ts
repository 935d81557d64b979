import type { Exchange, FlowClient } from './flow-load.js';

/** What the benchmarks' browsers send their forms as. */
export const FORM = 'application/x-www-form-urlencoded';

export const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

/** The cookies a response sets, as name=value, merged over `jar` (a browser's cookies of one site). */
export function withCookies(jar: Map<string, string>, exchange: Exchange): Map<string, string> {
  for (const line of exchange.setCookie) {
    const pair = line.split(';', 1)[0]!;
    const eq = pair.indexOf('=');
    jar.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
  return jar;
}

/** A jar's cookies as a Cookie header. */
export const cookieHeader = (jar: Map<string, string>) =>
  [...jar].map(([name, value]) => `${name}=${value}`).join('; ');

/** The browser cookie (`__Host-gatehouse`, name=value) an answer sets, else the one the browser had. */
export function cookieOf(exchange: Exchange, previous: string | undefined): string | undefined {
  const first = exchange.setCookie.find((cookie) => cookie.startsWith('__Host-gatehouse='));
  return first === undefined ? previous : first.split(';', 1)[0];
}

/** The value of a hidden input on a page (the first of that name), unescaped as a browser would. */
export function hidden(page: Exchange, name: string): string {
  const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(page.body);
  if (match?.[1] === undefined) throw new Error(`page (${page.status}) has no hidden field ${name}`);
  return match[1]
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'");
}

/**
 * A fresh browser signs in with a password through the pages (GET /sign-in, POST /sign-in, 303 to
 * `next`); its browser cookie (name=value) after the sign-in.
 */
export async function signInWithPassword(
  http: FlowClient,
  user: { username: string; password: string },
  next: string,
): Promise<string> {
  const signInPage = await http.send('GET', `/sign-in?next=${encodeURIComponent(next)}`, {});
  const cookie = cookieOf(signInPage, undefined);
  if (cookie === undefined) throw new Error('GET /sign-in set no cookie');
  const signedIn = await http.send(
    'POST',
    '/sign-in',
    { cookie, 'content-type': FORM },
    form({
      csrf_token: hidden(signInPage, 'csrf_token'),
      username: user.username,
      password: user.password,
      next,
    }),
  );
  if (signedIn.status !== 303) throw new Error(`POST /sign-in answered ${signedIn.status}`);
  return cookieOf(signedIn, cookie)!;
}
