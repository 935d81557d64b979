/**
 * The syntax Gatehouse asks of the URIs it stores and compares (redirect URIs, resource indicators) and
 * this library of the resource identifier it publishes: pure, no framework, no storage. The one copy,
 * which the server's core imports as `gatehouse-oauth-resource-server/uri-syntax` (docs/decisions.md,
 * decision 26).
 */

/** The hosts plain `http` is allowed on, for development (RFC 8252 §7.3; the same for resources). */
const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The longest URI stored: a redirect URI or a resource indicator. */
export const MAX_URI_LENGTH = 2000;

/** Whether a URL's host (as WHATWG `URL.hostname` gives it) is a loopback host. */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname);
}

/**
 * Whether `value` has spaces or control characters, which a URL parser silently removes or encodes:
 * what was checked would not be what was sent.
 */
export function hasSpaceOrControl(value: string): boolean {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  return /[\u0000-\u0020\u007f]/.test(value);
}

export type ParsedUri = { url: URL; problem?: undefined } | { url?: undefined; problem: string };

/**
 * `value` parsed as an absolute URI to store and compare, or why it cannot be one: at most
 * MAX_URI_LENGTH characters, no fragment (RFC 6749 §3.1.2, RFC 8707 §2), no backslash (a browser reads
 * it as a slash: RFC 9700 §4.1.1), no spaces or control characters.
 */
export function parseStoredUri(value: string): ParsedUri {
  if (value.length > MAX_URI_LENGTH) return { problem: `is longer than ${MAX_URI_LENGTH} characters` };
  if (value.includes('#')) return { problem: 'must not contain a fragment' };
  if (value.includes('\\')) return { problem: 'must not contain a backslash' };
  if (hasSpaceOrControl(value)) return { problem: 'must not contain spaces or control characters' };
  try {
    return { url: new URL(value) };
  } catch {
    return { problem: 'is not an absolute URI' };
  }
}

/**
 * Why the http(s) URI `value` (parsed as `url`) may not be stored, or undefined: it must be written
 * with the `//` authority (`https:evil.example/cb` is silently completed by a parser), without user
 * information (RFC 3986 §3.2.1; RFC 9700 §4.1.1 warns of exactly this confusion), with a host, and
 * over https unless its host is a loopback host.
 */
export function httpUriProblem(value: string, url: URL): string | undefined {
  const scheme = url.protocol.slice(0, -1);
  if (!new RegExp(`^${scheme}://`, 'i').test(value)) {
    return `must start with ${scheme}:// (an authority is required)`;
  }
  const authority = value.slice(scheme.length + 3).split(/[/?]/, 1)[0] ?? '';
  if (authority.includes('@')) return 'must not contain user information (user@)';
  if (authority === '' || url.hostname === '') return 'has no host';
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    return 'must use https (http only on loopback hosts)';
  }
  return undefined;
}

/**
 * The form Gatehouse gives a resource URI, and so the `aud` of the tokens it issues for it: the WHATWG
 * URL serialisation (lower-case scheme and host, default port dropped, dot segments resolved) less the
 * "/" it adds to a bare origin, since `https://api.example/` and `https://api.example` name one
 * resource (RFC 3986 §6.2.3). Publishing this form makes clients ask for exactly what `aud` will say.
 */
export function canonicalResource(url: URL): string {
  return url.pathname === '/' && url.search === '' ? url.href.slice(0, -1) : url.href;
}
